// Comparing two images: versions ordered as PEP 440 orders them, distributions and the
// environment compared by name.
#include <gtest/gtest.h>

#include "check/image_diff.hpp"

namespace preflight {
namespace {

TEST(CheckImageDiff, VersionsOrderAsPep440) {
  EXPECT_LT(check::compare_versions("1.13.0a0+gitunknown", "1.13.0"), 0);
  EXPECT_LT(check::compare_versions("1.13.1", "2.0"), 0);
  EXPECT_EQ(check::compare_versions("2.0", "2.0.0"), 0);
  EXPECT_GT(check::compare_versions("1.24.2", "1.9"), 0);
  EXPECT_LT(check::compare_versions("2.1.dev3", "2.1rc1"), 0);
  EXPECT_GT(check::compare_versions("2.1.post1", "2.1"), 0);
}

check::ImageInspection image(const std::string& ref, const std::string& python,
                             std::vector<std::pair<std::string, std::string>> dists,
                             std::vector<std::string> env) {
  check::ImageInspection i;
  i.ref = ref;
  i.os = "Debian GNU/Linux 12 (bookworm)";
  check::ModuleIndex index;
  index.python_version = python;
  for (const auto& [name, version] : dists) index.distributions.push_back({name, version, {}, {}, ""});
  i.python = index;
  i.config.env = std::move(env);
  return i;
}

TEST(CheckImageDiff, DistributionsAndEnvironmentByName) {
  auto a = image("old", "3.10.12", {{"torch", "1.13.1"}, {"numpy", "1.26.4"}, {"PyYAML", "6.0"}},
                 {"PATH=/usr/bin", "CUDA_HOME=/usr/local/cuda"});
  auto b = image("new", "3.11.2", {{"torch", "2.1.0"}, {"numpy", "1.24.2"}, {"scipy", "1.11"}},
                 {"PATH=/usr/bin:/opt/bin", "NCCL_DEBUG=WARN"});
  auto diff = check::diff_images(a, b);
  EXPECT_EQ(diff.python_before, "3.10.12");
  EXPECT_EQ(diff.python_after, "3.11.2");
  std::vector<std::string> got;
  for (const auto& c : diff.distributions) got.push_back(c.name + " " + c.kind);
  EXPECT_EQ(
      got, (std::vector<std::string>{"numpy downgraded", "pyyaml removed", "torch upgraded", "scipy added"}));
  got.clear();
  for (const auto& c : diff.environment) got.push_back(c.name + " " + c.kind);
  EXPECT_EQ(got, (std::vector<std::string>{"CUDA_HOME removed", "PATH changed", "NCCL_DEBUG added"}));
  EXPECT_EQ(check::to_json(diff)["distributions"][3]["before"], nullptr);
}

}  // namespace
}  // namespace preflight
