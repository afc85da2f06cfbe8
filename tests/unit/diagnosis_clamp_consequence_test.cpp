// A clamp must never fail a working job: a later step that asks for what the unclamped run
// would have written is a consequence of the dry run (docs/diagnosis.md "Consequences of a clamp").
#include <gtest/gtest.h>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

model::RunOutcome missing_after_clamp(const std::string& file, const std::string& original,
                                      const std::string& kind) {
  model::RunOutcome outcome =
      crashed("FileNotFoundError", "[Errno 2] No such file or directory: '" + file + "'", "evaluate",
              {harness::Frame{"/job/code/super_resolve.py", 12, "<module>", true}});
  outcome.events.exceptions[0].errno_value = 2;
  outcome.events.exceptions[0].path = file;
  outcome.events.clamps.push_back(
      {"argparse --nEpochs", original, "2", harness::Frame{"/job/code/main.py", 20, "<module>", true}, kind});
  return outcome;
}

TEST(DiagnosisClampConsequence, AFileNamedByTheLastEpochIsAConsequenceOfTheClamp) {
  model::Finding f = only_finding(missing_after_clamp("model_epoch_30.pth", "30", "epochs"));
  EXPECT_EQ(f.category, "Path Not Found");
  EXPECT_EQ(f.severity, model::Severity::Warning);
  EXPECT_TRUE(contains(f.message, "a consequence of the dry run, not of the job")) << f.message;
  EXPECT_TRUE(contains(f.message, "2 epochs instead of 30 (argparse --nEpochs at main.py:20)")) << f.message;
  EXPECT_TRUE(contains(f.hint, "dryrun: {args: {nEpochs: 30}}")) << f.hint;
}

TEST(DiagnosisClampConsequence, AMissingFileWithoutTheClampedCountIsTheJobsFailure) {
  model::Finding f = only_finding(missing_after_clamp("model_best.pth", "30", "epochs"));
  EXPECT_EQ(f.severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, ANumberThatIsPartOfALargerOneDoesNotCount) {
  model::Finding f = only_finding(missing_after_clamp("model_epoch_300.pth", "30", "epochs"));
  EXPECT_EQ(f.severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, AnIntervalClampIsNotACount) {
  model::Finding f = only_finding(missing_after_clamp("log_30.txt", "30", "interval"));
  EXPECT_EQ(f.severity, model::Severity::Error);
}

}  // namespace
}  // namespace preflight::diagnosis
