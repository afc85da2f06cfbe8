#include "report/trace_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/events.hpp"
#include "report/html_text.hpp"
#include "report/trace_spans.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

using nlohmann::json;

constexpr double kLabelWidth = 200;  // the lane labels' column, left of the plot
constexpr double kPlotWidth = 1240;  // the plot in viewBox units: px at the full width
constexpr double kRightMargin = 20;  // room for the last tick's label
constexpr double kScaleHeight = 28;
constexpr double kRowHeight = 16;  // a row of spans: 13 drawn, a gap
constexpr double kSpanHeight = 13;
constexpr double kLanePadding = 4;
constexpr double kCounterHeight = 44;
constexpr std::size_t kMaxFailureSpans = 100;  // drawn one by one, never merged
constexpr double kFailureWidth = 3;            // the least width of a failure span, an instant often
constexpr std::size_t kMaxCallouts = 5;
constexpr std::size_t kTooltipBudget = 2u << 20;  // bytes; past it a tooltip is name and duration
constexpr std::size_t kMaxArgs = 8;

// Zoom buttons, hidden until the page's script shows them: without a script the page is whole.
constexpr const char* kZoomTools =
    "<div class=\"tl-tools\" hidden>"
    "<button type=\"button\" data-zoom=\"in\">+</button>"
    "<button type=\"button\" data-zoom=\"out\">−</button>"
    "<button type=\"button\" data-zoom=\"left\">◀</button>"
    "<button type=\"button\" data-zoom=\"right\">▶</button>"
    "<button type=\"button\" data-zoom=\"reset\">reset</button>"
    "<span>wheel to zoom, drag to pan</span></div>\n";

const std::set<std::string> kKnownCategories = {"stage",     "failure",    "data",  "forward", "backward",
                                                "optimizer", "checkpoint", "layer", "step"};

// A rectangle of the plot: one span, or a run of spans too narrow to see, merged.
struct Piece {
  double x = 0, width = 0;
  std::size_t lane = 0;
  int row = 0;
  const TraceSpan* span = nullptr;  // null for a merged run
  std::size_t merged = 0;
};

// The rectangles at a merging threshold (px): spans narrower than it, in runs no further apart
// than it, become one grey piece per lane and row; a wider span ends the run. Failure spans are
// never merged (up to kMaxFailureSpans).
std::vector<Piece> pieces_at(const TraceSpans& trace, double threshold, double scale) {
  std::vector<Piece> pieces;
  std::size_t failures = 0;
  const auto flush = [&pieces](std::optional<Piece>& run) {
    if (!run) return;
    if (run->merged == 1) run->width = std::max(run->width, kMinSpanWidth);
    if (run->merged == 1) run->merged = 0;  // a lone span is drawn as itself
    pieces.push_back(*run);
    run.reset();
  };
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    const TraceLane& lane = trace.lanes[l];
    std::vector<std::optional<Piece>> runs(static_cast<std::size_t>(lane.rows));
    for (const TraceSpan& span : lane.spans) {
      const double x = (span.start - trace.start) * scale, width = span.duration * scale;
      auto& run = runs[static_cast<std::size_t>(span.row)];
      const bool failure = span.cat == "failure" && failures < kMaxFailureSpans;
      if (failure || width >= threshold) {
        flush(run);
        failures += failure;
        pieces.push_back({x, failure ? std::max(width, kFailureWidth) : width, l, span.row, &span, 0});
      } else if (run && x - (run->x + run->width) <= threshold) {
        run->width = std::max(run->width, x + width - run->x);
        ++run->merged;
        run->span = nullptr;
      } else {
        flush(run);
        run = Piece{x, width, l, span.row, &span, 1};
      }
    }
    for (auto& run : runs) flush(run);
  }
  return pieces;
}

