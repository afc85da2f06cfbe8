// The stage of a failure is the operation that failed, not the loop around it
// (docs/diagnosis.md "Stage of a failure").
#include <gtest/gtest.h>

#include "diagnosis/diagnosis.hpp"
#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

const char* kSerialization = "/usr/lib/python3/dist-packages/torch/serialization.py";

harness::Frame in_function(const std::string& function, int line = 42) {
  return harness::Frame{"/job/code/main.py", line, function, true};
}

harness::Frame torch_frame(const char* file, const std::string& function) {
  return harness::Frame{file, 100, function, false};
}

// A run that trained, then failed in `stage` with these frames.
model::RunOutcome failed_after_training(const std::string& stage, std::vector<harness::Frame> frames,
                                        const std::string& type = "RuntimeError",
                                        const std::string& message = "File best.pt cannot be opened.") {
  model::RunOutcome outcome = crashed(type, message, stage, std::move(frames));
  outcome.events.stages.insert(outcome.events.stages.begin() + 1, {"train", 0.3, 10, "", std::nullopt});
  return outcome;
}

TEST(DiagnosisOperationStage, ASaveOfTheBestModelInsideValidationIsACheckpointFailure) {
  auto outcome = failed_after_training(
      "validate", {in_function("main", 80), in_function("validate", 60), torch_frame(kSerialization, "save"),
                   torch_frame(kSerialization, "_open_zipfile_writer")});
  EXPECT_EQ(only_finding(outcome).stage, "checkpoint");
}

TEST(DiagnosisOperationStage, AJobFunctionThatSavesIsACheckpointFailureWhateverItCalls) {
  auto outcome =
      failed_after_training("validate",
                            {in_function("main", 80), in_function("save_checkpoint", 30),
                             torch_frame("/usr/lib/python3.11/shutil.py", "copyfile")},
                            "PermissionError", "[Errno 13] Permission denied: 'model_best.pth.tar'");
  EXPECT_EQ(only_finding(outcome).stage, "checkpoint");
}

TEST(DiagnosisOperationStage, ACacheWrittenBesideTheInputIsDataPreparation) {
  model::RunOutcome outcome =
      crashed("PermissionError", "[Errno 30] Read-only file system: '/job/inputs/mnist/cache.pt'",
              "checkpoint", {in_function("prepare", 12), torch_frame(kSerialization, "save")});
  outcome.events.exceptions[0].path = "/job/inputs/mnist/cache.pt";
  EXPECT_EQ(only_finding(outcome).stage, "data");
}

TEST(DiagnosisOperationStage, ASaveWhileTheDataIsPreparedBeforeTrainingStaysData) {
  model::RunOutcome outcome =
      crashed("RuntimeError", "File /job/code/features.pt cannot be opened.", "data",
              {in_function("build_features", 12), torch_frame(kSerialization, "save")});
  EXPECT_EQ(only_finding(outcome).stage, "data");
}

TEST(DiagnosisOperationStage, LoadingTheTrainedModelToTestItIsEvaluation) {
  auto outcome =
      failed_after_training("train", {in_function("main", 90), torch_frame(kSerialization, "load")},
                            "FileNotFoundError", "[Errno 2] No such file or directory: 'model_best.pt'");
  EXPECT_EQ(only_finding(outcome).stage, "evaluate");
}

TEST(DiagnosisOperationStage, LoadingWeightsBeforeTrainingKeepsTheJobsStage) {
  model::RunOutcome outcome =
      crashed("FileNotFoundError", "[Errno 2] No such file or directory: 'resnet.pt'", "model",
              {in_function("main", 20), torch_frame(kSerialization, "load")});
  EXPECT_EQ(only_finding(outcome).stage, "model");
}

TEST(DiagnosisOperationStage, AFailureInsideTheDataLoaderIsData) {
  auto outcome = failed_after_training(
      "train",
      {in_function("main", 70),
       torch_frame("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", "__next__"),
       torch_frame("/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py", "fetch"),
       in_function("__getitem__", 15)},
      "KeyError", "'label'");
  EXPECT_EQ(only_finding(outcome).stage, "data");
}

TEST(DiagnosisOperationStage, AShapeErrorInTheModelStaysTraining) {
  auto outcome = failed_after_training("train", {in_function("main", 70), library_frame()}, "RuntimeError",
                                       "mat1 and mat2 shapes cannot be multiplied (4x10 and 12x2)");
  EXPECT_EQ(only_finding(outcome).stage, "train");
}

}  // namespace
}  // namespace preflight::diagnosis
