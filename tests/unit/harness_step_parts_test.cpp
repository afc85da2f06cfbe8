// The measured step's parts as the harness reports them (docs/harness.md "Parts of the step"),
// read as untrusted input.
#include <gtest/gtest.h>

#include "harness/step_parts.hpp"

namespace preflight::harness {
namespace {

using nlohmann::json;

json conv_layer() {
  return json::parse(R"({"kind": "layer", "type": "torch.nn.Conv2d",
    "args": {"in_channels": 3, "out_channels": 8, "kernel_size": ["L", [3, 3]], "bias": true},
    "params": [["weight", [8, 3, 3, 3], "float32", true], ["bias", [8], "float32", true]],
    "training": true, "inputs": [["T", [4, 3, 16, 16], "float32", false]], "grad": true,
    "bytes": 40000, "flops": 221184, "calls": 2, "seconds_here": 0.003})");
}

TEST(HarnessStepParts, ALayerWithItsSignatureAndWhatItsBackwardComputes) {
  const StepParts parsed = parse_step_parts({{"pid", 7},
                                             {"torch", "1.13.0"},
                                             {"tf32", {{"matmul", false}, {"cudnn", true}}},
                                             {"parts", {conv_layer()}}});
  EXPECT_EQ(parsed.pid, 7);
  EXPECT_TRUE(parsed.tf32_cudnn);
  EXPECT_FALSE(parsed.tf32_matmul);
  EXPECT_EQ(parsed.autocast, "");
  EXPECT_EQ(parse_step_parts({{"autocast", "float16"}}).autocast, "float16");
  EXPECT_EQ(parse_step_parts({{"autocast", "$(reboot)"}}).autocast, "");
  ASSERT_EQ(parsed.parts.size(), 1U);
  const StepPart& part = parsed.parts[0];
  EXPECT_EQ(part.kind, "layer");
  EXPECT_EQ(part.name, "torch.nn.Conv2d");
  EXPECT_EQ(part.calls, 2);
  EXPECT_DOUBLE_EQ(part.flops, 221184);
  EXPECT_TRUE(part.grad);
  EXPECT_FALSE(part.input_grad);  // the batch: no gradient of its own
  EXPECT_TRUE(part.has_parameters);
  EXPECT_EQ(part.dtype, "float32");
  // The signature is what rebuilds it: no counts or times.
  EXPECT_FALSE(part.signature.contains("calls"));
  EXPECT_FALSE(part.signature.contains("seconds_here"));
  EXPECT_EQ(part.signature["args"]["out_channels"], 8);
}

TEST(HarnessStepParts, APartThatCannotBeRebuiltKeepsWhy) {
  json opaque = {
      {"kind", "op"}, {"func", "my_op"},      {"replayable", false}, {"why", "an argument of type Foo"},
      {"calls", 3},   {"seconds_here", 0.01}, {"bytes", 100},        {"flops", 10}};
  const StepParts parsed = parse_step_parts({{"parts", {opaque}}});
  ASSERT_EQ(parsed.parts.size(), 1U);
  EXPECT_TRUE(parsed.parts[0].signature.is_null());
  EXPECT_EQ(parsed.parts[0].why, "an argument of type Foo");
  EXPECT_DOUBLE_EQ(parsed.parts[0].seconds_here, 0.01);
}

TEST(HarnessStepParts, MalformedPartsAndFiguresAreLeftOut) {
  json no_calls = conv_layer();
  no_calls["calls"] = -4;
  json unknown = conv_layer();
  unknown["kind"] = "shell";
  json bad_numbers = conv_layer();
  bad_numbers["seconds_here"] = "fast";
  bad_numbers["flops"] = -1;
  bad_numbers["bytes"] = 1e300;
  json long_one = conv_layer();
  long_one["args"]["padding"] = std::string(kMaxPartSignatureBytes, 'x');
  const StepParts parsed = parse_step_parts({{"parts", {no_calls, unknown, 5, bad_numbers, long_one}}});
  ASSERT_EQ(parsed.parts.size(), 2U);
  EXPECT_DOUBLE_EQ(parsed.parts[0].seconds_here, 0);
  EXPECT_DOUBLE_EQ(parsed.parts[0].flops, 0);
  EXPECT_DOUBLE_EQ(parsed.parts[0].bytes, 0);
  EXPECT_TRUE(parsed.parts[1].signature.is_null());
  EXPECT_EQ(parsed.parts[1].why, "its description is too long to rebuild it");
}

TEST(HarnessStepParts, AtMostTheBoundOfParts) {
  json parts = json::array();
  for (std::size_t i = 0; i < kMaxStepParts + 50; ++i) parts.push_back(conv_layer());
  EXPECT_EQ(parse_step_parts({{"parts", parts}}).parts.size(), kMaxStepParts);
}

json embedding(int rows, int low, int high) {
  return {{"kind", "layer"},
          {"type", "torch.nn.Embedding"},
          {"args", {{"num_embeddings", 10000}, {"embedding_dim", 32}}},
          {"inputs", json::array({json::array({"T", {rows, 20}, "int64", false, {{"range", {low, high}}}})})},
          {"calls", 1}};
}

TEST(HarnessStepParts, OneIdForCallsThatDifferOnlyInTheirIndexValues) {
  const auto parsed = parse_step_parts(
      {{"parts", {embedding(35, 3, 9990), embedding(35, 0, 9999), embedding(36, 3, 9990), conv_layer()}}});
  ASSERT_EQ(parsed.parts.size(), 4U);
  EXPECT_EQ(parsed.parts[0].id.size(), 64U);
  EXPECT_EQ(parsed.parts[0].id, parsed.parts[1].id);
  EXPECT_NE(parsed.parts[0].id, parsed.parts[2].id);  // another shape
  EXPECT_NE(parsed.parts[0].id, parsed.parts[3].id);
  // The range stays in the signature: the benchmark draws its indices from it.
  EXPECT_EQ(parsed.parts[0].signature["inputs"][0][4]["range"][1], 9990);
  json opaque = conv_layer();
  opaque["replayable"] = false;
  EXPECT_EQ(parse_step_parts({{"parts", {opaque}}}).parts[0].id, "");  // never benchmarked
}

TEST(HarnessStepParts, ASignatureNestedTooDeepIsNotRebuilt) {
  json nested = json::array({1});
  for (int i = 0; i < 2000; ++i) nested = json::array({nested});
  json part = conv_layer();
  part["inputs"] = json::array({nested});
  const auto parsed = parse_step_parts({{"parts", {part}}});
  ASSERT_EQ(parsed.parts.size(), 1U);
  EXPECT_EQ(parsed.parts[0].id, "");
  EXPECT_TRUE(parsed.parts[0].signature.is_null());
  EXPECT_EQ(parsed.parts[0].why, "its description nests too deep to rebuild it");
}

}  // namespace
}  // namespace preflight::harness
