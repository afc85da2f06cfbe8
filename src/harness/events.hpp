// What the harness inside the job reports (emulator/, docs/formats.md "events"): JSON lines
// written to the events file, parsed here into typed records for diagnosis and reports.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/step_parts.hpp"
#include "util/error.hpp"

namespace preflight::harness {

// Stage names in contract order (report.json v1).
inline constexpr const char* kStageNames[] = {"setup",    "init",       "data",     "model",  "train",
                                              "validate", "checkpoint", "evaluate", "predict"};

struct Frame {
  std::string file;  // path as the job saw it, e.g. /job/code/main.py
  int line = 0;
  std::string function;
  bool user = false;  // inside the job's code folder
};

// A stage the job entered, at time t (seconds since the harness started in that process).
struct StageEvent {
  std::string stage;
  double t = 0;
  int pid = 0;
  std::string why;  // "DataLoader iterated", "optimizer.step()", ...
  std::optional<Frame> where;
};

// An uncaught exception (or one the harness saw escape a hooked call).
struct ExceptionEvent {
  std::string type;  // qualified for non-builtins: "torch.cuda.OutOfMemoryError"
  std::string message;
  std::optional<int> errno_value;
  std::string path;   // OSError.filename, or the file argument of a failed torch.save
  std::string stage;  // the stage it struck in
  double t = 0;
  int pid = 0;
  std::vector<Frame> frames;  // outermost first, innermost last
  // The innermost frame in the user's code, if any.
  const Frame* user_frame() const;
};

// A loop the harness cut short for the dry run.
struct CapEvent {
  std::string what;  // "DataLoader"
  int limit = 0;
  std::optional<Frame> where;
};

// A value the harness changed so that the sampled run reaches every stage (docs/harness.md
// "Clamping"): an epoch or step count, or an override from job.yaml `dryrun.args`.
struct ClampEvent {
  std::string what;                     // "argparse --epochs", "lightning Trainer max_epochs"
  std::optional<std::string> original;  // as JSON text ("14", "0.5"); unset when never given
  std::string value;                    // as JSON text: "2"
  std::optional<Frame> where;
  std::string kind;  // "epochs" | "steps" | "interval" | "ranks" | "batch" (a DataLoader's) | "batches" (a
                     // cut loop) | ""
  bool cut = false;  // a loop the harness ended (ev "cut"): `what` is "for loop" or "while loop",
                     // `value` the iterations that trained, `where` the loop's first line
  // A cut loop's variable's last value in the full run (range(1, 31): 30); unset when unknown.
  std::optional<long long> last = std::nullopt;
  double t = 0;  // when it took effect, in process `pid` (the first time, for a clamp seen again)
  int pid = 0;
};

// An epoch or step count of the job's own that the harness kept as the job set it (docs/harness.md
// "Clamping"): the full run's length, for the estimate, where no clamp or cut loop tells it.
struct CountEvent {
  std::string what;  // "argparse --max-steps"
  std::string kind;  // "epochs" | "steps"
  double value = 0;
  std::optional<Frame> where;
  int pid = 0;
};

// A loop that trained and that the harness could not end (docs/harness.md "Sampling"): it ran
// in full.
struct UncutLoop {
  std::string what;  // "for loop" | "while loop"
  std::string why;   // "it is the last statement of its function", ...
  std::optional<Frame> where;
};

// A job the harness ended because it went on repeating its training steps well past its
// sample, with no end of its own in sight (docs/harness.md "Jobs without an end").
struct EndlessRun {
  long long after = 0;         // training steps (optimizer steps, else backward() calls) it had run
  long long quiet = 0;         // the last of those, which reached no new line of its code nor a new stage
  std::optional<Frame> where;  // the training step
  std::optional<Frame> loop;   // the first line of the innermost loop of the job's code around it
  std::string loop_what;       // "while loop" | "for loop" | "" (none: a library's loop)
  int pid = 0;
};

// A loss that was NaN or infinite at backward(); the job may have carried on.
struct NonfiniteEvent {
  int step = 0;       // backward calls so far in that process, 1-based
  std::string value;  // "nan" | "inf"
  std::string stage;  // "train"
  double t = 0;
  int pid = 0;
  std::optional<Frame> where;
};

// One training step measured at the job's batch size (docs/harness.md "Measuring a step").
struct StepMeasure {
  double seconds = 0;                    // wall time of the step here, profiled
  double flops = 0;                      // floating-point operations the profiler counted
  int ops = 0;                           // top-level operators: on a GPU, kernel launches
  std::uint64_t live_bytes = 0;          // parameters, gradients and optimizer state between steps
  std::uint64_t step_bytes = 0;          // the most the step needed above that at one time
  int replicas = 1;                      // devices a DataParallel model splits each batch over
  std::optional<int> batch_size;         // first dimension of the step's batch (the job's own)
  std::optional<int> sampled_batch;      // the batch the step ran at here, when sampled (docs/harness.md)
  bool shape_only = false;               // the model ran shape-only: `seconds` is no step's time
  std::optional<int> batches_per_epoch;  // len() of the training DataLoader, not capped
  double t = 0;
  int pid = 0;
  std::optional<Frame> where;
};

// A value made up because shape-only tensors have none: in a full-size iteration, or in a
// model that ran shape-only.
struct MadeUpValue {
  std::string what;  // "a value read (item)", "torch.nonzero", ...
  std::optional<Frame> where;
};

// The first iteration of a loop whose DataLoader batch was sampled, run again at the job's
// own batch size on shape-only tensors (docs/harness.md "Sampling the batch").
struct FullSizeCheck {
  // "step" (forward and backward ran; the optimizer's step began) | "iteration" (the loop's next
  // batch came) | "exception" | "exit" | "timeout" | "killed" | "unavailable" (no shape-only
  // tensors in this PyTorch: the batch was not sampled)
  std::string reached;
  std::string why;  // for "unavailable"
  int batch = 0;    // the job's own
  std::optional<int> sampled;
  std::optional<Frame> where;               // the loop
  std::optional<ExceptionEvent> exception;  // what ended it, for "exception"
  bool shape_only_limit = false;            // that exception is the fake tensors' own, not the job's
  std::vector<MadeUpValue> made_up;
  double t = 0;
  int pid = 0;
};

// A model whose parameters passed the host's share (PREFLIGHT_HOST_PARAMETERS): from `where`
// on, the process ran it on shape-only tensors (docs/harness.md "Models larger than the host").
struct ShapeOnlyModel {
  long long parameters = 0;  // elements of the parameters alive when it switched
  std::uint64_t bytes = 0;   // and their bytes
  std::uint64_t limit = 0;
  std::optional<Frame> where;
  std::vector<MadeUpValue> made_up;  // by that process, at most 20
  double t = 0;
  int pid = 0;
};

// A training loop (one epoch) that ended, cut short by the cap or exhausted.
struct EpochEnd {
  int batches = 0;  // yielded in the dry run
  double t = 0;
  int pid = 0;
};

// A torch.save to a file path (docs/harness.md "Events").
struct SaveEvent {
  std::string path;  // absolute, in the container
  int pid = 0;
  std::optional<Frame> where;
  double t = 0;
};

// A process that joined a torch.distributed process group (docs/harness.md "Ranks").
struct RankEvent {
  int rank = 0;
  int world = 1;
  double started =
      0;  // wall-clock seconds when the harness started in it: t + started is comparable across ranks
  int pid = 0;
};

// A watched line (one a static prediction is about) that ran, and the stage it ran in
// (docs/harness.md "Watched lines").
struct ReachedEvent {
  std::string file;  // absolute, in the container
  int line = 0;
  std::string stage;
};

// A function or module body holding watched lines started: its span of lines and the stage
// then, so that a watched line that never ran still has the stage of the code around it.
struct EnteredEvent {
  std::string file;  // absolute, in the container
  int first = 0;
  int last = 0;
  std::string stage;
};

// One Python process the harness ran in.
struct ProcessRun {
  int pid = 0;
  bool setup = false;            // started by the setup step
  double started = 0;            // wall-clock seconds since the epoch; 0 when not told
  std::optional<double> exited;  // its own time (`t`) at interpreter exit; none if killed
};

struct HarnessEvents {
  bool started = false;          // the harness loaded in at least one process
  std::string python_version;    // of the first process, e.g. "3.11.2"
  bool command_started = false;  // a process of the job's command (not its setup) started
  // The job's main process: rank 0 of a distributed job, else the command's first process
  // that trained, else its first process; -1 if none started.
  int main_pid = -1;
  std::vector<ProcessRun> processes;  // in the order they started
  std::vector<StageEvent> stages;
  std::vector<ExceptionEvent> exceptions;
  std::vector<CapEvent> caps;
  std::vector<ClampEvent> clamps;  // each distinct clamp once (every rank parses its arguments)
  std::vector<CountEvent> counts;  // each distinct count once
  std::vector<UncutLoop> uncut_loops;
  std::vector<EndlessRun> endless;  // at most one per process
  std::vector<NonfiniteEvent> nonfinite;
  std::vector<StepMeasure> steps;     // one per process that trained for two steps or more
  std::vector<StepParts> step_parts;  // the same steps part by part
  std::vector<FullSizeCheck> full_size;
  std::vector<ShapeOnlyModel> shape_only;  // one per process whose model turned shape-only
  std::vector<EpochEnd> epochs;
  std::vector<RankEvent> ranks;
  std::vector<SaveEvent> saves;
  std::vector<ReachedEvent> reached;
  std::vector<EnteredEvent> entered;

