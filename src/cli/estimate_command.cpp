// `preflight estimate [JOB] [--gpu NAME]...`: how long the job would hold the platform's GPUs
// and what that costs, built from its measured step's parts (docs/cli.md "estimate",
// docs/estimate.md).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/estimate_job.hpp"
#include "report/progress.hpp"
#include "sandbox/container.hpp"
#include "util/text.hpp"

namespace preflight::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kShownParts = 15;

struct EstimateArgs : ReadArgs {
  std::string job = "job.yaml";
  std::string platform, image, json;
  std::vector<std::string> gpus;
  double budget = 0.2;
  bool no_bench = false;
  bool quiet = false;
};

std::string milliseconds(double seconds) { return fmt::format("{:.3f}", seconds * 1000); }

void print_parts(const report::StepProjection& p, std::ostream& out) {
  out << fmt::format("{:<34} {:<16} {:>6} {:>10} {:>10}  {}\n", "part (slowest on " + p.gpu + ")", "input",
                     "calls", "here ms", "GPU ms", "bound");
  for (std::size_t i = 0; i < p.parts.size() && i < kShownParts; ++i) {
    const auto& part = p.parts[i];
    const std::string here =
        part.here_seconds ? milliseconds(*part.here_seconds) + (part.benchmarked ? "" : "*") : "";
    out << fmt::format("{:<34} {:<16} {:>6} {:>10} {:>10}  {}\n", cut_utf8(part.name, 34),
                       cut_utf8(part.shape, 16), part.calls, here, milliseconds(part.typical), part.bound);
  }
  if (p.parts.size() > kShownParts) out << fmt::format("… and {} more parts\n", p.parts.size() - kShownParts);
}

void print_projection(const report::StepProjection& p, const report::Estimate& e, std::ostream& out) {
  out << fmt::format("{}: a step {}–{} (typically {}), {}-bound, {}", p.gpu, human_duration(p.step_low),
                     human_duration(p.step_high), human_duration(p.step_typical), p.bound, p.precision);
  if (p.allreduce_seconds > 0) out << fmt::format(", all-reduce {}", human_duration(p.allreduce_seconds));
  if (p.data_seconds) out << fmt::format(", a batch loaded every {}", human_duration(*p.data_seconds));
  out << "\n";
  if (e.steps_per_epoch)
    out << fmt::format("  an epoch ({} steps): about {}\n", *e.steps_per_epoch,
                       human_duration(*e.steps_per_epoch * p.step_typical));
  if (p.run_hours && p.gpu_hours) {
    out << fmt::format("  the whole run ({} steps): about {}, {:.1f} GPU-hours", *e.total_steps,
                       human_duration(*p.run_hours * 3600), *p.gpu_hours);
    if (p.cost_usd) out << fmt::format(", about ${:.2f} at {}", *p.cost_usd, p.price_source);
    if (e.time_limit_hours && *p.run_hours > *e.time_limit_hours)
      out << fmt::format("; longer than the job's time limit of {}",
                         human_duration(*e.time_limit_hours * 3600));
    out << "\n";
  }
}

json estimate_json(const pipeline::JobEstimate& result) {
  const report::Report& r = result.report;
  json here = nullptr;
  if (result.parts && result.here)
    here = {{"measured_seconds", r.estimate ? r.estimate->step_seconds_here : 0.0},
            {"constructed_seconds", result.here->seconds},
            {"parts", result.here->parts},
            {"calls", result.here->calls},
            {"benchmarked", result.bench.benchmarked},
            {"cached", result.bench.cached},
            {"unbenchmarked", result.here->unbenchmarked},
            {"bench_seconds", result.bench.seconds}};
  json gpus = json::array();
  for (const auto& projection : result.projections)
    gpus.push_back(report::projection_json(projection, projection.parts.size()));
  return {{"schema", "preflight.estimate/v1"},
          {"verdict", r.verdict},
          {"job", {{"name", r.job_name}, {"file", r.job_file}}},
          {"platform", r.platform},
          {"image", {{"ref", r.image_ref}, {"digest", r.image_digest}}},
          {"estimate", r.estimate ? report::to_json(r)["estimate"] : json(nullptr)},
          {"here", std::move(here)},
          {"gpus", std::move(gpus)}};
}