// Seconds between ticks: 1, 2 or 5 times a power of ten, about ten ticks over `range`.
double tick_step(double range) {
  const double raw = range / 10;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

std::string tick_label(double seconds, double step) {
  if (step < 0.001) return fmt::format("{:.6g} ms", seconds * 1000);
  return fmt::format("{:.6g} s", seconds);
}

std::string tooltip(const TraceSpan& span, std::size_t& budget) {
  std::string text = fmt::format("{} — {:.3f} ms ({})", span.name, span.duration / 1000, span.cat);
  if (span.args && budget > 0) {
    std::size_t n = 0;
    for (const auto& [key, value] : span.args->items()) {
      if (n++ == kMaxArgs) {
        text += "\n…";
        break;
      }
      text += "\n" + cut_text(key, 40) + "=" + shown_value(value, kMaxTraceText);
    }
  }
  budget -= std::min(budget, text.size());
  return html_escape(text);
}

struct Layout {
  std::vector<double> lane_tops;
  double counters_top = 0;
  double height = 0;
};

Layout layout_of(const TraceSpans& trace) {
  Layout layout;
  double y = kScaleHeight;
  for (const TraceLane& lane : trace.lanes) {
    layout.lane_tops.push_back(y);
    y += lane.rows * kRowHeight + 2 * kLanePadding;
  }
  layout.counters_top = y + (trace.counters.empty() ? 0 : 6);
  layout.height = layout.counters_top + trace.counters.size() * kCounterHeight + 2;
  return layout;
}

void draw_scale(const TraceSpans& trace, const Layout& layout, std::string& ticks, std::string& grid) {
  const double step = tick_step((trace.end - trace.start) / 1e6);
  const auto first = static_cast<long long>(std::ceil(trace.start / 1e6 / step));
  for (long long k = first; k * step <= trace.end / 1e6 + step * 1e-9 && k - first <= 40; ++k) {
    const double t = static_cast<double>(k) * step;
    const double x = (t * 1e6 - trace.start) / (trace.end - trace.start) * kPlotWidth;
    ticks += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"14\">{}</text>", kLabelWidth + x,
                         html_escape(tick_label(t, step)));
    grid += fmt::format("<line class=\"grid\" x1=\"{0:.3f}\" x2=\"{0:.3f}\" y1=\"{1}\" y2=\"{2:.0f}\"/>", x,
                        kScaleHeight - 6, layout.height);
  }
}

std::string draw_counter(const TraceCounter& counter, double top, const TraceSpans& trace, double scale,
                         std::string& labels) {
  double low = counter.points.front().second, high = low;
  for (const auto& point : counter.points) {
    low = std::min(low, point.second);
    high = std::max(high, point.second);
  }
  labels += fmt::format(
      "<text class=\"counter-label\" x=\"8\" y=\"{:.0f}\">{}<tspan x=\"8\" dy=\"14\">max "
      "{:.4g}</tspan></text>",
      top + 16, html_escape(cut_text(counter.label, 28)), high);
  const double height = kCounterHeight - 10, bottom = top + kCounterHeight - 4;
  const double span = high > low ? high - low : 1;
  // A step line, at most two points (lowest and highest) per half pixel.
  std::string points;
  double previous_y = bottom;
  for (std::size_t i = 0; i < counter.points.size();) {
    const double x = (counter.points[i].first - trace.start) * scale;
    const long bucket = std::lround(x * 2);
    double bucket_low = counter.points[i].second, bucket_high = bucket_low, bucket_last = bucket_low;
    for (; i < counter.points.size() &&
           std::lround((counter.points[i].first - trace.start) * scale * 2) == bucket;
         ++i) {
      bucket_low = std::min(bucket_low, counter.points[i].second);
      bucket_high = std::max(bucket_high, counter.points[i].second);
      bucket_last = counter.points[i].second;
    }
    const auto y_of = [&](double value) { return bottom - (value - low) / span * height; };
    points += fmt::format("{:.2f},{:.1f} ", x, points.empty() ? y_of(bucket_low) : previous_y);
    if (bucket_high > bucket_low)
      points += fmt::format("{0:.2f},{1:.1f} {0:.2f},{2:.1f} ", x, y_of(bucket_low), y_of(bucket_high));
    points += fmt::format("{:.2f},{:.1f} ", x, y_of(bucket_last));
    previous_y = y_of(bucket_last);
  }
  points += fmt::format("{:.2f},{:.1f}", kPlotWidth, previous_y);
  return fmt::format(
      "<line class=\"counter-base\" x1=\"0\" x2=\"{}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>"
      "<polyline class=\"counter\" points=\"{}\"><title>{}</title></polyline>\n",
      kPlotWidth, bottom, bottom, points, html_escape(counter.label));
}

