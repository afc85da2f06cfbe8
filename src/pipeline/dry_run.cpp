#include "pipeline/dry_run.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <boost/process.hpp>
#include <chrono>
#include <deque>
#include <fstream>
#include <random>

#include "diagnosis/diagnosis.hpp"
#include "estimate/gpu_table.hpp"
#include "harness/events.hpp"
#include "image/image_store.hpp"
#include "pipeline/batch_sampling.hpp"
#include "pipeline/check_job.hpp"
#include "pipeline/estimate.hpp"
#include "pipeline/harness_folder.hpp"
#include "pipeline/input_bound.hpp"
#include "pipeline/input_sample.hpp"
#include "pipeline/job_context.hpp"
#include "pipeline/job_report.hpp"
#include "pipeline/outputs.hpp"
#include "pipeline/predictions.hpp"
#include "pipeline/run_files.hpp"
#include "pipeline/run_room.hpp"
#include "pipeline/run_trace.hpp"
#include "pipeline/stage_watch.hpp"
#include "pipeline/stages.hpp"
#include "plan/run_plan.hpp"
#include "report/clamps.hpp"
#include "sandbox/disk_watch.hpp"
#include "sandbox/oci_config.hpp"
#include "sandbox/run_folder.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "util/data_dir.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kSetupMarker = "\036preflight:setup-exit ";
constexpr size_t kKeptLines = 400;  // of the job's output, for diagnosis
constexpr size_t kKeptRuns = 10;    // run folders kept in the cache
// Names read from one folder the job wrote, when a missing file is looked for beside it.
constexpr size_t kMaxFolderNames = 10000;

// "mnist-20261122-013000-1a2b": readable, sortable, unique enough for one machine.
std::string make_job_id(const std::string& name) {
  std::random_device random;
  auto now = std::chrono::system_clock::now();
  return fmt::format("{}-{:%Y%m%d-%H%M%S}-{:04x}", name,
                     fmt::localtime(std::chrono::system_clock::to_time_t(now)), random() & 0xffff);
}

// Seconds since the epoch, as the harness's `started` counts them.
double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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
// scratch layers, the copy-on-write code folder's among them. What the job wrote and is kept
// loses what would give a user of this machine a privilege (docs/security.md "job's files →
// the host's users"); a folder too large to look through whole is not kept, said in a note.
std::vector<std::string> tidy_run_dir(const plan::RunPlan& plan) {
  std::vector<fs::path> written;
  for (const auto& m : plan.mounts)
    if (!m.read_only && m.overlay_dir.empty()) written.push_back(m.source);
  const std::vector<fs::path> removed = sandbox::tidy_run(plan.layout().scratch(), written);
  std::vector<std::string> notes;
  for (const auto& m : plan.mounts) {
    if (std::find(removed.begin(), removed.end(), m.source) == removed.end()) continue;
    notes.push_back(fmt::format(
        "what the job wrote in {} was not kept: past {} entries or {} levels, more than Preflight looks "
        "through for set-user-ID files and devices it must not leave on this machine",
        m.destination, sandbox::kDiskWalkEntries, kMaxWalkDepth));
  }
  return notes;
}

// Marks the run folder of a job Preflight stopped (its disk, its time), whose outputs are the
// first to go when a later run needs room (pipeline/run_room).
void mark_stopped(const model::RunLayout& layout, const sandbox::ContainerExit& exit) {
  if (exit.host_disk_low || exit.disk_full || exit.timed_out) std::ofstream(layout.stopped()) << "stopped\n";
}