int estimate(const EstimateArgs& args) {
  if (auto exit_status = enter_user_namespace()) return *exit_status;
  pipeline::EstimateOptions options;
  options.run.job_file = args.job;
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  options.run.read = std::move(*read);
  if (!args.platform.empty()) options.run.platform = args.platform;
  if (!args.image.empty()) options.run.image = args.image;
  options.gpus = args.gpus;
  options.budget = args.budget;
  options.bench = !args.no_bench;
  auto progress = report::progress_on_stderr(args.quiet);
  pipeline::Console console;
  console.progress = [&](const std::string& line) { progress->note(line); };
  if (progress->shows_steps()) console.step = [&](const std::string& what) { progress->step(what); };
  sandbox::Runc runc;
  auto result = pipeline::estimate_job(options, console, runc);
  progress->clear();
  if (!result) return report_error(result.error());
  const report::Report& r = result->report;
  std::cout << fmt::format("{} on {}: dry run {} ({:.1f} s)\n", r.job_name, r.platform, r.verdict,
                           r.duration_s);
  if (!result->parts || !r.estimate) {
    std::cout << "no training step was measured (the job must train for two steps): nothing to estimate\n";
  } else {
    if (const auto& here = result->here) {
      std::cout << fmt::format(
          "here: the step took {} in the dry run; built from its {} parts ({} calls) it takes {} "
          "({} benchmarked now, {} from the cache, {} not rebuilt: their time in the job, marked *)\n",
          human_duration(r.estimate->step_seconds_here), here->parts, here->calls,
          human_duration(here->seconds), result->bench.benchmarked, result->bench.cached,
          here->unbenchmarked);
    } else {
      std::cout << fmt::format(
          "here: the step took {} in the dry run; its {} parts were not benchmarked "
          "(--no-bench: their times here, marked *, are the job's)\n",
          human_duration(r.estimate->step_seconds_here), result->parts->parts.size());
    }
    if (!result->projections.empty()) print_parts(result->projections.front(), std::cout);
    for (const auto& projection : result->projections) print_projection(projection, *r.estimate, std::cout);
  }
  if (!args.json.empty()) {
    std::ofstream out(args.json, std::ios::trunc);
    out << estimate_json(*result).dump(2) << "\n";
    if (!out.flush()) return report_error(Error::runtime("cannot write " + args.json));
  }
  return report::exit_status_of(r.verdict);
}

}  // namespace

Command estimate_command() {
  return {"estimate",
          "How long the job would hold the platform's GPUs and what it costs, built from its layers",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<EstimateArgs>();
            app.add_option("job", args->job, "the job file (default: ./job.yaml), of any kind `run` takes");
            add_read_options(app, *args);
            app.add_option("--platform", args->platform, "platform profile: a name or a .yaml file");
            app.add_option("--image", args->image, "image reference, instead of the job's");
            app.add_option("--gpu", args->gpus,
                           "a GPU model of policies/gpus.yaml (repeatable; default: the "
                           "platform's)");
            app.add_option("--json", args->json, "write the estimate, every part, as JSON to FILE");
            app.add_option("--budget", args->budget, "seconds of repeats per part benchmarked (default 0.2)")
                ->check(CLI::Range(0.0, 10.0));
            app.add_flag("--no-bench", args->no_bench,
                         "project onto the GPUs without benchmarking the step's parts here (no step "
                         "built on this machine)");
            app.add_flag("-q,--quiet", args->quiet, "no progress on stderr");
            return [args] { return estimate(*args); };
          }};
}

}  // namespace preflight::cli
