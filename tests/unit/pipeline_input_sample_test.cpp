// Large inputs are sampled with their layout kept; small ones are mounted whole.
#include <gtest/gtest.h>

#include <fstream>

#include "pipeline/input_sample.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

pipeline::SampleLimits tiny_limits() {
  pipeline::SampleLimits limits;
  limits.sample_above = 1000;
  limits.files_per_folder = 2;
  limits.text_lines = 3;
  limits.copy_below = 100;
  return limits;
}

std::string lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "row," + std::to_string(i) + "\n";
  return text;
}

TEST(PipelineInputSample, SmallInputsAreMountedWhole) {
  TempDir dir;
  dir.write("data/a.csv", lines(3));
  auto sample = pipeline::sample_input(dir.path() / "data", dir.path() / "sample", tiny_limits());
  ASSERT_TRUE(sample.ok());
  EXPECT_FALSE(sample->has_value());
  EXPECT_FALSE(fs::exists(dir.path() / "sample"));
}

TEST(PipelineInputSample, KeepsTheLayoutAFewFilesPerFolderAndTheFirstRecords) {
  TempDir dir;
  for (const char* cls : {"cat", "dog", "eel"})
    for (int i = 0; i < 5; ++i)
      dir.write(std::string("data/train/") + cls + "/" + std::to_string(i) + ".jpg", "img");
  dir.write("data/labels.csv", lines(200));
  dir.write("data/weights.bin", std::string(500, 'w'));
  const auto before = fs::last_write_time(dir.path() / "data/labels.csv");

  auto sample = pipeline::sample_input(dir.path() / "data", dir.path() / "sample", tiny_limits());
  ASSERT_TRUE(sample.ok()) << sample.error().str();
  ASSERT_TRUE(sample->has_value());
  const auto& s = **sample;
  EXPECT_EQ(s.root, dir.path() / "sample");
  for (const char* cls : {"cat", "dog", "eel"}) {
    EXPECT_TRUE(fs::exists(s.root / "train" / cls / "0.jpg")) << cls;
    EXPECT_TRUE(fs::exists(s.root / "train" / cls / "1.jpg")) << cls;
    EXPECT_FALSE(fs::exists(s.root / "train" / cls / "2.jpg")) << cls;
  }
  std::ifstream cut(s.root / "labels.csv");
  std::string text((std::istreambuf_iterator<char>(cut)), {});
  EXPECT_EQ(text, lines(3));
  ASSERT_EQ(s.file_mounts.size(), 1u);
  EXPECT_EQ(s.file_mounts[0].first, dir.path() / "data/weights.bin");
  EXPECT_EQ(s.file_mounts[0].second, fs::path("weights.bin"));
  EXPECT_EQ(s.files_cut, 1u);
  EXPECT_EQ(s.files_left_out, 9u);
  EXPECT_EQ(fs::last_write_time(dir.path() / "data/labels.csv"), before) << "the original is only read";
  EXPECT_NE(pipeline::describe("data", s, tiny_limits()).find("cut to their first 3 records"),
            std::string::npos);
}

TEST(PipelineInputSample, ALinkInTheDataStaysALinkAndNoHostFileIsCopied) {
  TempDir dir;
  dir.write("host/secret.csv", "TOPSECRET\n");
  dir.write("host/etc/passwd.txt", "TOPSECRET\n");
  dir.write("data/a/big.bin", std::string(2000, 'x'));
  fs::create_symlink(dir.path() / "host" / "secret.csv", dir.path() / "data" / "a" / "key.csv");
  fs::create_symlink(dir.path() / "host" / "etc", dir.path() / "data" / "etc");
  auto sample = pipeline::sample_input(dir.path() / "data", dir.path() / "sample", tiny_limits());
  ASSERT_TRUE(sample.ok() && sample->has_value());
  const fs::path out = dir.path() / "sample";
  EXPECT_TRUE(fs::is_symlink(out / "a" / "key.csv"));
  EXPECT_EQ(fs::read_symlink(out / "a" / "key.csv"), dir.path() / "host" / "secret.csv");
  EXPECT_TRUE(fs::is_symlink(out / "etc"));
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (!entry.is_symlink()) {
      EXPECT_TRUE(entry.is_directory() || entry.path().filename() == "big.bin") << entry.path();
    }
  }
  for (const auto& [original, relative] : (*sample)->file_mounts) {
    EXPECT_FALSE(fs::is_symlink(original)) << original;
  }
}

TEST(PipelineInputSample, ALargeTextFileIsCutToItsFirstRecords) {
  TempDir dir;
  dir.write("corpus.txt", lines(400));
  auto sample = pipeline::sample_input(dir.path() / "corpus.txt", dir.path() / "sample", tiny_limits());
  ASSERT_TRUE(sample.ok() && sample->has_value());
  EXPECT_EQ((**sample).root, dir.path() / "sample" / "corpus.txt");
  EXPECT_EQ(fs::file_size((**sample).root), lines(3).size());
}

TEST(PipelineInputSample, SmallTextFilesAreCutTooAndShortOnesKeptAsTheyAre) {
  TempDir dir;
  dir.write("data/blob.bin", std::string(2000, 'b'));
  dir.write("data/text/small.txt", lines(5));      // under copy_below, over text_lines
  dir.write("data/text/short.tsv", "a\tb\nc\td");  // two records, the last without a newline
  auto sample = pipeline::sample_input(dir.path() / "data", dir.path() / "sample", tiny_limits());
  ASSERT_TRUE(sample.ok() && sample->has_value());
  const auto& s = **sample;
  EXPECT_EQ(fs::file_size(s.root / "text/small.txt"), lines(3).size());
  std::ifstream kept(s.root / "text/short.tsv");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), {}), "a\tb\nc\td");
  EXPECT_EQ(s.files_cut, 1u) << "a text file with no more records than the limit is not counted as cut";
}

}  // namespace
}  // namespace preflight
