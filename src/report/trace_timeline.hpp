// The run's trace (Chrome Trace Event JSON) drawn as the HTML report's SVG timeline: a lane per
// thread, nested spans stacked in rows, the failure in red, counters as line charts. Bounded
// whatever the trace holds: lanes, rows, counters and rectangles are capped, spans too narrow
// to see are merged, tooltips are cut.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace preflight::report {

inline constexpr std::size_t kMaxTimelineRects = 20000;
inline constexpr double kMinSpanWidth = 0.2;  // px at the full width; narrower spans are merged

// The timeline's HTML: <svg id="timeline"> with its captions, or a paragraph saying there is
// nothing to draw. `trace` is {"traceEvents": [...], "otherData": {...}}, an array of events, or null.
std::string trace_timeline_html(const nlohmann::json& trace);

}  // namespace preflight::report