// Large inputs are replaced by samples in the run folder (docs/architecture.md); the job sees
// the same layout at the same place, with fewer files and shorter text files.
Status sample_inputs(const spec::JobSpec& job, plan::RunPlan& plan, const Console& console,
                     std::vector<std::string>& notes) {
  SampleLimits limits;
  if (job.dryrun.sample_above_bytes) limits.sample_above = *job.dryrun.sample_above_bytes;
  for (const auto& input : job.inputs) {
    if (input.value) continue;
    auto sample = sample_input(input.path, plan.layout().input_sample(input.name), limits);
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

// What the container left behind, read before its scratch layers go.
struct JobRun {
  sandbox::ContainerExit exit;
  model::RunOutcome outcome;
  harness::HarnessTrace trace;
  double started = 0;                        // wall-clock seconds when the container started
  double setup_seconds = 0;                  // when the launcher's setup marker came
  std::vector<model::Finding> lost_outputs;  // files written where the platform drops them
  std::vector<std::string> notes;            // on what of its files was not kept
};

// The report of a run that stopped at a certain static error: the container never started.
report::Report stopped_before_run(const JobContext& context, std::vector<model::Finding> static_results,
                                  bool strict) {
  leave_unverified(static_results, strict);
  auto report = job_report(context, std::move(static_results));
  report.notes.push_back(
      "the static checks found an error that holds whatever the job does, so the job was not run "
      "(preflight run --run-anyway runs it)");
  static const harness::HarnessEvents kNone;
  TraceSources nothing_ran;
  nothing_ran.events = &kNone;
  attach_trace(report, make_trace(std::move(nothing_ran), report));
  return report;
}

// `emulator_dir`: the harness folder the container mounts (harness_folder.hpp).
Result<plan::RunPlan> plan_run(const JobContext& context, const DryRunOptions& options,
                               const std::vector<model::Finding>& static_results, const std::string& job_id,
                               const fs::path& run_dir, const fs::path& emulator_dir) {
  plan::PlanContext plan_context;
  plan_context.job_id = job_id;
  plan_context.run_dir = run_dir;
  plan_context.emulator_dir = emulator_dir;
  plan_context.steps_override = options.steps;
  plan_context.batch_override = options.batch;
  plan_context.timeout_override = options.timeout;
  plan_context.harness = options.harness;
  plan_context.watched = watched_lines(static_results);
  plan_context.image_sealed = context.image.sealed;
  plan_context.sandbox.network = options.network;
  if (options.seccomp) {
    plan_context.sandbox.seccomp = *options.seccomp;
  } else if (context.profile.seccomp.name == spec::kFloorSeccompPolicy) {
    plan_context.sandbox.seccomp = context.profile.seccomp;  // the same shipped file, read once
  } else {
    auto floor = spec::load_seccomp_policy(spec::kFloorSeccompPolicy, spec::shipped_seccomp_dir());
    if (!floor) return std::move(floor).error();
    plan_context.sandbox.seccomp = std::move(*floor);
  }
  // An allow list answers only the ABIs the image's programs can run in; a policy that allows
  // what it does not refuse answers them all (docs/security.md "The sandbox floor").
  plan_context.sandbox.compat_abis = plan_context.sandbox.seccomp.otherwise_errno
                                         ? sandbox::compat_abis_of_image(context.image.rootfs)
                                         : plan::compat_abis();
  return plan::make_plan(context.job, context.profile, context.image.config, plan_context);
}

// Runs the planned job in `runtime` and reads what it left: its output split at the setup
// marker, the harness's events (and, after a timeout, where it hung), the files it wrote
// outside its outputs. The run folder's scratch layers are gone afterwards, on every path.
Result<JobRun> run_in_container(const JobContext& context, const plan::RunPlan& plan,
                                sandbox::ContainerRuntime& runtime, const Console& console) {
  const model::RunLayout layout = plan.layout();
  OutputCollector output(console, !plan.setup.empty(), Clock::now());
  std::optional<StageWatch> watch;
  if (console.step) watch.emplace(layout.events(), console.step, !plan.setup.empty());
  const double started = wall_seconds();
  auto exit = runtime.run(plan, context.image.rootfs,
                          [&](auto stream, std::string_view line) { output.add(stream, line); });
  watch.reset();
  if (!exit) {
    tidy_run_dir(plan);
    return std::move(exit).error();
  }
  mark_stopped(layout, *exit);

  JobRun run;
  run.started = started;
  run.exit = std::move(*exit);
  model::RunOutcome& outcome = run.outcome;
  outcome.exit_code = run.exit.exit_code;
  outcome.signal = run.exit.signal;
  outcome.oom_killed = run.exit.oom_killed;
  outcome.timed_out = run.exit.timed_out;
  outcome.disk_full = run.exit.disk_full;
  outcome.written_bytes = run.exit.written_bytes;
  outcome.timeout_s = std::chrono::duration<double>(plan.timeout).count();
  outcome.setup_exit = output.setup_exit();
  outcome.output = output.lines();
  outcome.events = harness::read_events(layout.events());
  run.trace = harness::read_trace(layout.harness());
  if (outcome.timed_out && outcome.events.main_pid > 0)
    outcome.stopped_at =
        harness::read_stack_dump(layout.stacks(outcome.events.main_pid), plan.facts.code_container_dir);
  run.setup_seconds = output.setup_seconds();
  run.lost_outputs = output_findings(plan, layout.upper(), outcome.events);
  run.notes = tidy_run_dir(plan);
  if (run.exit.interrupted_by)
    return Error{ErrorKind::Interrupted,
                 fmt::format("interrupted by {}; the container was stopped and removed",
                             strsignal(run.exit.interrupted_by)),
                 {}};
  if (run.exit.host_disk_low)
    return Error::runtime(fmt::format(
        "{}: the job had written {} when its disk fell to {} free; Preflight stopped it before it "
        "filled this machine's disk. Free space there, or set PREFLIGHT_CACHE to a folder on a larger disk",
        layout.dir().string(), human_size(run.exit.written_bytes), human_size(run.exit.host_free_bytes)));
  return run;
}

// The first error of the dry run names the stage that failed.
std::optional<std::string> failed_stage(const std::vector<model::Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == model::Severity::Error && finding.phase == model::Phase::Dryrun)
      return finding.stage;
  return std::nullopt;
}

// The verdict on what the run showed: the static predictions settled by it, its failure
// diagnosed, lost outputs, clamps, the estimate and the stages.
report::Report assemble_report(const JobContext& context, const plan::RunPlan& plan,
                               std::vector<model::Finding> static_results, std::vector<std::string> notes,
                               JobRun run, const DryRunOptions& options,
                               std::optional<std::string>& resample) {
  model::PlatformFacts facts = plan.facts;
  facts.image = context.image_text;
  if (const estimate::GpuSpec* gpu = context.gpus.find(facts.gpu_name))
    facts.gpu_framework_bytes = gpu->framework_bytes;
  facts.host_has_module = host_has_module;
  facts.host_path_exists = [](const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
  };
  facts.host_folder_names = [](const std::string& host_dir, const std::string& relative) {
    return job_folder_names(host_dir, relative, kMaxFolderNames);
  };
  const model::RunOutcome& outcome = run.outcome;
  notes.insert(notes.end(), run.exit.unenforced.begin(), run.exit.unenforced.end());
  notes.insert(notes.end(), run.notes.begin(), run.notes.end());
  const auto uncut =
      report::loop_notes(outcome.events.uncut_loops, facts.code_container_dir, outcome.events.endless);
  notes.insert(notes.end(), uncut.begin(), uncut.end());

  RunEvidence evidence;
  evidence.watched = options.harness && outcome.events.started;
  evidence.has_setup = !plan.setup.empty();
  evidence.setup_exit = outcome.setup_exit;
  evidence.command_passed = outcome.exit_code == 0 && outcome.signal == 0 && !outcome.timed_out &&
                            !outcome.oom_killed && !outcome.disk_full;
  evidence.events = &outcome.events;
  evidence.code_container_dir = facts.code_container_dir;
  auto findings =
      settle_predictions(std::move(static_results), diagnosis::diagnose(context.policies, outcome, facts),
                         evidence, options.strict);
  findings.insert(findings.end(), run.lost_outputs.begin(), run.lost_outputs.end());
  plan::soften_withheld(findings, context.profile, {plan.network, plan.seccomp, plan.seccomp_abis});
  soften_shape_only_limits(findings, outcome.events, facts.code_container_dir);

  context.policies.checks.complete(findings);  // their stages, for the estimate's first failure
  auto clamps = report::clamps_of(outcome.events.clamps, facts.code_container_dir);
  auto estimate = estimate_run(outcome.events, clamps, findings, facts, data_pace(outcome.events, run.trace),
                               &context.gpus);
  if (estimate) {
    if (auto input_bound = input_bound_finding(*estimate, facts, outcome.events))
      findings.push_back(std::move(*input_bound));
    if (context.job.time_limit)
      estimate->time_limit_hours = static_cast<double>(context.job.time_limit->count()) / 3600;
    if (auto time_limit = time_limit_finding(*estimate, context.job, notes))
      findings.push_back(std::move(*time_limit));
  }
  for (const harness::EndlessRun& endless : outcome.events.endless)
    if (endless.pid == outcome.events.main_pid)
      notes.push_back(report::endless_note(endless, outcome.events.uncut_loops, outcome.events.counts,
                                           estimate ? estimate->steps_per_hour : std::nullopt,
                                           facts.code_container_dir));

  if (plan.batch > 0) resample = unconfirmed_at_full_size(findings, outcome.events, facts.code_container_dir);
  const auto full_size = full_size_notes(findings, outcome.events, facts.code_container_dir);
  notes.insert(notes.end(), full_size.begin(), full_size.end());
  const auto shape_only = shape_only_notes(outcome.events, facts.code_container_dir);
  notes.insert(notes.end(), shape_only.begin(), shape_only.end());
  auto report = job_report(context, std::move(findings));
  report.notes.insert(report.notes.end(), notes.begin(), notes.end());
  report.clamps = std::move(clamps);
  report.estimate = std::move(estimate);
  report.stages = stage_results(outcome.events, failed_stage(report.findings), !plan.setup.empty(),
                                run.setup_seconds, run.exit.seconds);
  report.run_dir = plan.layout().dir();
  TraceSources sources{&outcome.events,   std::move(run.trace), run.started,
                       run.setup_seconds, !plan.setup.empty(),  run.exit.seconds};
  attach_trace(report, make_trace(std::move(sources), report));
  return report;
}

// Where run folders go: the options' runs_dir, else the cache's runs/.
fs::path runs_folder(const DryRunOptions& options) {
  return options.runs_dir.empty() ? image::default_cache_dir() / "runs" : options.runs_dir;
}

// Made before a run's folder, from nothing the static checks or the policies decide: room in
// the cache, and the harness's folder for the image (the emulator folder the run mounts).
Result<fs::path> prepare_for_run(const image::UnpackedImage& image, const DryRunOptions& options,
                                 const Console& console, sandbox::ContainerRuntime& runtime) {
  // Runs cut short (a SIGKILLed Preflight) are reaped first; the newest runs are kept for a
  // look at their outputs and events (docs/security.md "Crash-safe lifecycle"), the coming
  // one among them, as the cache's bound and the disk's floor allow.
  const auto room = make_room_for_run(runs_folder(options), kKeptRuns - 1, console.progress);
  if (!room) return room.error();
  return options.harness ? harness_folder(image, image::default_cache_dir(), runtime)
                         : data_dir() / "emulator";
}

// The job, its platform and image, as the options choose them; in a pod, the image's
// configuration is the pod's (DryRunOptions::image_config). `meanwhile`: as load_job_context's.
Result<JobContext> load_for_run(const DryRunOptions& options, const Console& console,
                                const WhilePoliciesLoad& meanwhile = {}) {
  auto context = load_job_context({options.job_file, options.platform, options.image, options.read},
                                  console.progress, meanwhile);
  if (context && options.image_config) context->image.config = *options.image_config;
  return context;
}

// One dry run of the job; `resample` says why it must run again at the job's own batch size
// (pipeline/batch_sampling.hpp), if it must. `emulator_dir`: prepare_for_run's, when it was
// made ahead (else it is made here).
Result<report::Report> run_once(const JobContext& context, const DryRunOptions& options,
                                const Console& console, sandbox::ContainerRuntime& runtime,
                                std::vector<model::Finding> static_results, std::vector<std::string> notes,
                                std::optional<std::string>& resample, std::optional<fs::path> emulator_dir) {
  if (!emulator_dir) {
    auto prepared = prepare_for_run(context.image, options, console, runtime);
    if (!prepared) return std::move(prepared).error();
    emulator_dir = std::move(*prepared);
  }
  auto folder =
      sandbox::RunFolder::create_new(runs_folder(options), [&] { return make_job_id(context.job.name); });
  if (!folder) return std::move(folder).error();
  const std::string job_id = folder->path().filename().string();
  auto plan = plan_run(context, options, static_results, job_id, folder->path(), *emulator_dir);
  if (!plan) return std::move(plan).error();

  for (const auto& note : plan->notes) say(console, note);
  notes.insert(notes.end(), plan->notes.begin(), plan->notes.end());
  if (auto sampled = sample_inputs(context.job, *plan, console, notes); !sampled)
    return std::move(sampled).error();
  say(console,
      fmt::format("running {} on {} as {}", context.job.name, context.profile.name, plan->facts.user));
  auto run = run_in_container(context, *plan, runtime, console);
  if (!run) return std::move(run).error();
  auto report = assemble_report(context, *plan, std::move(static_results), std::move(notes), std::move(*run),
                                options, resample);
  // Kept for `preflight show`, while the run still holds its folder.
  if (auto written = write_run_files(report); !written)
    report.notes.push_back("the run folder's report files could not be written: " + written.error().str());
  return report;
}

// dry_run_loaded's work; `emulator_dir`: prepare_for_run's for the first run, if made ahead.
Result<report::Report> run_loaded(const JobContext& context, const DryRunOptions& options,
                                  const Console& console, sandbox::ContainerRuntime& runtime,
                                  Clock::time_point started, std::optional<fs::path> emulator_dir) {
  // The static checks open every run; a certain error among them ends it before the container
  // starts. The rest are predictions, for the dry run to settle.
  if (auto user = runtime.check_user(context.profile.user.uid, context.profile.user.gid); !user)
    return std::move(user).error();
  auto static_results = static_findings(context, runtime);
  if (!static_results) return std::move(static_results).error();
  if (options.stop_on_static && std::any_of(static_results->begin(), static_results->end(), is_certain_error))
    return stopped_before_run(context, std::move(*static_results), options.strict);

  std::optional<std::string> resample;
  auto report =
      run_once(context, options, console, runtime, *static_results, {}, resample, std::move(emulator_dir));
  // A failure that could come from the sampled batch, and that the full-size check of its loop
  // did not show, is not evidence: the job runs again at its own batch size.
  if (report && resample) {
    say(console, *resample);
    DryRunOptions full = options;
    full.batch = 0;
    std::optional<std::string> again;
    report = run_once(context, full, console, runtime, std::move(*static_results), {*resample}, again, {});
  }
  if (report) report->duration_s = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

}  // namespace

Result<report::Report> dry_run_loaded(const JobContext& context, const DryRunOptions& options,
                                      const Console& console, sandbox::ContainerRuntime& runtime,
                                      Clock::time_point started) {
  return run_loaded(context, options, console, runtime, started, {});
}

Result<report::Report> dry_run(const DryRunOptions& options, const Console& console,
                               sandbox::ContainerRuntime& runtime) {
  const auto started = Clock::now();
  // The cache's room and the harness's folder are made while the shipped policies load, which
  // the main thread otherwise waits for (docs/benchmarks.md); in a pod the image's
  // configuration is only the pod's once loaded, so there they are made as the run starts.
  std::optional<fs::path> emulator_dir;
  WhilePoliciesLoad meanwhile;
  if (!options.image_config)
    meanwhile = [&](const image::UnpackedImage& image) -> Status {
      auto prepared = prepare_for_run(image, options, console, runtime);
      if (!prepared) return std::move(prepared).error();
      emulator_dir = std::move(*prepared);
      return Ok{};
    };
  auto loaded = load_for_run(options, console, meanwhile);
  if (!loaded) return std::move(loaded).error();
  auto report = run_loaded(*loaded, options, console, runtime, started, std::move(emulator_dir));
  if (report && report->run_dir.empty())
    report->duration_s = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

Status stage_in_pod(const DryRunOptions& options, const Console& console, const sandbox::InPod& pod) {
  auto context = load_for_run(options, console);
  if (!context) return std::move(context).error();
  auto folder =
      sandbox::RunFolder::create_new(runs_folder(options), [&] { return make_job_id(context->job.name); });
  if (!folder) return std::move(folder).error();
  auto plan = plan_run(*context, options, {}, folder->path().filename().string(), folder->path(),
                       data_dir() / "emulator");
  if (!plan) return std::move(plan).error();
  return pod.stage(*plan);
}

}  // namespace preflight::pipeline
