// What the HTML report's timeline draws of a run's trace: the spans of Chrome Trace Event
// JSON ("X" events) by lane (pid, tid) and nesting row, its counters ("C" events), and what
// was left out. The trace is untrusted: a malformed event is skipped, texts are cut, lanes,
// rows and counters are capped.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace preflight::report {

inline constexpr std::size_t kMaxTraceLanes = 64;
inline constexpr int kMaxTraceRows = 24;  // deeper spans share the last row
inline constexpr std::size_t kMaxTraceCounters = 16;
inline constexpr std::size_t kMaxTraceText = 160;  // characters of a name or a value

struct TraceSpan {
  double start = 0;  // µs
  double duration = 0;
  std::string name;
  std::string cat;
  const nlohmann::json* args = nullptr;  // an object of the document read, or null
  int row = 0;                           // the nesting depth, capped at kMaxTraceRows - 1
};

struct TraceLane {
  std::string pid, tid;          // as the trace gives them
  std::string label;             // "train.py · MainThread" from the metadata, else "pid 1 · tid 2"
  std::vector<TraceSpan> spans;  // by start, the longer first
  int rows = 1;
};

struct TraceCounter {
  std::string label;                              // "memory.rss": the counter and its series
  std::vector<std::pair<double, double>> points;  // (µs, value), by time
};

struct TraceSpans {
  std::vector<TraceLane> lanes;
  std::vector<TraceCounter> counters;
  double start = 0, end = 1;  // µs: from 0 (or an earlier event) to the last event's end
  std::size_t lanes_left_out = 0, counters_left_out = 0, spans_too_deep = 0;
  long long dropped = 0;  // otherData.preflight.dropped: events the tracer did not keep
};

// The spans and counters of `document` ({"traceEvents": [...], "otherData": {...}} or an
// array of events); spans point into it, so it must outlive the result.
TraceSpans read_trace_spans(const nlohmann::json& document);

// At most `chars` characters of `text`, "…" marking a cut.
std::string cut_text(std::string_view text, std::size_t chars);
// A value of the trace as text: a string as itself, anything else as JSON; cut at `chars`.
std::string shown_value(const nlohmann::json& value, std::size_t chars);

}  // namespace preflight::report
