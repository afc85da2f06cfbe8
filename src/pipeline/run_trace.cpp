#include "pipeline/run_trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "util/gzip.hpp"

namespace preflight::pipeline {

namespace {

using harness::TraceRecord;
using nlohmann::json;

constexpr std::int64_t kStagesTid = 1;
constexpr std::size_t kMaxMessage = 500;
constexpr int kShrinkRounds = 12;

std::int64_t micros(double seconds) { return std::llround(seconds * 1e6); }

// A stage of the job's timeline, in microseconds since the container started.
struct StageSpan {
  std::string stage;
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The job's stages one after the other: the setup step, then each process of its timeline
// from one transition to the next, as stage_results counts their seconds.
std::vector<StageSpan> stage_spans(const TraceSources& sources) {
  std::vector<StageSpan> spans;
  if (sources.had_setup) spans.push_back({"setup", 0, micros(sources.setup_seconds)});
  const auto timeline = harness::timeline_processes(*sources.events);
  for (const harness::ProcessRun* process : timeline) {
    if (process->started <= 0) continue;
    const double base = process->started - sources.started;
    std::string current = "init";  // the harness starts every command process in init
    double since = 0;
    for (const auto& stage : sources.events->stages) {
      if (stage.pid != process->pid) continue;
      spans.push_back({current, micros(base + since), micros(base + stage.t)});
      current = stage.stage, since = stage.t;
    }
    std::int64_t end = micros(base + process->exited.value_or(since));
    if (process == timeline.back()) end = std::max(end, micros(sources.total_seconds));
    spans.push_back({current, micros(base + since), end});
  }
  // One after the other, none before the container started, none empty.
  std::vector<StageSpan> ordered;
  std::int64_t last = 0;
  for (StageSpan& span : spans) {
    span.begin = std::max(span.begin, last);
    span.end = std::max(span.end, span.begin);
    if (span.end == span.begin) continue;
    last = span.end;
    ordered.push_back(std::move(span));
  }
  return ordered;
}

const model::Finding* dry_run_failure(const report::Report& report) {
  for (const auto& finding : report.findings)
    if (finding.severity == model::Severity::Error && finding.phase == model::Phase::Dryrun) return &finding;
  return nullptr;
}

// When the failure struck: the first exception of the job's main process, else the run's end.
std::int64_t failure_time(const TraceSources& sources, std::int64_t fallback) {
  const harness::HarnessEvents& events = *sources.events;
  const auto* exception = harness::main_or_first(events.exceptions, events.main_pid);
  if (exception == nullptr) return fallback;
  const auto wall = events.wall_time(exception->pid, exception->t);
  return wall ? micros(*wall - sources.started) : fallback;
}

json span_event(std::string name, const char* category, std::int64_t begin, std::int64_t end, int pid,
                std::int64_t tid, json args) {
  return {{"ph", "X"},   {"name", std::move(name)}, {"cat", category},
          {"ts", begin}, {"dur", end - begin},      {"pid", pid},
          {"tid", tid},  {"args", std::move(args)}};
}

json name_event(const char* kind, int pid, std::int64_t tid, json args) {
  return {{"ph", "M"}, {"name", kind}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// The job's own tracks: its stages and, inside the stage that failed, its failure.
std::vector<json> job_track(const TraceSources& sources, const report::Report& report) {
  std::vector<json> out;
  out.push_back(name_event("process_name", kJobTrackPid, 0, {{"name", "job " + report.job_name}}));
  out.push_back(name_event("process_sort_index", kJobTrackPid, 0, {{"sort_index", -1}}));
  out.push_back(name_event("thread_name", kJobTrackPid, kStagesTid, {{"name", "stages"}}));
  auto spans = stage_spans(sources);
  const model::Finding* failure = dry_run_failure(report);
  std::optional<std::size_t> failed_span;
  std::int64_t struck = 0;
  if (failure != nullptr) {
    const std::int64_t end = spans.empty() ? micros(sources.total_seconds) : spans.back().end;
    struck = failure_time(sources, end);
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].stage != failure->stage) continue;
      if (!failed_span || spans[i].begin <= struck) failed_span = i;
    }
    if (!failed_span && !spans.empty()) failed_span = spans.size() - 1;
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    json args = {{"stage", spans[i].stage}};
    if (failed_span == i) args["failed"] = failure->category;
    out.push_back(span_event(spans[i].stage, "stage", spans[i].begin, spans[i].end, kJobTrackPid, kStagesTid,
                             std::move(args)));
  }
  if (failure != nullptr) {
    std::int64_t begin = 0, end = std::max<std::int64_t>(micros(sources.total_seconds), 0);
    if (failed_span) {
      end = spans[*failed_span].end;
      begin = std::clamp(struck, spans[*failed_span].begin, end);
      if (begin == end) begin = std::max(spans[*failed_span].begin, end - 1);  // a span has a length
    }
    json args = {{"category", failure->category},
                 {"rule", failure->rule},
                 {"stage", failure->stage},
                 {"message", failure->message.substr(0, kMaxMessage)}};
    if (failure->location.known()) args["location"] = failure->location.str();
    out.push_back(span_event("failure: " + failure->category, "failure", begin, end, kJobTrackPid, kStagesTid,
                             std::move(args)));
  }
  return out;
}

json record_event(const TraceRecord& record, std::int64_t origin) {
  json event = {{"ph", std::string(1, record.phase)},
                {"name", record.name},
                {"pid", record.pid},
                {"tid", record.tid},
                {"args", record.args}};
  if (!record.category.empty()) event["cat"] = record.category;
  if (record.phase == 'M') return event;
  event["ts"] = std::max<std::int64_t>(record.ts - origin, 0);
  if (record.phase == 'X') event["dur"] = record.dur;
  if (record.phase == 'i') event["s"] = "t";
  return event;
}

// Spans of one thread must nest: one that outlasts the span it starts in is cut at its end.
void nest_spans(std::vector<json>& events) {
  std::map<std::pair<int, std::int64_t>, std::vector<json*>> threads;
  for (json& event : events)
    if (event["ph"] == "X")
      threads[{event["pid"].get<int>(), event["tid"].get<std::int64_t>()}].push_back(&event);
  for (auto& [thread, spans] : threads) {
    std::stable_sort(spans.begin(), spans.end(), [](const json* a, const json* b) {
      const auto a_ts = (*a)["ts"].get<std::int64_t>(), b_ts = (*b)["ts"].get<std::int64_t>();
      return a_ts != b_ts ? a_ts < b_ts : (*a)["dur"].get<std::int64_t>() > (*b)["dur"].get<std::int64_t>();
    });
    std::vector<std::int64_t> open_ends;
    for (json* span : spans) {
      const std::int64_t ts = (*span)["ts"].get<std::int64_t>();
      std::int64_t end = ts + (*span)["dur"].get<std::int64_t>();
      while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) {
        end = open_ends.back();
        (*span)["dur"] = end - ts;
      }
      open_ends.push_back(end);
    }
  }
}

bool always_kept(const json& event) {
  if (event["ph"] == "M" || event["pid"] == kJobTrackPid) return true;
  const auto category = event.value("cat", std::string());
  return category == "checkpoint" ||
         (category == "step" && event.value("name", std::string()) == "measured step");
}

}  // namespace

