// Reads the harness's JSON lines (docs/harness.md) into typed records. Lenient by design: the
// job may be killed mid-write, and unknown events or fields from a newer harness are ignored.
#include "harness/events.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/json_fields.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::harness {

namespace {

using json_fields::flag;
using json_fields::integer;
using json_fields::number;
using json_fields::text;
using nlohmann::json;

double seconds(const json& event) { return number(event, "t"); }

std::optional<Frame> frame(const json& value) {
  if (!value.is_object()) return std::nullopt;
  Frame f;
  f.file = text(value, "file");
  f.line = integer(value, "line");
  f.function = text(value, "function");
  f.user = flag(value, "user");
  return f;
}

std::optional<Frame> frame_at(const json& event, const char* key) {
  auto it = event.find(key);
  return it == event.end() ? std::nullopt : frame(*it);
}

ExceptionEvent exception_event(const json& event) {
  ExceptionEvent e;
  e.type = text(event, "type");
  e.message = plain_text(text(event, "message"));  // PyTorch's own messages carry colours
  auto err = event.find("errno");
  if (err != event.end() && err->is_number_integer()) e.errno_value = err->get<int>();
  e.path = text(event, "path");
  e.stage = text(event, "stage");
  e.t = seconds(event);
  e.pid = integer(event, "pid");
  auto frames = event.find("frames");
  if (frames != event.end() && frames->is_array()) {
    for (const auto& value : *frames) {
      if (auto f = frame(value)) e.frames.push_back(std::move(*f));
    }
  }
  return e;
}

ClampEvent clamp_event(const json& event) {
  ClampEvent c;
  c.what = text(event, "what");
  c.kind = text(event, "kind");
  auto original = event.find("original");
  if (original != event.end() && !original->is_null()) c.original = original->dump();
  auto value = event.find("value");
  c.value = value != event.end() ? value->dump() : "null";
  c.where = frame_at(event, "where");
  return c;
}

// A loop the harness ended is listed with the clamps: {"ev":"cut","what":"for loop",
// "kind":"steps","after":2,"original":29|null,"where":{...}}.
ClampEvent cut_event(const json& event) {
  ClampEvent c;
  c.what = text(event, "what");
  c.kind = text(event, "kind");
  auto original = event.find("original");
  if (original != event.end() && original->is_number()) c.original = original->dump();
  auto after = event.find("after");
  c.value = after != event.end() && after->is_number() ? after->dump() : "null";
  c.where = frame_at(event, "where");
  c.cut = true;
  auto last = event.find("last");
  if (last != event.end() && last->is_number_integer()) c.last = last->get<long long>();
  return c;
}

std::optional<int> optional_integer(const json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

std::uint64_t bytes(const json& event, const char* key) {
  auto it = event.find(key);
  return it != event.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

StepMeasure step_measure(const json& event) {
  StepMeasure m;
  m.seconds = number(event, "seconds");
  m.flops = number(event, "flops");
  m.ops = integer(event, "ops");
  m.live_bytes = bytes(event, "live_bytes");
  m.step_bytes = bytes(event, "step_bytes");
  m.replicas = std::max(1, integer(event, "replicas", 1));
  m.batch_size = optional_integer(event, "batch_size");
  m.sampled_batch = optional_integer(event, "sampled_batch");
  m.shape_only = flag(event, "shape_only");
  m.batches_per_epoch = optional_integer(event, "batches_per_epoch");
  m.t = seconds(event);
  m.pid = integer(event, "pid");
  m.where = frame_at(event, "where");
  return m;
}

ShapeOnlyModel shape_only_model(const json& event) {
  ShapeOnlyModel m;
  m.parameters = static_cast<long long>(number(event, "parameters"));
  m.bytes = bytes(event, "bytes");
  m.limit = bytes(event, "limit");
  m.where = frame_at(event, "where");
  m.t = seconds(event);
  m.pid = integer(event, "pid");
  return m;
}

FullSizeCheck full_size_check(const json& event) {
  FullSizeCheck c;
  c.reached = text(event, "reached");
  c.why = plain_text(text(event, "why"));
  c.batch = integer(event, "batch");
  c.sampled = optional_integer(event, "sampled");
  c.where = frame_at(event, "where");
  c.t = seconds(event);
  c.pid = integer(event, "pid");
  auto failure = event.find("exception");
  if (failure != event.end() && failure->is_object()) {
    c.exception = exception_event(*failure);
    c.exception->t = c.t;
    c.exception->pid = c.pid;
    c.shape_only_limit = flag(event, "shape_only");
  }
  auto made_up = event.find("made_up");
  if (made_up != event.end() && made_up->is_array()) {
    for (const auto& value : *made_up) {
      if (!value.is_object() || c.made_up.size() >= 20) continue;
      c.made_up.push_back({plain_text(text(value, "what")), frame_at(value, "where")});
    }
  }
  return c;
}

bool same_clamp(const ClampEvent& a, const ClampEvent& b) {
  const bool same_place =
      !a.cut || (a.where && b.where && a.where->file == b.where->file && a.where->line == b.where->line);
  return a.cut == b.cut && a.what == b.what && a.original == b.original && a.value == b.value && same_place;
}

// The main process: rank 0 of a distributed job (the launcher never trains), else the
// command's first process that trained (`make_corpus.py && train.py`), else its first; a
// setup phase's processes (pip, say) come earlier and are not the job's.
int main_process(const HarnessEvents& events) {
  for (const RankEvent& rank : events.ranks) {
    if (rank.rank == 0) return rank.pid;
  }
  for (const StageEvent& stage : events.stages) {
    if (stage.stage != "train") continue;
    for (const ProcessRun& process : events.processes) {
      if (process.pid == stage.pid && !process.setup) return stage.pid;
    }
  }
  for (const ProcessRun& process : events.processes) {
    if (!process.setup) return process.pid;
  }
  return events.processes.empty() ? -1 : events.processes.front().pid;
}

// [start, end) of a process on the wall clock; a process killed before it exited lasts.
std::pair<double, double> span_of(const ProcessRun& process) {
  return {process.started,
          process.exited ? process.started + *process.exited : std::numeric_limits<double>::infinity()};
}

bool overlap(const ProcessRun& a, const ProcessRun& b) {
  const auto [a_start, a_end] = span_of(a);
  const auto [b_start, b_end] = span_of(b);
  return a_start < b_end && b_start < a_end;
}

}  // namespace

std::optional<double> HarnessEvents::wall_time(int pid, double t) const {
  for (const ProcessRun& process : processes) {
    if (process.pid == pid && process.started > 0) return process.started + t;
  }
  return std::nullopt;
}

std::vector<const ProcessRun*> timeline_processes(const HarnessEvents& events) {
  std::vector<const ProcessRun*> chosen;
  for (const ProcessRun& process : events.processes) {
    if (process.pid == events.main_pid) chosen.push_back(&process);
  }
  if (chosen.empty() || chosen.front()->started <= 0) return chosen;
  for (const ProcessRun& process : events.processes) {
    if (process.setup || process.started <= 0 || process.pid == events.main_pid) continue;
    const bool beside = std::any_of(chosen.begin(), chosen.end(),
                                    [&](const ProcessRun* other) { return overlap(process, *other); });
    if (!beside) chosen.push_back(&process);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const ProcessRun* a, const ProcessRun* b) { return a->started < b->started; });
  return chosen;
}

const Frame* ExceptionEvent::user_frame() const {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (it->user) return &*it;
  }
  return nullptr;
}