// The spans, and a red line down the whole plot at each failure.
std::string draw_spans(const std::vector<Piece>& pieces, const Layout& layout) {
  std::string marks, out;
  std::size_t budget = kTooltipBudget;
  for (const Piece& piece : pieces) {
    const double y = layout.lane_tops[piece.lane] + kLanePadding + piece.row * kRowHeight;
    if (piece.span == nullptr) {
      out += fmt::format(
          "<rect class=\"s-merged\" data-cat=\"merged\" x=\"{:.3f}\" y=\"{:.0f}\" width=\"{:.3f}\" "
          "height=\"{}\"><title>{} small spans</title></rect>\n",
          piece.x, y, piece.width, kSpanHeight, grouped(static_cast<long long>(piece.merged)));
      continue;
    }
    const std::string& cat = piece.span->cat;
    if (cat == "failure")
      marks += fmt::format(
          "<line class=\"failure-mark\" x1=\"{0:.3f}\" x2=\"{0:.3f}\" y1=\"{1}\" y2=\"{2:.0f}\"/>\n",
          piece.x + piece.width / 2, kScaleHeight - 6, layout.height);
    // The job's stages one after the other, split by a gap, every other one lighter
    // (html_assets.hpp's .st-*).
    const bool stage = cat == "stage" && std::ranges::find(harness::kStageNames, piece.span->name) !=
                                             std::end(harness::kStageNames);
    out += fmt::format(
        "<rect class=\"s-{}{}\" data-cat=\"{}\" x=\"{:.3f}\" y=\"{:.0f}\" width=\"{:.3f}\" height=\"{}\">"
        "<title>{}</title></rect>\n",
        kKnownCategories.count(cat) != 0 ? cat : "other", stage ? " st-" + piece.span->name : "",
        html_escape(cat), piece.x, y, piece.width, kSpanHeight, tooltip(*piece.span, budget));
  }
  return marks + out;
}

std::string draw_lanes(const TraceSpans& trace, const Layout& layout, std::string& labels) {
  std::string out;
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    const TraceLane& lane = trace.lanes[l];
    const double top = layout.lane_tops[l];
    out += fmt::format("<rect class=\"lane{}\" x=\"0\" y=\"{:.0f}\" width=\"{}\" height=\"{:.0f}\"/>\n",
                       l % 2 ? " odd" : "", top, kPlotWidth, lane.rows * kRowHeight + 2 * kLanePadding);
    labels +=
        fmt::format("<text class=\"lane-label\" x=\"8\" y=\"{:.0f}\">{}<title>{}</title></text>\n",
                    top + kLanePadding + 11, html_escape(cut_text(lane.label, 28)), html_escape(lane.label));
  }
  return out;
}

// "1 lane", "13,132 spans".
std::string counted(std::size_t n, const char* noun) {
  return fmt::format("{} {}{}", grouped(static_cast<long long>(n)), noun, n == 1 ? "" : "s");
}

std::string dropped_caption(long long dropped) {
  if (dropped <= 0) return "";
  return fmt::format("<p class=\"caption\">{} trace events were dropped (bound of 5 MB).</p>\n",
                     grouped(dropped));
}

// The failure spans, said in words: name, time, lane and args.
std::string failure_callouts(const TraceSpans& trace) {
  std::string out;
  std::size_t failures = 0;
  for (const TraceLane& lane : trace.lanes) {
    for (const TraceSpan& span : lane.spans) {
      if (span.cat != "failure" || failures++ >= kMaxCallouts) continue;
      std::string args;
      std::size_t n = 0;
      if (span.args)
        for (const auto& [key, value] : span.args->items())
          if (n++ < kMaxArgs)
            args += (args.empty() ? "" : ", ") + cut_text(key, 40) + "=" + shown_value(value, kMaxTraceText);
      std::string_view name = span.name;  // Preflight's own span says "failure: CATEGORY"
      if (name.starts_with("failure: ")) name.remove_prefix(std::string_view("failure: ").size());
      out += fmt::format("<p class=\"callout failure\"><strong>The failure:</strong> {} at {} in {}{}</p>\n",
                         html_escape(name), html_escape(human_duration(span.start / 1e6)),
                         html_escape(lane.label), args.empty() ? "" : " — " + html_escape(args));
    }
  }
  if (failures > kMaxCallouts)
    out += "<p class=\"callout failure\">and " + counted(failures - kMaxCallouts, "more failure span") +
           "</p>\n";
  return out;
}