RunTrace make_trace(TraceSources sources, const report::Report& report, std::size_t max_gzip_bytes) {
  RunTrace trace;
  std::int64_t origin = micros(sources.started);
  if (sources.started <= 0) {
    origin = std::numeric_limits<std::int64_t>::max();
    for (const auto& record : sources.harness.records)
      if (record.phase != 'M') origin = std::min(origin, record.ts);
    if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;
    sources.started = static_cast<double>(origin) / 1e6;
  }
  std::vector<json> kept = job_track(sources, report);
  std::vector<json> droppable;
  std::set<int> named;
  std::set<int> seen;
  for (const auto& record : sources.harness.records) {
    // A span shorter than the clock's microsecond says nothing, and viewers order an empty
    // span that starts with another one differently (speedscope closes it before it opens).
    if (record.phase == 'X' && record.dur == 0) continue;
    json event = record_event(record, origin);
    seen.insert(record.pid);
    if (record.phase == 'M' && record.name == "process_name") named.insert(record.pid);
    (always_kept(event) ? kept : droppable).push_back(std::move(event));
  }
  for (int pid : seen)
    if (!named.contains(pid))
      kept.push_back(
          name_event("process_name", pid, 0, {{"name", "python (pid " + std::to_string(pid) + ")"}}));
  nest_spans(kept);
  nest_spans(droppable);
  std::stable_sort(droppable.begin(), droppable.end(), [](const json& a, const json& b) {
    return a["ts"].get<std::int64_t>() < b["ts"].get<std::int64_t>();
  });

  // The latest events go first when the file would pass its bound.
  std::size_t keep = droppable.size();
  for (int round = 0;; ++round) {
    json events = json::array();
    for (const json& event : kept) events.push_back(event);
    for (std::size_t i = 0; i < keep; ++i) events.push_back(droppable[i]);
    trace.left_out = sources.harness.dropped + (droppable.size() - keep);
    trace.json = {{"traceEvents", std::move(events)},
                  {"displayTimeUnit", "ms"},
                  {"otherData",
                   {{"preflight",
                     {{"job", report.job_name},
                      {"platform", report.platform},
                      {"verdict", report.verdict},
                      {"started", sources.started},
                      {"left_out", trace.left_out}}}}}};
    trace.gzip = gzip(trace.json.dump(-1, ' ', false, json::error_handler_t::replace));
    if (trace.gzip.size() <= max_gzip_bytes || keep == 0) break;
    const double scale = 0.9 * static_cast<double>(max_gzip_bytes) / static_cast<double>(trace.gzip.size());
    keep = round + 1 >= kShrinkRounds ? 0 : static_cast<std::size_t>(static_cast<double>(keep) * scale);
  }
  return trace;
}

}  // namespace preflight::pipeline
