#include "pipeline/dry_run.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <boost/process.hpp>
#include <chrono>
#include <deque>
#include <random>

#include "diagnosis/diagnosis.hpp"
#include "harness/events.hpp"
#include "image/image_store.hpp"
#include "pipeline/estimate.hpp"
#include "pipeline/input_sample.hpp"
#include "pipeline/job_context.hpp"
#include "pipeline/job_report.hpp"
#include "pipeline/outputs.hpp"
#include "pipeline/predictions.hpp"
#include "pipeline/stage_watch.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/static_check.hpp"
#include "plan/run_plan.hpp"
#include "report/clamps.hpp"
#include "sandbox/container.hpp"
#include "sandbox/run_folder.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "util/data_dir.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kSetupMarker = "\036preflight:setup-exit ";
constexpr size_t kKeptLines = 400;  // of the job's output, for diagnosis
constexpr size_t kKeptRuns = 10;    // run folders kept in the cache

// "mnist-20261122-013000-1a2b": readable, sortable, unique enough for one machine.
std::string make_job_id(const std::string& name) {
  std::random_device random;
  auto now = std::chrono::system_clock::now();
  return fmt::format("{}-{:%Y%m%d-%H%M%S}-{:04x}", name,
                     fmt::localtime(std::chrono::system_clock::to_time_t(now)), random() & 0xffff);
}

bool host_has_module(const std::string& module) {
  auto python = bp::search_path("python3");
  if (python.empty()) return false;
  try {
    return bp::system(
               python, "-c",
               "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)",
               module, bp::std_out > bp::null, bp::std_err > bp::null, bp::std_in < bp::null) == 0;
  } catch (const bp::process_error&) {
    return false;
  }
}

// Splits the job's output into setup and command parts at the launcher's marker.
class OutputCollector {
 public:
  explicit OutputCollector(const Console& console, bool has_setup, Clock::time_point start)
      : console_(console), in_setup_{has_setup, has_setup}, start_(start) {}

  void add(model::OutputLine::Stream stream, std::string_view line) {
    const bool is_err = stream == model::OutputLine::Stream::Stderr;
    if (line.rfind(kSetupMarker, 0) == 0) {
      in_setup_[is_err] = false;
      setup_exit_ = std::atoi(std::string(line.substr(std::strlen(kSetupMarker))).c_str());
      setup_seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
      return;
    }
    if (console_.job_output) console_.job_output(is_err, line);
    lines_.push_back({stream, in_setup_[is_err], std::string(line)});
    if (lines_.size() > kKeptLines) lines_.pop_front();
  }

  std::vector<model::OutputLine> lines() const { return {lines_.begin(), lines_.end()}; }
  std::optional<int> setup_exit() const { return setup_exit_; }
  double setup_seconds() const { return setup_seconds_; }

 private:
  const Console& console_;
  bool in_setup_[2];
  Clock::time_point start_;
  std::deque<model::OutputLine> lines_;
  std::optional<int> setup_exit_;
  double setup_seconds_ = 0;
};

void say(const Console& console, const std::string& text) {
  if (console.progress) console.progress(text);
}

// Keeps what a user may want to look at (outputs, events, config) and drops the container's
// scratch layers, the copy-on-write code folder's among them.
void tidy_run_dir(const fs::path& run_dir) {
  std::error_code ignored;
  for (const char* scratch : {"upper", "work", "bundle/rootfs", "code"})
    fs::remove_all(run_dir / scratch, ignored);
}

// Large inputs are replaced by samples in the run folder (docs/architecture.md); the job sees
// the same layout at the same place, with fewer files and shorter text files.
Status sample_inputs(const spec::JobSpec& job, plan::RunPlan& plan, const Console& console,
                     std::vector<std::string>& notes) {
  SampleLimits limits;
  if (job.dryrun.sample_above_bytes) limits.sample_above = *job.dryrun.sample_above_bytes;
  for (const auto& input : job.inputs) {
    if (input.value) continue;
    auto sample = sample_input(input.path, plan.run_dir / "inputs" / input.name, limits);
    if (!sample) return std::move(sample).error().context("sampling input " + input.name);
    if (!*sample) continue;
    auto mount = std::find_if(plan.mounts.begin(), plan.mounts.end(), [&](const plan::MountPlan& m) {
      return m.kind == model::MountFact::Kind::Input && m.name == input.name;
    });
    mount->source = (*sample)->root;
    const std::string destination = mount->destination;
    for (const auto& [original, relative] : (*sample)->file_mounts)
      plan.mounts.push_back({model::MountFact::Kind::Input, input.name,
                             (fs::path(destination) / relative).string(), original, true, fs::path()});
    notes.push_back(describe(input.name, **sample, limits));
    say(console, notes.back());
  }
  return Ok{};
}

}  // namespace