SourceLocation location_in_code(const std::optional<Frame>& where, const std::string& code_dir) {
  SourceLocation location;
  if (!where || where->file.empty() || !(where->user || is_under(where->file, code_dir))) return location;
  std::string file = where->file;
  if (is_under(file, code_dir)) file.erase(0, code_dir.size() + (code_dir.back() == '/' ? 0 : 1));
  location.file = file;
  location.line = where->line;
  return location;
}

HarnessEvents parse_events(const std::string& text_in) {
  HarnessEvents out;
  std::istringstream lines(text_in);
  std::string line;
  while (std::getline(lines, line)) {
    json event = json_fields::parse_bounded(line);
    if (!event.is_object()) continue;  // malformed, or cut short by a kill
    const std::string ev = text(event, "ev");
    const int pid = integer(event, "pid");
    if (ev == "start") {
      if (!out.started) out.python_version = text(event, "python");
      out.started = true;
      const bool setup = text(event, "phase") == "setup";
      out.command_started = out.command_started || !setup;
      out.processes.push_back({pid, setup, number(event, "started"), std::nullopt});
    } else if (ev == "stage") {
      StageEvent s;
      s.stage = text(event, "stage");
      s.t = seconds(event);
      s.pid = pid;
      s.why = text(event, "why");
      s.where = frame_at(event, "where");
      if (!s.stage.empty()) out.stages.push_back(std::move(s));
    } else if (ev == "exception") {
      out.exceptions.push_back(exception_event(event));
    } else if (ev == "cap") {
      CapEvent c;
      c.what = text(event, "what");
      c.limit = integer(event, "limit");
      c.where = frame_at(event, "where");
      out.caps.push_back(std::move(c));
    } else if (ev == "clamp" || ev == "cut") {
      ClampEvent c = ev == "cut" ? cut_event(event) : clamp_event(event);
      c.t = seconds(event);
      c.pid = pid;
      const bool seen = std::any_of(out.clamps.begin(), out.clamps.end(),
                                    [&](const ClampEvent& other) { return same_clamp(c, other); });
      if (!c.what.empty() && !seen) out.clamps.push_back(std::move(c));
    } else if (ev == "count") {
      CountEvent c{text(event, "what"), text(event, "kind"), number(event, "value"), frame_at(event, "where"),
                   pid};
      const bool seen = std::any_of(out.counts.begin(), out.counts.end(), [&](const CountEvent& other) {
        return other.what == c.what && other.value == c.value;
      });
      if (!c.what.empty() && c.value > 0 && !seen) out.counts.push_back(std::move(c));
    } else if (ev == "uncut") {
      out.uncut_loops.push_back({text(event, "what"), text(event, "why"), frame_at(event, "where")});
    } else if (ev == "endless") {
      EndlessRun run{integer(event, "after"),
                     integer(event, "quiet"),
                     frame_at(event, "where"),
                     frame_at(event, "loop"),
                     "",
                     pid};
      auto loop = event.find("loop");
      if (loop != event.end() && loop->is_object()) run.loop_what = text(*loop, "what");
      out.endless.push_back(std::move(run));
    } else if (ev == "nonfinite") {
      NonfiniteEvent n;
      n.step = integer(event, "step");
      n.value = text(event, "value");
      n.stage = text(event, "stage");
      n.t = seconds(event);
      n.pid = pid;
      n.where = frame_at(event, "where");
      out.nonfinite.push_back(std::move(n));
    } else if (ev == "step_measure") {
      out.steps.push_back(step_measure(event));
    } else if (ev == "full_size") {
      if (out.full_size.size() < 100) out.full_size.push_back(full_size_check(event));
    } else if (ev == "shape_only") {
      if (out.shape_only.size() < 100) out.shape_only.push_back(shape_only_model(event));
    } else if (ev == "made_up") {
      auto model = std::find_if(out.shape_only.begin(), out.shape_only.end(),
                                [pid](const ShapeOnlyModel& m) { return m.pid == pid; });
      if (model != out.shape_only.end() && model->made_up.size() < 20)
        model->made_up.push_back({plain_text(text(event, "what")), frame_at(event, "where")});
    } else if (ev == "step_parts") {
      out.step_parts.push_back(parse_step_parts(event));
    } else if (ev == "rank") {
      out.ranks.push_back(
          {integer(event, "rank"), integer(event, "world", 1), number(event, "started"), pid});
    } else if (ev == "save") {
      SaveEvent save{text(event, "path"), pid, frame_at(event, "where"), seconds(event)};
      if (!save.path.empty()) out.saves.push_back(std::move(save));
    } else if (ev == "epoch_end") {
      out.epochs.push_back({integer(event, "batches"), seconds(event), pid});
    } else if (ev == "reached") {
      ReachedEvent r{text(event, "file"), integer(event, "line"), text(event, "stage")};
      if (!r.file.empty() && r.line > 0) out.reached.push_back(std::move(r));
    } else if (ev == "entered") {
      EnteredEvent e{text(event, "file"), integer(event, "first"), integer(event, "last"),
                     text(event, "stage")};
      if (!e.file.empty() && e.first > 0 && e.last >= e.first) out.entered.push_back(std::move(e));
    } else if (ev == "exit") {
      auto process = std::find_if(out.processes.rbegin(), out.processes.rend(),
                                  [&](const ProcessRun& p) { return p.pid == pid; });
      if (process != out.processes.rend() && !process->exited) process->exited = seconds(event);
    }
  }
  out.main_pid = main_process(out);
  return out;
}

