// The training step on a GPU model, built from its parts (docs/estimate.md "On the platform's
// GPU"): each part's time bounded by the roofline — the larger of its FLOPs at the GPU's peak
// for its precision and its bytes at the GPU's memory bandwidth, each scaled by the efficiency
// the GPU table gives its kind of work — plus its kernels' launches; then the data pipeline's
// pace measured here and, across GPUs, the gradients' all-reduce.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "estimate/gpu_table.hpp"
#include "estimate/part_bench.hpp"
#include "harness/events.hpp"
#include "report/report.hpp"

namespace preflight::estimate {

struct StepInputs {
  const harness::StepParts* parts = nullptr;
  int replicas = 1;                    // devices a DataParallel model splits each batch over
  std::optional<double> data_seconds;  // the training DataLoader's pace here
  int data_workers = 0;                // its workers; 0: it loads in the training process
  int gpus = 1;                        // the job's GPUs, all nodes
  int nodes = 1;
  std::optional<long long> total_steps;                   // the unclamped run's
  const std::map<std::string, PartTime>* here = nullptr;  // benchmarks, when run
};

// The kind of work a part is, for its efficiency: matmul, convolution, recurrent, attention,
// or memory (bound by bandwidth: elementwise, normalisation, pooling, copies, optimizers).
std::string work_of(const harness::StepPart& part);

// A training iteration: `compute` and the DataLoader's time per batch, the larger of the two
// when its workers prefetch while the step computes, else their sum.
double with_data_pipeline(double compute, std::optional<double> data_seconds, bool overlaps);

report::StepProjection project_step(const StepInputs& inputs, const GpuSpec& gpu, const GpuTable& table);

// The step built from its parts on this machine: each part's benchmarked time (forward and,
// when it has one, backward) times its calls; a part not benchmarked counts its time in the
// job. Nullopt without a benchmark.
struct Construction {
  double seconds = 0;
  int parts = 0;
  long long calls = 0;
  int unbenchmarked = 0;  // parts counted at their time in the job
};
Construction construct_here(const harness::StepParts& parts, const std::map<std::string, PartTime>& here);

}  // namespace preflight::estimate
