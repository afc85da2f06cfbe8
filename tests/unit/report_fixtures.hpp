// Shared by the report tests: the report of a dry run that failed at its checkpoint, the
// example behind every golden file in tests/golden/.
#pragma once

#include "report/report.hpp"

namespace preflight::report::fixtures {

inline Report sample_report() {
  Report r;
  r.verdict = "fail";
  r.job_name = "mnist";
  r.job_file = "job.yaml";
  r.job_path = "/home/ana/mnist/job.yaml";
  r.code_dir = "/home/ana/mnist";
  r.platform = "philly";
  r.image_ref = "pytorch";
  r.image_digest = "sha256:0123456789abcdef";
  r.stages = {{"setup", "absent", 0},      {"init", "passed", 0.5},        {"data", "passed", 0.25},
              {"model", "passed", 0.125},  {"train", "passed", 1.5},       {"validate", "passed", 0.25},
              {"checkpoint", "failed", 0}, {"evaluate", "not_reached", 0}, {"predict", "not_reached", 0}};
  model::Finding f;
  f.rule = "torch-save-read-only";
  f.category = "Permission Denied";
  f.dimension = "Execution Environment";
  f.root_cause = "Environment Difference";
  f.stage = "checkpoint";
  f.message = "torch.save cannot write /philly/code/model.pt: the code folder is read-only on the platform";
  f.location = {"train.py", 18, 0};
  f.hint = "write checkpoints to ${{outputs.model}}";
  f.prediction = model::Prediction::Confirmed;
  f.predicted = {{"path-not-on-platform",
                  "the path \"model.pt\" is in the code folder, read-only on philly",
                  {"train.py", 12, 0}}};
  r.findings = {f};
  r.clamps = {{"argparse --epochs", 14, 2, {"train.py", 40, 0}, "epochs"},
              {"lightning Trainer limit_val_batches", nullptr, 2, {}, ""}};
  r.notes = {"input \"mnist\" (over 1.0 GiB) sampled: 32 files kept, 9968 left out"};
  Estimate e;
  e.step_seconds_here = 0.25;
  e.data_seconds = 0.1;
  e.step_seconds = 0.002;
  e.iteration_seconds = 0.1;
  e.step_basis = "1.5 GFLOP at 40% of the Tesla P100-PCIE-16GB's 9.3 TFLOPS, at least 10 us per operator";
  e.batch_size = 64;
  e.steps_per_epoch = 938;
  e.epochs = 14;
  e.total_steps = 13132;
  e.run_hours = 13132 * 0.002 / 3600;
  e.gpus = 4;
  e.gpu_name = "Tesla P100-PCIE-16GB";
  e.gpu_needed_bytes = 1288490189;
  e.gpu_available_bytes = 17179869184;
  e.failure_stage = "checkpoint";
  e.failure_after_steps = 938;
  e.failure_after_hours = 938 * 0.002 / 3600;
  e.gpu_hours_saved = *e.failure_after_hours * 4;
  r.estimate = e;
  r.duration_s = 4.5;
  return r;
}

}  // namespace preflight::report::fixtures
