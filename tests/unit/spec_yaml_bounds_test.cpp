// YAML a stranger wrote to exhaust Preflight (issue 30): aliases that multiply, nesting far
// deeper than a job definition's, an alias inside its own anchor. Each is refused where it
// crosses the bound, before any reader writes the aliases out; documents within the bounds
// load as before.
#include <gtest/gtest.h>

#include <string>

#include "spec/yaml_bounds.hpp"
#include "spec/yaml_doc.hpp"
#include "test_support.hpp"
#include "util/data_dir.hpp"
#include "util/input_bounds.hpp"

namespace preflight::spec {
namespace {

// `levels` levels of nine aliases of the level before, under hyperparameters:, the first of nine
// strings (the billion laughs): 9^(levels + 1) strings once written out.
std::string nested_anchors(int levels) {
  std::string text = "entry_point: train.py\nhyperparameters:\n  l0: &l0 [";
  for (int i = 0; i < 9; ++i) text += i ? ",\"lol\"" : "\"lol\"";
  text += "]\n";
  for (int level = 1; level <= levels; ++level) {
    text += "  l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ",*l" : "*l") + std::to_string(level - 1);
    text += "]\n";
  }
  return text;
}

// `count` aliases of one string of `length` bytes, in a flow list.
std::string aliased_string(std::size_t length, int count) {
  std::string text = "command: &s \"" + std::string(length, 'x') + "\"\nargs: [";
  for (int i = 0; i < count; ++i) text += i ? ",*s" : "*s";
  return text + "]\n";
}

TEST(SpecYamlBounds, NestedAnchorsAreRefusedAtTheAliasThatCrossesTheBound) {
  const std::string laughs = nested_anchors(8);
  EXPECT_LT(laughs.size(), 600u) << "a few hundred bytes stand for 387,420,489 strings";
  auto doc = YamlDoc::parse(laughs, "estimator.yaml");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().kind, ErrorKind::BadInput);
  // Up to l4, the aliases add 74,718 values; l5's first (line 8) 66,430 more.
  EXPECT_EQ(doc.error().where.str(), "estimator.yaml:8:12");
  EXPECT_NE(doc.error().message.find("aliases, written out, add more than 100000 values"), std::string::npos)
      << doc.error().message;
  EXPECT_NE(doc.error().message.find("*l4 repeats 66430 values"), std::string::npos) << doc.error().message;