// What the picture holds, and what was merged or left out of it.
std::string trace_captions(const TraceSpans& trace, const std::vector<Piece>& pieces, double threshold) {
  std::size_t spans = 0, merged = 0, blocks = 0;
  for (const TraceLane& lane : trace.lanes) spans += lane.spans.size();
  for (const Piece& piece : pieces) {
    merged += piece.merged;
    blocks += piece.merged > 0;
  }
  std::vector<std::string> notes = {
      fmt::format("{} in {} over {}{}", counted(spans, "span"), counted(trace.lanes.size(), "lane"),
                  human_duration((trace.end - trace.start) / 1e6),
                  trace.counters.empty() ? "" : "; " + counted(trace.counters.size(), "counter"))};
  if (merged > 0)
    notes.push_back(
        fmt::format("{} narrower than {:g} px at the full width are merged into {} "
                    "(\"N small spans\")",
                    counted(merged, "span"), threshold, counted(blocks, "grey block")));
  if (trace.spans_too_deep > 0)
    notes.push_back(fmt::format("{} nested deeper than {} levels are drawn on the last row",
                                counted(trace.spans_too_deep, "span"), kMaxTraceRows));
  if (trace.lanes_left_out > 0) notes.push_back(counted(trace.lanes_left_out, "more lane") + " not drawn");
  if (trace.counters_left_out > 0)
    notes.push_back(counted(trace.counters_left_out, "more counter") + " not drawn");
  std::string out;
  for (const auto& note : notes) out += "<p class=\"caption\">" + html_escape(note) + ".</p>\n";
  return out + dropped_caption(trace.dropped);
}

}  // namespace

std::string trace_timeline_html(const json& document) {
  if (document.is_null()) return "<p class=\"empty\">No trace was recorded for this run.</p>\n";
  TraceSpans trace = read_trace_spans(document);
  if (trace.lanes.empty() && trace.counters.empty())
    return "<p class=\"empty\">The trace holds no spans or counters to draw.</p>\n" +
           dropped_caption(trace.dropped);
  const double scale = kPlotWidth / (trace.end - trace.start);
  // Merging wider spans until the picture fits its bound: at the plot's width every row is one block.
  double threshold = kMinSpanWidth;
  std::vector<Piece> pieces = pieces_at(trace, threshold, scale);
  while (pieces.size() > kMaxTimelineRects && threshold < kPlotWidth) {
    threshold *= 2;
    pieces = pieces_at(trace, threshold, scale);
  }
  const Layout layout = layout_of(trace);
  std::string ticks, grid, labels, counters;
  draw_scale(trace, layout, ticks, grid);
  const std::string lanes = draw_lanes(trace, layout, labels);
  for (std::size_t c = 0; c < trace.counters.size(); ++c)
    counters +=
        draw_counter(trace.counters[c], layout.counters_top + c * kCounterHeight, trace, scale, labels);
  // The plot is an SVG of its own: zooming changes its viewBox alone, the labels stay put.
  std::string out = kZoomTools;
  out += fmt::format(
      "<div class=\"tl-frame\"><svg id=\"timeline\" viewBox=\"0 0 {0} {1:.0f}\" width=\"{0}\" "
      "height=\"{1:.0f}\" "
      "role=\"img\" aria-label=\"trace timeline\" data-plot-x=\"{2}\" data-plot-width=\"{3}\" "
      "data-start-us=\"{4:.3f}\" data-end-us=\"{5:.3f}\">\n",
      kLabelWidth + kPlotWidth + kRightMargin, layout.height, kLabelWidth, kPlotWidth, trace.start,
      trace.end);
  out += "<g id=\"tl-scale\">" + ticks + "</g>\n<g class=\"tl-labels\">\n" + labels + "</g>\n";
  out += fmt::format(
      "<svg id=\"tl-plot\" x=\"{0}\" y=\"0\" width=\"{1}\" height=\"{2:.0f}\" viewBox=\"0 0 {1} {2:.0f}\" "
      "preserveAspectRatio=\"none\">\n",
      kLabelWidth, kPlotWidth, layout.height);
  out += "<g class=\"tl-lanes\">\n" + lanes + "</g>\n<g id=\"tl-grid\">" + grid + "</g>\n";
  out += "<g class=\"tl-spans\">\n" + draw_spans(pieces, layout) + "</g>\n";
  out += "<g class=\"tl-counters\">\n" + counters + "</g>\n</svg>\n</svg></div>\n";
  out += "<div class=\"tl-captions\">\n" + failure_callouts(trace) +
         trace_captions(trace, pieces, threshold) + "</div>\n";
  return out;
}

}  // namespace preflight::report
