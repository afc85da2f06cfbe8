// The Python that builds a SageMaker estimator, read as far as literals go, from a stranger's
// repository (issue 30): nesting far deeper than any estimator's is refused where it begins,
// and every position in a file of many literals is where it was written.
#include <gtest/gtest.h>

#include <string>

#include "formats/job_formats.hpp"
#include "test_support.hpp"
#include "util/input_bounds.hpp"

namespace preflight::formats {
namespace {

using preflight::testing::TempDir;

// An estimator whose hyperparameters are `value`, on line 5.
std::string estimator(const std::string& value) {
  return "from sagemaker.pytorch import PyTorch\n\nestimator = PyTorch(\n    entry_point=\"train.py\",\n"
         "    hyperparameters=" +
         value + ",\n)\n";
}

TEST(FormatsSageMakerPython, NestingDeeperThanTheBoundIsRefusedWhereItBegins) {
  TempDir dir;
  dir.write("train.py", "print('x')\n");
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(load_any_job(dir.write("ok.py", estimator(nested(kMaxNesting))), {}));
  // 500,000 levels: 1 MB, which recursed once per level until the stack ran out.
  for (std::size_t depth : {std::size_t{kMaxNesting} + 1, std::size_t{500'000}}) {
    auto job = load_any_job(dir.write("deep.py", estimator(nested(depth))), {});
    ASSERT_FALSE(job) << depth;
    EXPECT_EQ(job.error().kind, ErrorKind::BadInput);
    EXPECT_EQ(job.error().where.line, 5);
    EXPECT_EQ(job.error().where.column, 21 + kMaxNesting) << "the bracket one level too deep";
    EXPECT_NE(job.error().message.find("nested more than 64 deep"), std::string::npos) << job.error().message;
  }
}

TEST(FormatsSageMakerPython, PositionsInAFileOfManyLiteralsAreWhereTheyWereWritten) {
  TempDir dir;
  dir.write("train.py", "print('x')\n");
  // 2,000 hyperparameters, one a line from line 6, indented by their number's digits.
  constexpr int kCount = 2'000;
  std::string value = "{\n";
  for (int i = 0; i < kCount; ++i)
    value += std::string(std::to_string(i).size(), ' ') + "\"k" + std::to_string(i) +
             "\": " + std::to_string(i) + ",\n";
  auto job = load_any_job(dir.write("many.py", estimator(value + "}")), {});
  ASSERT_TRUE(job) << job.error().str();
  ASSERT_EQ(job->hyperparameters.size(), static_cast<std::size_t>(kCount));
  for (int i : {0, 9, 10, 1'234, kCount - 1}) {
    const auto& where = job->hyperparameters[static_cast<std::size_t>(i)].where;
    EXPECT_EQ(where.line, 6 + i) << i;
    // The value, after the indent, the quoted key and ": ".
    const auto digits = static_cast<int>(std::to_string(i).size());
    EXPECT_EQ(where.column, digits + (digits + 3) + 2 + 1) << i;
  }
}

}  // namespace
}  // namespace preflight::formats