Result<report::Report> dry_run(const DryRunOptions& options, const Console& console) {
  const auto started = Clock::now();
  auto loaded = load_job_context({options.job_file, options.platform, options.image}, console.progress);
  if (!loaded) return std::move(loaded).error();
  const spec::JobSpec& job = loaded->job;
  const spec::PlatformProfile& profile = loaded->profile;
  const image::UnpackedImage& image = loaded->image;

  // The static checks open every run; a certain error among them ends it before the container
  // starts. The rest are predictions, for the dry run to settle.
  auto static_results = static_findings(*loaded);
  if (!static_results) return std::move(static_results).error();
  const bool certain_error = std::any_of(static_results->begin(), static_results->end(), is_certain_error);
  if (certain_error && options.stop_on_static) {
    leave_unverified(*static_results, options.strict);
    auto report = job_report(*loaded, std::move(*static_results));
    report.notes.push_back(
        "the static checks found an error that holds whatever the job does, so the job was not run "
        "(preflight run --run-anyway runs it)");
    report.duration_s = std::chrono::duration<double>(Clock::now() - started).count();
    return report;
  }

  plan::PlanContext context;
  context.job_id = make_job_id(job.name);
  const fs::path runs_dir = image::default_cache_dir() / "runs";
  // Runs cut short (a SIGKILLed Preflight) are reaped first; the newest runs are kept for a
  // look at their outputs and events (docs/security.md "Crash-safe lifecycle").
  sandbox::reap_abandoned(runs_dir, kKeptRuns);
  auto folder = sandbox::RunFolder::create(runs_dir / context.job_id);
  if (!folder) return std::move(folder).error();
  context.run_dir = folder->path();
  context.emulator_dir = data_dir() / "emulator";
  context.steps_override = options.steps;
  context.timeout_override = options.timeout;
  context.harness = options.harness;
  context.watched = watched_lines(*static_results);
  auto plan = plan::make_plan(job, profile, image.config, context);
  if (!plan) return std::move(plan).error();

  std::vector<std::string> notes = plan->notes;
  for (const auto& note : notes) say(console, note);
  if (auto sampled = sample_inputs(job, *plan, console, notes); !sampled) return std::move(sampled).error();

  say(console, fmt::format("running {} on {} as {}", job.name, profile.name, plan->facts.user));
  OutputCollector output(console, !plan->setup.empty(), Clock::now());
  std::optional<StageWatch> watch;
  if (console.step)
    watch.emplace(plan->run_dir / "harness" / "events.jsonl", console.step, !plan->setup.empty());
  auto exit = sandbox::run_container(*plan, image.rootfs,
                                     [&](auto stream, std::string_view line) { output.add(stream, line); });
  watch.reset();
  if (!exit) {
    tidy_run_dir(plan->run_dir);
    return std::move(exit).error();
  }

  model::RunOutcome outcome;
  outcome.exit_code = exit->exit_code;
  outcome.signal = exit->signal;
  outcome.oom_killed = exit->oom_killed;
  outcome.timed_out = exit->timed_out;
  outcome.disk_full = exit->disk_full;
  outcome.written_bytes = exit->written_bytes;
  outcome.timeout_s = std::chrono::duration<double>(plan->timeout).count();
  outcome.setup_exit = output.setup_exit();
  outcome.output = output.lines();
  outcome.events = harness::read_events(plan->run_dir / "harness" / "events.jsonl");
  if (outcome.timed_out && outcome.events.main_pid > 0)
    outcome.stopped_at = harness::read_stack_dump(
        plan->run_dir / "harness" / fmt::format("stacks-{}.txt", outcome.events.main_pid),
        plan->facts.code_container_dir);
  auto lost_outputs = output_findings(*plan, plan->run_dir / "upper", outcome.events);
  tidy_run_dir(plan->run_dir);
  if (exit->interrupted_by)
    return Error{ErrorKind::Interrupted,
                 fmt::format("interrupted by {}; the container was stopped and removed",
                             strsignal(exit->interrupted_by)),
                 {}};
  if (exit->host_disk_low)
    return Error::runtime(fmt::format(
        "{}: the job had written {} when its disk fell to {} free; Preflight stopped it before it "
        "filled this machine's disk. Free space there, or set PREFLIGHT_CACHE to a folder on a larger disk",
        plan->run_dir.string(), human_size(exit->written_bytes), human_size(exit->host_free_bytes)));

  model::PlatformFacts facts = plan->facts;
  facts.image = loaded->image_text;
  facts.host_has_module = host_has_module;
  facts.host_path_exists = [](const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
  };

  notes.insert(notes.end(), exit->unenforced.begin(), exit->unenforced.end());
  const auto uncut = report::loop_notes(outcome.events.uncut_loops, facts.code_container_dir);
  notes.insert(notes.end(), uncut.begin(), uncut.end());
  RunEvidence evidence;
  evidence.watched = options.harness && outcome.events.started;
  evidence.has_setup = !plan->setup.empty();
  evidence.setup_exit = outcome.setup_exit;
  evidence.command_passed =
      exit->exit_code == 0 && exit->signal == 0 && !exit->timed_out && !exit->oom_killed && !exit->disk_full;
  evidence.events = &outcome.events;
  evidence.code_container_dir = facts.code_container_dir;
  auto findings =
      settle_predictions(std::move(*static_results), diagnosis::diagnose(loaded->policies, outcome, facts),
                         evidence, options.strict);
  findings.insert(findings.end(), lost_outputs.begin(), lost_outputs.end());
  auto report = job_report(*loaded, std::move(findings));
  report.notes = std::move(notes);
  report.clamps = report::clamps_of(outcome.events.clamps, facts.code_container_dir);
  report.estimate = estimate_run(outcome.events, report.clamps, report.findings, facts);
  std::optional<std::string> failed_stage;
  for (const auto& finding : report.findings)
    if (finding.severity == model::Severity::Error && finding.phase == model::Phase::Dryrun && !failed_stage)
      failed_stage = finding.stage;
  report.stages = stage_results(outcome.events, failed_stage, !plan->setup.empty(), output.setup_seconds(),
                                exit->seconds);
  report.duration_s = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

}  // namespace preflight::pipeline
