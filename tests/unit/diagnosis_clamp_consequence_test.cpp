// A clamp must never fail a working job, nor excuse a failing one (docs/diagnosis.md
// "Consequences of a clamp"): a missing path is the dry run's doing only when the job's own
// evidence shows the chain — it wrote the same path at the count the dry run reached, after
// the clamp took effect and before the failure.
#include <gtest/gtest.h>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

// The exception strikes at t 0.6 in process 10 (fixtures::crashed).
model::RunOutcome missing(const std::string& file) {
  model::RunOutcome outcome =
      crashed("FileNotFoundError", "[Errno 2] No such file or directory: '" + file + "'", "evaluate",
              {harness::Frame{"/job/code/super_resolve.py", 12, "<module>", true}});
  outcome.events.exceptions[0].errno_value = 2;
  outcome.events.exceptions[0].path = file;
  return outcome;
}

harness::ClampEvent value_clamp(const std::string& original, const std::string& kind, double t = 0.2) {
  harness::ClampEvent clamp;
  clamp.what = "argparse --nEpochs";
  clamp.original = original;
  clamp.value = "2";
  clamp.where = harness::Frame{"/job/code/main.py", 20, "<module>", true};
  clamp.kind = kind;
  clamp.t = t;
  clamp.pid = 10;
  return clamp;
}

// The epoch loop `for epoch in range(1, 31)` at main.py:75, ended after 2 iterations.
harness::ClampEvent cut_loop() {
  harness::ClampEvent cut;
  cut.what = "for loop";
  cut.kind = "epochs";
  cut.original = "30";
  cut.last = 30;
  cut.value = "2";
  cut.where = harness::Frame{"/job/code/main.py", 75, "<module>", true};
  cut.cut = true;
  cut.t = 0.3;
  cut.pid = 10;
  return cut;
}

harness::SaveEvent saved(const std::string& path, double t = 0.4) {
  return {path, 10, harness::Frame{"/job/code/main.py", 80, "<module>", true}, t};
}

TEST(DiagnosisClampConsequence, TheSamePathWrittenAtTheClampedCountExcusesIt) {
  auto outcome = missing("/job/outputs/model/model_epoch_30.pth");
  outcome.events.clamps.push_back(value_clamp("30", "epochs"));
  outcome.events.saves.push_back(saved("/job/outputs/model/model_epoch_2.pth"));
  model::Finding f = only_finding(outcome);
  EXPECT_EQ(f.category, "Path Not Found");
  EXPECT_EQ(f.severity, model::Severity::Warning);
  EXPECT_TRUE(contains(f.message, "a consequence of the dry run, not of the job")) << f.message;
  EXPECT_TRUE(contains(f.message, "clamped to 2 epochs instead of 30 (argparse --nEpochs at main.py:20)"))
      << f.message;
  EXPECT_TRUE(contains(f.message,
                       "the job wrote /job/outputs/model/model_epoch_2.pth at main.py:80, the same "
                       "path with 2 in place of 30"))
      << f.message;
  EXPECT_TRUE(contains(f.hint, "dryrun: {args: {nEpochs: 30}}")) << f.hint;
}

TEST(DiagnosisClampConsequence, ACutLoopsLastValueInARelativePathIsMatchedAgainstWhatTheJobWrote) {
  auto outcome = missing("model_epoch_30.pth");
  outcome.events.clamps.push_back(cut_loop());
  outcome.events.saves.push_back(saved("/job/outputs/model_epoch_2.pth"));
  model::Finding f = only_finding(outcome);
  EXPECT_EQ(f.severity, model::Severity::Warning);
  EXPECT_TRUE(contains(f.message, "the for loop at main.py:75 was ended after 2 of its 30 iterations"))
      << f.message;
  EXPECT_TRUE(contains(f.hint, "nothing to change in the job")) << f.hint;
}

TEST(DiagnosisClampConsequence, ACountInTheFileNameAloneIsNoEvidence) {
  // The job reads shards/part-5.csv with --epochs 5: it never wrote a part, so the failure is
  // the job's, clamp or not.
  auto outcome = missing("/philly/code/shards/part-5.csv");
  outcome.events.clamps.push_back(value_clamp("5", "epochs"));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, AFailureBeforeTheClampTookEffectIsTheJobs) {
  auto outcome = missing("/job/outputs/model/model_epoch_30.pth");
  outcome.events.clamps.push_back(value_clamp("30", "epochs", 0.5));
  outcome.events.exceptions[0].t = 0.45;
  outcome.events.saves.push_back(saved("/job/outputs/model/model_epoch_2.pth", 0.3));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, AFileWrittenAfterTheFailureIsNoEvidence) {
  auto outcome = missing("/job/outputs/model/model_epoch_30.pth");
  outcome.events.clamps.push_back(value_clamp("30", "epochs"));
  outcome.events.saves.push_back(saved("/job/outputs/model/model_epoch_2.pth", 0.9));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, APathThatDiffersElsewhereIsNoEvidence) {
  auto outcome = missing("/job/outputs/model/model_epoch_30.pth");
  outcome.events.clamps.push_back(value_clamp("30", "epochs"));
  outcome.events.saves.push_back(saved("/job/outputs/other/model_epoch_2.pth"));
  outcome.events.saves.push_back(saved("/job/outputs/model/model_epoch_30.pth.tmp"));
  outcome.events.saves.push_back(saved("/job/outputs/model/best_epoch_2.pth"));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, AFileTheJobLeftInItsOutputFolderIsEvidence) {
  auto outcome = missing("/job/outputs/model/epoch30/weights.npz");
  outcome.events.clamps.push_back(value_clamp("30", "epochs"));
  model::PlatformFacts facts = philly();
  std::string listed;
  facts.host_folder_names = [&](const std::string& host_dir, const std::string& relative) {
    listed = host_dir + " " + relative;
    return std::vector<std::string>{"weights.npz"};
  };
  // The folder epoch30 itself is what the number is in: its parent holds epoch2.
  EXPECT_EQ(only_finding(outcome, facts).severity, model::Severity::Error);
  EXPECT_EQ(listed, "/tmp/run/outputs/model epoch30");

  auto named = missing("/job/outputs/model/weights_30.npz");
  named.events.clamps.push_back(value_clamp("30", "epochs"));
  facts.host_folder_names = [](const std::string&, const std::string& relative) {
    return relative == "." ? std::vector<std::string>{"weights_1.npz", "weights_2.npz"}
                           : std::vector<std::string>{};
  };
  model::Finding f = only_finding(named, facts);
  EXPECT_EQ(f.severity, model::Severity::Warning);
  EXPECT_TRUE(contains(f.message,
                       "the job wrote /job/outputs/model/weights_2.npz, the same path with 2 in place "
                       "of 30"))
      << f.message;
}

TEST(DiagnosisClampConsequence, ANumberThatIsPartOfALargerOneDoesNotCount) {
  auto outcome = missing("/job/outputs/model/model_epoch_300.pth");
  outcome.events.clamps.push_back(value_clamp("30", "epochs"));
  outcome.events.saves.push_back(saved("/job/outputs/model/model_epoch_2.pth"));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

TEST(DiagnosisClampConsequence, AnIntervalClampIsNotACount) {
  auto outcome = missing("/job/outputs/model/log_30.txt");
  outcome.events.clamps.push_back(value_clamp("30", "interval"));
  outcome.events.saves.push_back(saved("/job/outputs/model/log_2.txt"));
  EXPECT_EQ(only_finding(outcome).severity, model::Severity::Error);
}

}  // namespace
}  // namespace preflight::diagnosis
