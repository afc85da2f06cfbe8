#include "report/trace_spans.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "util/json_fields.hpp"
#include "util/text.hpp"

namespace preflight::report {

using nlohmann::json;

std::string cut_text(std::string_view text, std::size_t chars) {
  std::size_t at = 0;
  for (std::size_t n = 0; at < text.size() && n < chars; ++n)
    at += std::max<std::size_t>(utf8_char_length(text, at), 1);
  return at < text.size() ? std::string(text.substr(0, at)) + "…" : std::string(text);
}

std::string shown_value(const json& value, std::size_t chars) {
  return cut_text(value.is_string() ? value.get_ref<const std::string&>()
                                    : value.dump(-1, ' ', false, json::error_handler_t::replace),
                  chars);
}

namespace {

// The field `key` of `object`, or null.
const json& member(const json& object, const char* key) {
  static const json none;
  if (!object.is_object()) return none;
  const auto it = object.find(key);
  return it == object.end() ? none : *it;
}

std::string id_field(const json& event, const char* key) {
  const auto it = event.find(key);
  return it == event.end() ? std::string() : shown_value(*it, 64);
}

// A time in µs: a number within a century of the run's start, so that sums stay finite.
std::optional<double> time_field(const json& event, const char* key) {
  constexpr double kCentury = 100 * 365.25 * 86400 * 1e6;
  const auto it = event.find(key);
  if (it == event.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  return std::abs(value) <= kCentury ? std::optional(value) : std::nullopt;
}

void add_counter(TraceSpans& trace, std::map<std::string, std::size_t>& index,
                 std::set<std::string>& left_out, const json& event, double ts) {
  const json& args = member(event, "args");
  if (!args.is_object()) return;
  const std::string name = cut_text(json_fields::text(event, "name"), 60);
  for (const auto& [series, value] : args.items()) {
    if (!value.is_number() || !(std::abs(value.get<double>()) < 1e300)) continue;  // differences stay finite
    const std::string label = series == "value" ? name : name + "." + cut_text(series, 40);
    auto it = index.find(label);
    if (it == index.end()) {
      if (trace.counters.size() >= kMaxTraceCounters) {
        left_out.insert(label);
        continue;
      }
      it = index.emplace(label, trace.counters.size()).first;
      trace.counters.push_back({label, {}});
    }
    trace.counters[it->second].points.emplace_back(ts, value.get<double>());
  }
}

// Rows by nesting: a span starts a row below every span still open when it starts.
void stack_rows(TraceLane& lane, TraceSpans& trace) {
  std::stable_sort(lane.spans.begin(), lane.spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return a.start != b.start ? a.start < b.start : a.duration > b.duration;
  });
  std::vector<double> open_ends;
  for (TraceSpan& span : lane.spans) {
    while (!open_ends.empty() && open_ends.back() <= span.start) open_ends.pop_back();
    const int depth = static_cast<int>(std::min<std::size_t>(open_ends.size(), kMaxTraceRows - 1));
    trace.spans_too_deep += open_ends.size() >= kMaxTraceRows;
    span.row = depth;
    lane.rows = std::max(lane.rows, depth + 1);
    open_ends.push_back(span.start + span.duration);
  }
}

}  // namespace

TraceSpans read_trace_spans(const json& document) {
  TraceSpans trace;
  const json& events = document.is_array() ? document : json_fields::list(document, "traceEvents");
  std::map<std::string, std::string> process_names, thread_names;
  std::map<std::string, std::size_t> lane_index, counter_index;
  std::set<std::string> counters_left_out;
  double first = 0, last = 0;
  for (const json& event : events) {
    if (!event.is_object()) continue;
    const std::string ph = json_fields::text(event, "ph");
    const std::string pid = id_field(event, "pid"), tid = id_field(event, "tid");
    if (ph == "M") {
      const std::string name = json_fields::text(event, "name");
      const std::string label = json_fields::text(member(event, "args"), "name");
      if (name == "process_name" && !label.empty()) process_names[pid] = cut_text(label, 60);
      if (name == "thread_name" && !label.empty()) thread_names[pid + "/" + tid] = cut_text(label, 60);
      continue;
    }
    const auto ts = time_field(event, "ts");
    if (!ts) continue;
    if (ph == "C") {
      add_counter(trace, counter_index, counters_left_out, event, *ts);
      first = std::min(first, *ts);
      last = std::max(last, *ts);
      continue;
    }
    const auto dur = time_field(event, "dur");
    if (ph != "X" || !dur || *dur < 0) continue;
    auto [it, added] = lane_index.emplace(pid + "/" + tid, trace.lanes.size());
    if (added) trace.lanes.push_back({pid, tid, "", {}, 1});
    const json& args = member(event, "args");
    trace.lanes[it->second].spans.push_back(
        {*ts, *dur, cut_text(json_fields::text(event, "name"), kMaxTraceText),
         cut_text(json_fields::text(event, "cat"), 40), args.is_object() ? &args : nullptr});
    first = std::min(first, *ts);
    last = std::max(last, *ts + *dur);
  }
  trace.start = first;
  trace.end = std::max(last, first + 1);
  if (trace.lanes.size() > kMaxTraceLanes) {
    trace.lanes_left_out = trace.lanes.size() - kMaxTraceLanes;
    trace.lanes.resize(kMaxTraceLanes);
  }
  for (TraceLane& lane : trace.lanes) {
    const auto process = process_names.find(lane.pid);
    const auto thread = thread_names.find(lane.pid + "/" + lane.tid);
    lane.label = (process != process_names.end() ? process->second : "pid " + lane.pid) + " · " +
                 (thread != thread_names.end() ? thread->second : "tid " + lane.tid);
    stack_rows(lane, trace);
  }
  for (TraceCounter& counter : trace.counters)
    std::stable_sort(counter.points.begin(), counter.points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  trace.counters_left_out = counters_left_out.size();
  const json& preflight = member(member(document, "otherData"), "preflight");
  const double dropped = json_fields::number(preflight, "dropped");
  trace.dropped = dropped >= 1 ? static_cast<long long>(std::min(dropped, 1e15)) : 0;
  return trace;
}

}  // namespace preflight::report