  EXPECT_TRUE(YamlDoc::parse(nested_anchors(4), "estimator.yaml")) << "66,429 strings are within the bound";
}

TEST(SpecYamlBounds, ALongStringCountsItsBytesEachTimeItIsAliased) {
  // 400 KB aliased 150,000 times is 60 GB written out; 11 times is past 4 MiB.
  for (int count : {150'000, 11}) {
    auto doc = YamlDoc::parse(aliased_string(400'000, count), "job.yaml");
    ASSERT_FALSE(doc) << count;
    EXPECT_EQ(doc.error().where.str(), "job.yaml:2:" + std::to_string(8 + 3 * 10)) << "the 11th alias";
    EXPECT_NE(doc.error().message.find("4.0 MiB of text"), std::string::npos) << doc.error().message;
  }
  EXPECT_TRUE(YamlDoc::parse(aliased_string(400'000, 10), "job.yaml"));
}

TEST(SpecYamlBounds, WhatTheTextHoldsCountsOnlyOnceAndAliasesUpToTheBound) {
  // Aliases of a one-character string: the bound, exactly, then one more.
  const auto aliases = [](std::uint64_t count) {
    std::string text = "a: &a 1\nb: [";
    for (std::uint64_t i = 0; i < count; ++i) text += i ? ",*a" : "*a";
    return text + "]\n";
  };
  EXPECT_TRUE(check_yaml_bounds(aliases(kMaxAliasedNodes), "job.yaml"));
  auto past = check_yaml_bounds(aliases(kMaxAliasedNodes + 1), "job.yaml");
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().where.column, static_cast<int>(5 + 3 * kMaxAliasedNodes));
  // Without aliases, twice as many values: what the text holds is bounded by its size.
  std::string plain = "args: [1";
  for (std::uint64_t i = 1; i < 2 * kMaxAliasedNodes; ++i) plain += ",1";
  EXPECT_TRUE(check_yaml_bounds(plain + "]\n", "job.yaml"));
}

TEST(SpecYamlBounds, NestingDeeperThanTheBoundIsRefusedWhereItBegins) {
  // The top map is the first level; each "[" one more.
  const auto flow = [](int brackets) {
    return "x: " + std::string(static_cast<std::size_t>(brackets), '[') +
           std::string(static_cast<std::size_t>(brackets), ']') + "\n";
  };
  EXPECT_TRUE(YamlDoc::parse(flow(kMaxNesting - 1), "job.yaml"));
  for (int brackets : {kMaxNesting, 150'000}) {
    auto doc = YamlDoc::parse(flow(brackets), "job.yaml");
    ASSERT_FALSE(doc) << brackets;
    EXPECT_EQ(doc.error().where.str(), "job.yaml:1:" + std::to_string(3 + kMaxNesting)) << brackets;
    EXPECT_NE(doc.error().message.find("nested more than 64 deep"), std::string::npos) << doc.error().message;
  }
  // Block maps, one a line: line n holds the key of the n-th level, and a scalar (no level) ends it.
  const auto block = [](int levels) {
    std::string text;
    for (int level = 0; level < levels; ++level)
      text += std::string(static_cast<std::size_t>(level), ' ') + "a:\n";
    return text + std::string(static_cast<std::size_t>(levels), ' ') + "b\n";
  };
  EXPECT_TRUE(YamlDoc::parse(block(kMaxNesting), "job.yaml"));
  for (int levels : {kMaxNesting + 1, 1000}) {
    auto doc = YamlDoc::parse(block(levels), "job.yaml");
    ASSERT_FALSE(doc) << levels;
    EXPECT_EQ(doc.error().where.line, kMaxNesting + 1) << doc.error().message;
  }
}

TEST(SpecYamlBounds, AnAliasCountsAsDeepAsTheNodeItNames) {
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  auto doc = YamlDoc::parse(
      "a: &a " + deep + "\nb: " + std::string(30, '[') + "*a" + std::string(30, ']') + "\n", "job.yaml");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().where.str(), "job.yaml:2:34");
  EXPECT_NE(doc.error().message.find("with *a written out"), std::string::npos) << doc.error().message;
}

TEST(SpecYamlBounds, AnAliasInsideTheNodeItNamesIsRefused) {
  // yaml-cpp would load a node that holds itself, which every reader walks without end.
  auto doc = YamlDoc::parse("command: python main.py\nenvironment_variables: &env {A: *env}\n", "job.yaml");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().where.str(), "job.yaml:2:33");
  EXPECT_NE(doc.error().message.find("*env is inside the node &env"), std::string::npos)
      << doc.error().message;
  EXPECT_TRUE(YamlDoc::parse("a: &a {x: 1}\nb: *a\nc: [*a, *a]\n", "job.yaml")) << "a complete node";
}

// The bounds take a parse of their own; Preflight's shipped policies and recipes are not a
// stranger's, and skip it (docs/benchmarks.md, a warm run's fixed cost). Only files named
// inside the data folder's policies/ and images/ are its own.
TEST(SpecYamlBounds, OnlyPreflightsOwnPoliciesAndRecipesAreNotMeasured) {
  testing::TempDir dir;
  testing::ScopedEnv data("PREFLIGHT_DATA_DIR", (dir.path() / "data").c_str());
  const std::string laughs = nested_anchors(8);
  for (const char* file : {"data/policies/rules/failures.yaml", "data/images/pytorch.yaml", "job/job.yaml",
                           "data/tests/jobs/bomb/job.yaml", "data/policies/../job.yaml"})
    dir.write(file, laughs);

  EXPECT_TRUE(is_shipped(dir.path() / "data/policies/rules/failures.yaml"));
  EXPECT_TRUE(YamlDoc::load(dir.path() / "data/policies/rules/failures.yaml"));
  EXPECT_TRUE(YamlDoc::load(dir.path() / "data/images/pytorch.yaml"));
  for (const char* file : {"job/job.yaml", "data/tests/jobs/bomb/job.yaml", "data/policies/../job.yaml"}) {
    EXPECT_FALSE(is_shipped(dir.path() / file)) << file;
    auto doc = YamlDoc::load(dir.path() / file);
    ASSERT_FALSE(doc) << file;
    EXPECT_NE(doc.error().message.find("aliases, written out"), std::string::npos) << doc.error().message;
  }
}

}  // namespace
}  // namespace preflight::spec
