#include <gtest/gtest.h>

#include <string>

#include "estimate/gpu_table.hpp"
#include "spec/platform_profile.hpp"
#include "test_support.hpp"

namespace preflight::estimate {
namespace {

using preflight::testing::TempDir;

std::filesystem::path shipped() { return preflight::testing::source_dir() / "policies" / "gpus.yaml"; }

// A small valid table; each error test changes one piece of it.
const std::string kTable = R"(gpus:
  - name: Tesla V100-SXM2-16GB
    aliases: [V100, V100 16GB]
    memory: 16Gi
    tflops: {fp32: 15.7, fp16: 125}
    bandwidth: 900
    link: 150
    price: {usd_per_hour: 3.06, instance: AWS p3.2xlarge, source: "https://example.com/prices"}
    sources: ["https://example.com/v100.pdf"]
  - name: NVIDIA A100-SXM4-40GB
    aliases: [A100]
    memory: 40Gi
    tflops: {fp32: 19.5, tf32: 156, fp16: 312, bf16: 312}
    bandwidth: 1555
efficiency:
  matmul: {low: 0.3, typical: 0.6, high: 0.9}
  convolution: {low: 0.15, typical: 0.35, high: 0.6}
  recurrent: {low: 0.1, typical: 0.3, high: 0.6}
  attention: {low: 0.2, typical: 0.4, high: 0.7}
  memory: {low: 0.4, typical: 0.7, high: 0.9}
  launch_seconds: {low: 4.0e-6, typical: 6.0e-6, high: 1.0e-5}
internode_gb_s: 12.5
)";

// kTable with its one occurrence of `from` replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  const auto at = kTable.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(kTable.find(from, at + 1), std::string::npos) << from << " is not unique";
  std::string text = kTable;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

void expect_error(const Result<GpuTable>& table, int line, int column, const std::string& message) {
  ASSERT_FALSE(table.ok()) << "loaded without error";
  EXPECT_EQ(table.error().exit_status(), 2);
  EXPECT_EQ(table.error().where.line, line) << table.error().str();
  EXPECT_EQ(table.error().where.column, column) << table.error().str();
  EXPECT_EQ(table.error().message, message);
}

TEST(EstimateGpuTable, ShippedTableLoads) {
  EXPECT_EQ(shipped_gpu_table().filename(), "gpus.yaml");
  EXPECT_EQ(shipped_gpu_table().parent_path().filename(), "policies");
  auto table = load_gpu_table(shipped());
  ASSERT_TRUE(table.ok()) << table.error().str();
  for (const char* name :
       {"Tesla P100-PCIE-16GB", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", "Tesla V100-PCIE-16GB",
        "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-40GB", "H100-SXM5-80GB", "H100-PCIE-80GB", "H200",
        "Tesla T4", "A10G", "L4", "Tesla K80"}) {
    EXPECT_NE(table->find(name), nullptr) << name;
  }
  for (const GpuSpec& gpu : table->gpus) {
    EXPECT_FALSE(gpu.sources.empty()) << gpu.name << " names no source";
    EXPECT_GT(gpu.memory_bytes, 0u) << gpu.name;
    EXPECT_GT(gpu.bandwidth_gb_s, 0) << gpu.name;
    // Only the A10G, for which NVIDIA publishes no datasheet, has no compute figures.
    if (gpu.name != "NVIDIA A10G") {
      EXPECT_GT(gpu.fp32, 0) << gpu.name;
    }
    // Tensor-core rates are at least the CUDA cores' FP32 rate (dense figures, not halved twice).
    for (double peak : {gpu.tf32, gpu.fp16, gpu.bf16}) {
      if (peak > 0) {
        EXPECT_GT(peak, gpu.fp32) << gpu.name;
      }
    }
  }
  const GpuSpec* v100 = table->find("V100");
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(v100->memory_bytes, 16ull << 30);
  EXPECT_DOUBLE_EQ(v100->fp32, 15.7);
  EXPECT_DOUBLE_EQ(v100->fp16, 125);
  EXPECT_EQ(v100->tf32, 0);  // Volta's tensor cores take FP16 only
  EXPECT_EQ(v100->bf16, 0);
  ASSERT_TRUE(v100->price.has_value());
  EXPECT_DOUBLE_EQ(v100->price->usd_per_hour, 3.06);
  EXPECT_EQ(v100->price->instance, "AWS p3.2xlarge");
  const GpuSpec* a100 = table->find("A100 80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->tf32, 156);
  EXPECT_DOUBLE_EQ(a100->bf16, 312);
  EXPECT_DOUBLE_EQ(a100->bandwidth_gb_s, 2039);
  EXPECT_DOUBLE_EQ(a100->link_gb_s, 300);
  // The H200: the H100 SXM's compute, with more and faster memory.
  const GpuSpec* h200 = table->find("H200 SXM");
  const GpuSpec* h100 = table->find("H100");
  ASSERT_NE(h200, nullptr);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h200->name, "NVIDIA H200");
  EXPECT_EQ(h200->memory_bytes, 141ull << 30);
  EXPECT_DOUBLE_EQ(h200->bandwidth_gb_s, 4800);
  EXPECT_DOUBLE_EQ(h200->fp32, h100->fp32);
  EXPECT_DOUBLE_EQ(h200->tf32, h100->tf32);
  EXPECT_DOUBLE_EQ(h200->bf16, h100->bf16);
  EXPECT_FALSE(h200->price.has_value());
  // Measured by the GPU check kit on both Hopper cards (benchmarks/gpu/results/).
  EXPECT_EQ(h200->framework_bytes, 674ull << 20);
  EXPECT_EQ(h100->framework_bytes, 674ull << 20);
  EXPECT_EQ(table->find("V100")->framework_bytes, 0u);  // not measured
  for (const std::string& kind : gpu_work_kinds()) {
    const Efficiency& efficiency = table->efficiency(kind);
    EXPECT_GT(efficiency.low, 0) << kind;
    EXPECT_LE(efficiency.high, 1) << kind;
  }
  // Fitted to the GPU check kit's measurements (benchmarks/gpu/results/h200.json).
  EXPECT_DOUBLE_EQ(table->launch.typical, 2.3e-5);
  EXPECT_DOUBLE_EQ(table->step_overhead.typical, 1.6e-3);
  EXPECT_DOUBLE_EQ(table->internode_gb_s, 12.5);
}

TEST(EstimateGpuTable, EveryShippedProfileNamesAGpuOfTheTable) {
  auto table = load_gpu_table(shipped());
  ASSERT_TRUE(table.ok()) << table.error().str();
  const auto dir = preflight::testing::source_dir() / "policies" / "platforms";
  const auto platforms = spec::list_platforms(dir);
  ASSERT_FALSE(platforms.empty());
  for (const std::string& platform : platforms) {
    auto profile = spec::load_platform(platform, dir);
    ASSERT_TRUE(profile.ok()) << platform << ": " << profile.error().str();
    const GpuSpec* gpu = table->find(profile->gpu.name);
    ASSERT_NE(gpu, nullptr) << platform << "'s GPU \"" << profile->gpu.name << "\" is not in the table";
    // The profile and the table describe the same card.
    EXPECT_EQ(gpu->memory_bytes, profile->gpu.memory_bytes) << platform;
    if (profile->gpu.tflops > 0) {
      EXPECT_DOUBLE_EQ(gpu->fp32, profile->gpu.tflops) << platform;
    }
  }
}

TEST(EstimateGpuTable, FindsByNameOrAliasIgnoringCaseAndTheVendorPrefix) {
  TempDir dir;
  auto table = load_gpu_table(dir.write("gpus.yaml", kTable));
  ASSERT_TRUE(table.ok()) << table.error().str();
  const GpuSpec* v100 = &table->gpus[0];
  const GpuSpec* a100 = &table->gpus[1];
  EXPECT_EQ(table->find("Tesla V100-SXM2-16GB"), v100);
  EXPECT_EQ(table->find("tesla v100-sxm2-16gb"), v100);
  EXPECT_EQ(table->find("NVIDIA Tesla V100-SXM2-16GB"), v100);
  EXPECT_EQ(table->find("v100 16gb"), v100);
  EXPECT_EQ(table->find("  V100 "), v100);
  EXPECT_EQ(table->find("NVIDIA A100-SXM4-40GB"), a100);
  EXPECT_EQ(table->find("A100-SXM4-40GB"), a100);  // older drivers print no "NVIDIA "
  EXPECT_EQ(table->find("nvidia a100"), a100);
  EXPECT_EQ(table->find("A100 80GB"), nullptr);
  EXPECT_EQ(table->find("NVIDIA"), nullptr);
  EXPECT_EQ(table->find(""), nullptr);
  EXPECT_EQ(table->names(), (std::vector<std::string>{"Tesla V100-SXM2-16GB", "V100", "V100 16GB",
                                                      "NVIDIA A100-SXM4-40GB", "A100"}));
  EXPECT_DOUBLE_EQ(v100->link_gb_s, 150);
  EXPECT_EQ(a100->link_gb_s, 0);  // not given
  EXPECT_FALSE(a100->price.has_value());
  EXPECT_EQ(v100->price->source, "https://example.com/prices");
  EXPECT_DOUBLE_EQ(table->efficiency("convolution").typical, 0.35);
  EXPECT_DOUBLE_EQ(table->launch.high, 1e-5);
  EXPECT_EQ(table->step_overhead.typical, 0);  // not given: nothing a step
}

TEST(EstimateGpuTable, ABadNumberIsAnErrorAtItsValue) {
  TempDir dir;
  auto load = [&](const std::string& yaml) { return load_gpu_table(dir.write("gpus.yaml", yaml)); };
  expect_error(load(with("fp32: 15.7", "fp32: fast")), 5, 20,
               "gpus[0].tflops.fp32: expected a number, got \"fast\"");
  expect_error(load(with("bandwidth: 900", "bandwidth: -900")), 6, 16,
               "gpus[0].bandwidth: must be more than zero, got \"-900\"");
  expect_error(load(with("bandwidth: 900", "bandwidth: nan")), 6, 16,
               "gpus[0].bandwidth: must be more than zero, got \"nan\"");
  expect_error(load(with("bandwidth: 900", "bandwidth: 900000000")), 6, 16,
               "gpus[0].bandwidth: 900000000 is more than 1e+06; check the unit");
  expect_error(load(with("memory: 40Gi", "memory: 40 GB")), 12, 13,
               "gpus[1].memory: expected a size such as \"16Gi\", \"64Mi\" or \"1G\", got \"40 GB\"");
  expect_error(load(with("memory: 40Gi", "memory: 40Gi\n    framework: 0")), 13, 16,
               "gpus[1].framework: must be more than zero");
  expect_error(load(with("internode_gb_s: 12.5", "internode_gb_s: 0")), 22, 17,
               "internode_gb_s: must be more than zero, got \"0\"");
}

TEST(EstimateGpuTable, AnEfficiencyIsAFractionThatDoesNotDecrease) {
  TempDir dir;
  auto load = [&](const std::string& yaml) { return load_gpu_table(dir.write("gpus.yaml", yaml)); };
  expect_error(
      load(with("typical: 0.6, high: 0.9}", "typical: 0.6, high: 1.2}")), 16, 42,
      "efficiency.matmul.high: must be a fraction of the peak, more than 0 and at most 1, got \"1.2\"");
  expect_error(load(with("{low: 0.3, typical: 0.6", "{low: 0.7, typical: 0.6")), 16, 11,
               "efficiency.matmul: low, typical and high must not decrease, got 0.7, 0.6, 0.9");
  expect_error(load(with("  recurrent: {low: 0.1, typical: 0.3, high: 0.6}\n", "")), 16, 3,
               "efficiency: missing \"recurrent\"");
  expect_error(load(with("{low: 0.2, typical: 0.4, high: 0.7}", "{low: 0.2, high: 0.7}")), 19, 14,
               "efficiency.attention: missing \"typical\"");
  // Seconds, not fractions: a launch of 2 s is a unit slipped.
  expect_error(load(with("high: 1.0e-5", "high: 2")), 21, 56,
               "efficiency.launch_seconds.high: 2 is more than 1; check the unit");
}

TEST(EstimateGpuTable, AnUnknownKeyIsAnErrorWithASuggestion) {
  TempDir dir;
  auto load = [&](const std::string& yaml) { return load_gpu_table(dir.write("gpus.yaml", yaml)); };
  expect_error(load(with("    bandwidth: 900\n", "    bandwith: 900\n")), 6, 5,
               "unknown key \"bandwith\" in gpus[0]; did you mean \"bandwidth\"?");
  expect_error(load(with("  convolution:", "  convolutoin:")), 17, 3,
               "unknown key \"convolutoin\" in efficiency; did you mean \"convolution\"?");
  expect_error(load(with("internode_gb_s:", "internode_gbs:")), 22, 1,
               "unknown key \"internode_gbs\"; did you mean \"internode_gb_s\"?");
  expect_error(load(with("source: \"https", "url: \"https")), 8, 59,
               "unknown key \"url\" in gpus[0].price (valid keys: usd_per_hour, instance, source)");
}

TEST(EstimateGpuTable, ANameOrAliasGivenTwiceIsAnError) {
  TempDir dir;
  auto load = [&](const std::string& yaml) { return load_gpu_table(dir.write("gpus.yaml", yaml)); };
  expect_error(
      load(with("aliases: [A100]", "aliases: [A100, v100]")), 11, 21,
      "gpus[1].aliases[1]: \"v100\" is already a name or alias of \"Tesla V100-SXM2-16GB\" (line 3); names "
      "must differ ignoring case and a leading \"NVIDIA \"");
  expect_error(
      load(with("name: NVIDIA A100-SXM4-40GB", "name: NVIDIA Tesla V100-SXM2-16GB")), 10, 11,
      "gpus[1].name: \"NVIDIA Tesla V100-SXM2-16GB\" is already a name or alias of \"Tesla V100-SXM2-16GB\" "
      "(line 2); names must differ ignoring case and a leading \"NVIDIA \"");
}

TEST(EstimateGpuTable, AGpuNeedsItsNameMemoryAndBandwidth) {
  TempDir dir;
  auto load = [&](const std::string& yaml) { return load_gpu_table(dir.write("gpus.yaml", yaml)); };
  expect_error(load(with("    memory: 40Gi\n", "")), 10, 5, "gpus[1]: missing \"memory\"");
  expect_error(load(with("    bandwidth: 1555\n", "")), 10, 5, "gpus[1]: missing \"bandwidth\"");
  expect_error(load(with(", source: \"https://example.com/prices\"", "")), 8, 12,
               "gpus[0].price: missing \"source\"");
  expect_error(load(with("aliases: [A100]", "aliases: [\"\"]")), 11, 15,
               "gpus[1].aliases[0]: must not be empty");
  expect_error(load("gpus: []\n"), 1, 7, "gpus: must list at least one GPU");
  expect_error(load(kTable.substr(0, kTable.find("efficiency:"))), 1, 1,
               "the GPU table: missing \"efficiency\"");
  expect_error(load("# nothing yet\n"), 1, 1, "the GPU table is empty");
}

}  // namespace
}  // namespace preflight::estimate