std::vector<Frame> parse_stack_dump(const std::string& text, const std::string& code_dir) {
  // `  File "/job/code/main.py", line 4 in wait_for_peers`, innermost first; the first stack
  // only (a second signal appends another).
  static const re2::RE2 frame_line(R"re(^  File "(.*)", line (\d+) in (.*)$)re");
  std::vector<Frame> frames;
  std::istringstream lines(text);
  std::string line;
  bool in_stack = false;
  while (std::getline(lines, line)) {
    Frame frame;
    if (re2::RE2::FullMatch(line, frame_line, &frame.file, &frame.line, &frame.function)) {
      in_stack = true;
      frame.user = is_under(frame.file, code_dir);
      frames.push_back(std::move(frame));
    } else if (in_stack) {
      break;
    }
  }
  std::reverse(frames.begin(), frames.end());
  return frames;
}

namespace {

// The harness's files are in a folder the job writes: read without following a link, from a
// regular file only, with a bound (docs/security.md).
std::string read_harness_file(const std::filesystem::path& file) {
  auto text = read_job_file(file.parent_path(), file.filename().string(), kMaxReadBytes);
  return text ? std::move(*text) : std::string();
}

}  // namespace

std::vector<Frame> read_stack_dump(const std::filesystem::path& file, const std::string& code_dir) {
  return parse_stack_dump(read_harness_file(file), code_dir);
}

HarnessEvents read_events(const std::filesystem::path& file) { return parse_events(read_harness_file(file)); }

}  // namespace preflight::harness
