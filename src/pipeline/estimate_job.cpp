#include "pipeline/estimate_job.hpp"

#include <fmt/format.h>

#include "check/image_python.hpp"
#include "diagnosis/during_run.hpp"
#include "model/run_layout.hpp"
#include "pipeline/estimate.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::pipeline {

namespace {

Result<std::vector<const estimate::GpuSpec*>> chosen_gpus(const std::vector<std::string>& names,
                                                          const JobContext& context) {
  std::vector<const estimate::GpuSpec*> out;
  const std::vector<std::string> wanted =
      names.empty() ? std::vector<std::string>{context.profile.gpu.name} : names;
  for (const auto& name : wanted) {
    const estimate::GpuSpec* gpu = context.gpus.find(name);
    if (gpu == nullptr) {
      if (names.empty())
        return Error::bad_input(
            fmt::format("the platform's GPU {:?} is not in {}; name one with --gpu, or add it "
                        "there",
                        name, estimate::shipped_gpu_table().string()));
      return Error::bad_input(fmt::format("--gpu {:?} is not in {}{}", name,
                                          estimate::shipped_gpu_table().string(),
                                          did_you_mean(name, context.gpus.names())));
    }
    out.push_back(gpu);
  }
  return out;
}

}  // namespace

Result<JobEstimate> estimate_job(const EstimateOptions& options, const Console& console,
                                 sandbox::ContainerRuntime& runtime) {
  const auto started = std::chrono::steady_clock::now();
  const DryRunOptions& run = options.run;
  auto context = load_job_context({run.job_file, run.platform, run.image, run.read}, console.progress);
  if (!context) return std::move(context).error();
  auto gpus = chosen_gpus(options.gpus, *context);
  if (!gpus) return std::move(gpus).error();
  auto report = dry_run_loaded(*context, run, console, runtime, started);
  if (!report) return std::move(report).error();

  JobEstimate out;
  out.report = std::move(*report);
  if (!out.report.estimate || out.report.run_dir.empty()) return out;
  const auto events = harness::read_events(model::RunLayout(out.report.run_dir).events());
  const harness::StepMeasure* step = harness::main_or_first(events.steps, events.main_pid);
  const harness::StepParts* parts = step ? measured_parts(events, step->pid) : nullptr;
  if (!parts) return out;
  out.parts = *parts;

  if (options.bench) {
    auto python = check::ImagePython::find(context->image.rootfs, context->image.config.env, runtime);
    if (!python)
      return Error::runtime("the image has no python3 or python to benchmark the step's parts with");
    const auto cache = estimate::PartCache::of_image(context->image.digest, parts->threads);
    auto bench = estimate::bench_parts(*python, *parts, cache, options.budget, console.progress);
    if (!bench) return std::move(bench).error();
    out.bench = std::move(*bench);
    out.here = estimate::construct_here(*parts, out.bench.times);
  }

  const report::Estimate& measured = *out.report.estimate;
  estimate::StepInputs inputs;
  inputs.parts = &*out.parts;
  inputs.replicas = step->replicas;
  inputs.data_seconds = measured.data_seconds;
  inputs.data_workers = measured.data_workers;
  inputs.gpus = std::max(1, measured.gpus);
  inputs.nodes = std::max(1, context->job.nodes);
  inputs.total_steps = measured.total_steps;
  inputs.here = options.bench ? &out.bench.times : nullptr;
  for (const estimate::GpuSpec* gpu : *gpus) {
    out.projections.push_back(estimate::project_step(inputs, *gpu, context->gpus));
    if (measured.gpus > 0) {  // the step was measured on the job's (virtual) GPUs
      model::PlatformFacts on_gpu;
      on_gpu.gpus = 1;
      on_gpu.gpu_memory_bytes = gpu->memory_bytes;
      on_gpu.gpu_framework_bytes = gpu->framework_bytes;
      if (auto need = diagnosis::gpu_memory_need(events, on_gpu))
        out.projections.back().memory_needed_bytes = need->needed_bytes;
    }
  }
  return out;
}

}  // namespace preflight::pipeline
