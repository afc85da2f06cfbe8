// The step on a GPU built from its parts (docs/estimate.md "On the platform's GPU"), and the
// step built from its benchmarked parts here.
#include <gtest/gtest.h>

#include "estimate/projection.hpp"

namespace preflight::estimate {
namespace {

using harness::StepPart;

// Round figures, so that each expected time can be worked out by hand.
GpuTable table() {
  GpuTable t;
  t.efficiencies["matmul"] = {0.25, 0.5, 1.0, ""};
  t.efficiencies["convolution"] = {0.25, 0.5, 1.0, ""};
  t.efficiencies["recurrent"] = {0.25, 0.5, 1.0, ""};
  t.efficiencies["attention"] = {0.25, 0.5, 1.0, ""};
  t.efficiencies["memory"] = {0.5, 0.5, 0.5, ""};
  t.launch = {1e-6, 2e-6, 4e-6, ""};
  t.internode_gb_s = 10;
  return t;
}

GpuSpec gpu() {
  GpuSpec g;
  g.name = "Test GPU";
  g.fp32 = 10;  // TFLOPS
  g.tf32 = 100;
  g.bandwidth_gb_s = 1000;
  g.link_gb_s = 100;
  g.price = GpuPrice{2.0, "test-instance", ""};
  return g;
}

StepPart linear(double flops, long long calls = 1) {
  StepPart part;
  part.kind = "layer";
  part.name = "torch.nn.Linear";
  part.calls = calls;
  part.flops = flops;
  part.bytes = 1000;
  part.grad = true;
  part.has_parameters = true;
  part.dtype = "float32";
  part.signature = {{"kind", "layer"}, {"type", "torch.nn.Linear"}};
  part.id = std::string(64, 'a');
  return part;
}

StepPart relu(double bytes) {
  StepPart part;
  part.kind = "op";
  part.name = "torch.nn.functional.relu";
  part.calls = 1;
  part.flops = 1;
  part.bytes = bytes;
  part.grad = true;
  part.input_grad = true;
  part.dtype = "float32";
  part.signature = {{"kind", "op"}, {"func", "torch.nn.functional.relu"}};
  part.id = std::string(64, 'b');
  return part;
}

StepInputs inputs_of(const harness::StepParts& parts) {
  StepInputs in;
  in.parts = &parts;
  return in;
}

TEST(EstimateProjection, AComputeBoundLayerAtItsEfficiencyOfThePeak) {
  harness::StepParts parts;
  parts.parts = {linear(1e12)};  // forward, and backward's weight gradient (its input needs none)
  const auto p = project_step(inputs_of(parts), gpu(), table());
  ASSERT_EQ(p.parts.size(), 1U);
  EXPECT_EQ(p.parts[0].work, "matmul");
  EXPECT_EQ(p.parts[0].bound, "compute");
  EXPECT_DOUBLE_EQ(p.parts[0].flops, 2e12);
  // 2e12 FLOP at 50% of 10 TFLOPS, and two kernels at 2 us.
  EXPECT_NEAR(p.compute_typical, 0.4 + 4e-6, 1e-12);
  EXPECT_NEAR(p.compute_low, 0.2 + 2e-6, 1e-12);
  EXPECT_NEAR(p.compute_high, 0.8 + 8e-6, 1e-12);
  EXPECT_EQ(p.precision, "FP32");
  EXPECT_EQ(p.bound, "compute");
}

TEST(EstimateProjection, Tf32WhenTheJobAllowsItForMatrixProducts) {
  harness::StepParts parts;
  parts.parts = {linear(1e12)};
  parts.tf32_matmul = true;
  const auto p = project_step(inputs_of(parts), gpu(), table());
  EXPECT_EQ(p.precision, "TF32");
  EXPECT_NEAR(p.compute_typical, 0.04 + 4e-6, 1e-12);
  parts.tf32_matmul = false;
  parts.tf32_cudnn = true;  // convolutions only
  EXPECT_EQ(project_step(inputs_of(parts), gpu(), table()).precision, "FP32");
}

TEST(EstimateProjection, UnderCudaAutocastProductsRunInItsDtype) {
  harness::StepParts parts;
  parts.parts = {linear(1e12), relu(1e9)};
  parts.autocast = "float16";
  GpuSpec half = gpu();
  half.fp16 = 40;
  const auto p = project_step(inputs_of(parts), half, table());
  EXPECT_EQ(p.precision, "FP16");
  // The product at 50% of 40 TFLOPS; the activations half as wide.
  EXPECT_NEAR(p.parts[0].typical, 0.1 + 4e-6, 1e-12);
  EXPECT_DOUBLE_EQ(p.parts[1].bytes, 1e9);
}

TEST(EstimateProjection, ElementwiseWorkIsBoundByBandwidth) {
  harness::StepParts parts;
  parts.parts = {relu(1e9)};  // forward and its input's gradient: 2e9 bytes at 50% of 1 TB/s
  const auto p = project_step(inputs_of(parts), gpu(), table());
  EXPECT_EQ(p.parts[0].bound, "memory");
  EXPECT_NEAR(p.compute_typical, 4e-3 + 4e-6, 1e-12);
  EXPECT_EQ(p.bound, "memory");
}

TEST(EstimateProjection, TinyWorkIsBoundByKernelLaunches) {
  harness::StepParts parts;
  parts.parts = {relu(1000)};
  const auto p = project_step(inputs_of(parts), gpu(), table());
  EXPECT_EQ(p.parts[0].bound, "launch");
  EXPECT_EQ(p.bound, "launch");
}

TEST(EstimateProjection, TheLoopsOwnTimeIsAddedOnceAStep) {
  harness::StepParts parts;
  parts.parts = {relu(1e9), relu(1e9)};  // 4 ms each, bandwidth-bound, two launches each
  GpuTable t = table();
  t.step_overhead = {1e-3, 2e-3, 3e-3, ""};
  const auto p = project_step(inputs_of(parts), gpu(), t);
  EXPECT_NEAR(p.compute_low, 2 * (4e-3 + 2e-6) + 1e-3, 1e-12);
  EXPECT_NEAR(p.compute_typical, 2 * (4e-3 + 4e-6) + 2e-3, 1e-12);
  EXPECT_NEAR(p.compute_high, 2 * (4e-3 + 8e-6) + 3e-3, 1e-12);
  EXPECT_EQ(p.bound, "memory");
  EXPECT_NE(p.basis.find("and 1.0–3.0 ms a step of the loop's own"), std::string::npos) << p.basis;
  // Without it in the table, nothing is added and the basis does not name it.
  const auto bare = project_step(inputs_of(parts), gpu(), table());
  EXPECT_NEAR(bare.compute_typical, 2 * (4e-3 + 4e-6), 1e-12);
  EXPECT_EQ(bare.basis.find("a step of the loop's own"), std::string::npos);
}

TEST(EstimateProjection, APipelineSlowerThanTheStepMakesItInputBound) {
  harness::StepParts parts;
  parts.parts = {linear(1e12)};
  auto in = inputs_of(parts);
  in.data_seconds = 1.0;
  in.data_workers = 4;  // prefetched while the GPU computes
  auto p = project_step(in, gpu(), table());
  EXPECT_EQ(p.bound, "input");
  EXPECT_DOUBLE_EQ(p.step_typical, 1.0);
  in.data_workers = 0;  // loaded between steps
  p = project_step(in, gpu(), table());
  EXPECT_NEAR(p.step_typical, 1.4 + 4e-6, 1e-12);
}

TEST(EstimateProjection, GradientsAllReducedAcrossGpusAndNodes) {
  harness::StepParts parts;
  StepPart sgd;
  sgd.kind = "optimizer";
  sgd.name = "torch.optim.SGD";
  sgd.calls = 1;
  sgd.bytes = 3e9;  // three passes over 1 GB of parameters
  sgd.signature = {{"kind", "optimizer"}, {"groups", {{{"params", {{{1000}, "float32"}}}}}}};
  parts.parts = {linear(1e12), sgd};
  auto in = inputs_of(parts);
  in.gpus = 4;
  auto p = project_step(in, gpu(), table());
  // 2 (n - 1) / n of 1 GB over a 100 GB/s link.
  EXPECT_NEAR(p.allreduce_seconds, 1.5 * 1e9 / 100e9, 1e-12);
  EXPECT_NEAR(p.step_typical, p.compute_typical + p.allreduce_seconds, 1e-12);
  EXPECT_NEAR(p.step_low, p.compute_low, 1e-12);  // hidden behind backward at best
  in.nodes = 2;
  p = project_step(in, gpu(), table());
  EXPECT_NEAR(p.allreduce_seconds, 1.5 * 1e9 / 10e9, 1e-12);
}

TEST(EstimateProjection, TheRunsHoursAndItsCost) {
  harness::StepParts parts;
  parts.parts = {linear(1e12)};
  auto in = inputs_of(parts);
  in.gpus = 2;
  in.total_steps = 36000;
  const auto p = project_step(in, gpu(), table());
  ASSERT_TRUE(p.run_hours && p.gpu_hours && p.cost_usd);
  EXPECT_NEAR(*p.run_hours, 36000 * p.step_typical / 3600, 1e-9);
  EXPECT_NEAR(*p.gpu_hours, 2 * *p.run_hours, 1e-9);
  EXPECT_NEAR(*p.cost_usd, 2.0 * *p.gpu_hours, 1e-9);
  EXPECT_EQ(p.price_source, "test-instance");
}

TEST(EstimateProjection, DataParallelSplitsEachBatch) {
  harness::StepParts parts;
  parts.parts = {linear(1e12)};
  auto in = inputs_of(parts);
  in.replicas = 2;
  EXPECT_NEAR(project_step(in, gpu(), table()).compute_typical, 0.2 + 4e-6, 1e-12);
}

TEST(EstimateProjection, TheStepHereIsItsBenchmarkedPartsOrTheirTimeInTheJob) {
  harness::StepParts parts;
  StepPart opaque = relu(10);
  opaque.signature = nullptr;  // not rebuilt: its forward here, and its backward as much again
  opaque.id.clear();
  opaque.seconds_here = 0.5;
  parts.parts = {linear(1e9, 3), opaque};
  std::map<std::string, PartTime> here;
  here[parts.parts[0].id] = {0.1, 0.2, 5, ""};
  const Construction built = construct_here(parts, here);
  EXPECT_EQ(built.parts, 2);
  EXPECT_EQ(built.calls, 4);
  EXPECT_EQ(built.unbenchmarked, 1);
  EXPECT_NEAR(built.seconds, 3 * 0.3 + 2 * 0.5, 1e-12);
  const auto p = project_step(
      [&] {
        auto in = inputs_of(parts);
        in.here = &here;
        return in;
      }(),
      gpu(), table());
  ASSERT_TRUE(p.parts[0].here_seconds);
  EXPECT_TRUE(p.parts[0].benchmarked);
}

}  // namespace
}  // namespace preflight::estimate