  // The wall-clock time of `t` in process `pid`; nullopt when its start is unknown.
  std::optional<double> wall_time(int pid, double t) const;
};

// The processes whose stages make the job's timeline, in order: the main process and the
// command's processes that ran before or after it, not beside it (`prepare.py && train.py
// && predict.py`); a launcher, a spawned worker or another rank runs beside it.
std::vector<const ProcessRun*> timeline_processes(const HarnessEvents& events);

// The timeline process's first event of a kind, else any process's (a spawned rank).
template <typename Event>
const Event* main_or_first(const std::vector<Event>& list, int main_pid) {
  for (const Event& event : list) {
    if (event.pid == main_pid) return &event;
  }
  return list.empty() ? nullptr : &list.front();
}

// A frame as a finding's location: its file relative to the code folder; empty unless the
// frame is the job's own.
SourceLocation location_in_code(const std::optional<Frame>& where, const std::string& code_dir);

// The stack faulthandler wrote on SIGUSR2 (stacks-PID.txt, docs/harness.md "Where a job
// hangs"), outermost frame first; frames under `code_dir` are the job's own. Empty when the
// file is missing or holds no stack.
std::vector<Frame> read_stack_dump(const std::filesystem::path& file, const std::string& code_dir);
std::vector<Frame> parse_stack_dump(const std::string& text, const std::string& code_dir);

// Parses an events file; a missing file gives empty events (the harness never loaded),
// a malformed line is skipped (a job killed mid-write leaves a partial last line).
HarnessEvents read_events(const std::filesystem::path& file);
HarnessEvents parse_events(const std::string& text);

}  // namespace preflight::harness
