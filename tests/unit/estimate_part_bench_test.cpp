// The parts' benchmark results: read from layer_bench.py's output and from the cache as
// untrusted input (docs/estimate.md "Benchmarking the parts").
#include <gtest/gtest.h>

#include <filesystem>

#include "estimate/part_bench.hpp"
#include "test_support.hpp"

namespace preflight::estimate {
namespace {

const std::string kId(64, 'a');

TEST(EstimatePartBench, AResultLineOrAnError) {
  auto parsed =
      parse_bench_line(R"({"id": ")" + kId + R"(", "forward": 0.002, "backward": 0.004, "repeats": 7})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, kId);
  EXPECT_DOUBLE_EQ(parsed->second.forward, 0.002);
  EXPECT_DOUBLE_EQ(parsed->second.backward, 0.004);
  EXPECT_EQ(parsed->second.repeats, 7);
  parsed = parse_bench_line(R"({"id": ")" + kId + R"(", "error": "BadPart: no layer torch.nn.Foo"})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->second.error, "BadPart: no layer torch.nn.Foo");
}

TEST(EstimatePartBench, MalformedLinesAreNotResults) {
  for (const std::string& line :
       {std::string("not json"), std::string(R"({"id": "../../etc", "forward": 1, "backward": 1})"),
        R"({"id": ")" + kId + R"(", "forward": -1, "backward": 0})",
        R"({"id": ")" + kId + R"(", "forward": 1e300, "backward": 0})",
        R"({"id": ")" + kId + R"(", "forward": "fast", "backward": 0})", R"({"id": ")" + kId + R"("})"})
    EXPECT_FALSE(parse_bench_line(line)) << line;
}

TEST(EstimatePartBench, TheCacheKeepsResultsAndErrors) {
  testing::TempDir dir;
  const PartCache cache(dir.path() / "layers");
  EXPECT_FALSE(cache.find(kId));
  ASSERT_TRUE(cache.store(kId, {0.5, 1.5, 9, ""}));
  auto found = cache.find(kId);
  ASSERT_TRUE(found);
  EXPECT_DOUBLE_EQ(found->forward, 0.5);
  EXPECT_DOUBLE_EQ(found->backward, 1.5);
  const std::string other(64, 'b');
  ASSERT_TRUE(cache.store(other, {0, 0, 0, "TypeError: cannot rebuild"}));
  EXPECT_EQ(cache.find(other)->error, "TypeError: cannot rebuild");
  EXPECT_FALSE(cache.store("../escape", {1, 1, 1, ""}));  // not an id: never a path
  // Nothing but the results themselves is left behind (no temporary files).
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache.dir())) files += entry.is_regular_file();
  EXPECT_EQ(files, 2U);
}

TEST(EstimatePartBench, ACacheEntryThatIsALinkOrGarbageIsNotAResult) {
  testing::TempDir dir;
  const PartCache cache(dir.path());
  const auto secret = dir.write("secret.json", R"({"forward": 1, "backward": 1, "repeats": 1})");
  std::filesystem::create_symlink(secret, dir.path() / (kId + ".json"));
  EXPECT_FALSE(cache.find(kId));
  const std::string other(64, 'c');
  dir.write(other + ".json", "{\"forward\": ");
  EXPECT_FALSE(cache.find(other));
}

TEST(EstimatePartBench, TheMachineKeyNamesTheCpu) {
  const std::string key = machine_key();
  EXPECT_EQ(key.rfind("cpu-", 0), 0U);
  EXPECT_EQ(key.size(), 16U);
  EXPECT_EQ(key, machine_key());
}

}  // namespace
}  // namespace preflight::estimate
