// Attribution: the finding names the environment difference (what this machine has and the
// platform lacks) and says concretely what to change.
#include <gtest/gtest.h>

#include <set>

#include "diagnosis/attribution.hpp"
#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

// This machine has these paths and python modules.
model::PlatformFacts laptop_with(std::set<std::string> paths, std::set<std::string> modules = {}) {
  model::PlatformFacts facts = philly();
  facts.host_path_exists = [paths](const std::string& path) { return paths.count(path) > 0; };
  facts.host_has_module = [modules](const std::string& name) { return modules.count(name) > 0; };
  return facts;
}

model::RunOutcome not_found(const std::string& path) {
  model::RunOutcome outcome =
      crashed("FileNotFoundError", "[Errno 2] No such file or directory: '" + path + "'", "data");
  outcome.events.exceptions[0].errno_value = 2;
  outcome.events.exceptions[0].path = path;
  return outcome;
}

TEST(DiagnosisAttribution, APathOfThisMachineThatIsNotMounted) {
  model::Finding finding =
      only_finding(not_found("/data/mnist/train.csv"), laptop_with({"/data/mnist/train.csv"}));
  EXPECT_EQ(finding.category, "Path Not Found");
  EXPECT_EQ(finding.root_cause, "Environment Difference");
  EXPECT_TRUE(contains(finding.message,
                       "/data/mnist/train.csv exists on this machine but the platform does not "
                       "mount it"))
      << finding.message;
  EXPECT_EQ(finding.hint,
            "add it as an input in job.yaml (inputs: {mnist: {path: /data/mnist}}) and use "
            "${{inputs.mnist}}/train.csv in place of the literal path");
}

TEST(DiagnosisAttribution, AStorageUriGivenToAFileFunction) {
  model::Finding gcs = only_finding(not_found("gs://team/models/model.pt"), laptop_with({}));
  EXPECT_EQ(gcs.category, "Path Not Found");
  EXPECT_TRUE(contains(gcs.message, "gs://team/models/model.pt is a gs:// URI, not a path")) << gcs.message;
  EXPECT_EQ(
      gcs.hint,
      "Cloud Storage FUSE has it at /gcs/team/models/model.pt: use that path (replace gs:// with /gcs/), "
      "or a Cloud Storage client");
  model::Finding s3 = only_finding(not_found("s3://bucket/x.csv"), laptop_with({}));
  EXPECT_TRUE(contains(s3.hint, "the storage's own client library")) << s3.hint;
  // A relative path that merely holds ":" is a path.
  model::Finding relative = only_finding(not_found("runs/a://b"), laptop_with({}));
  EXPECT_FALSE(contains(relative.message, "URI")) << relative.message;
}

TEST(DiagnosisAttribution, ALaptopHomePath) {
  model::Finding finding = only_finding(not_found("/home/alice/datasets/cifar"), laptop_with({}));
  EXPECT_TRUE(contains(finding.message, "home folder of alice")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "${{inputs.cifar}}")) << finding.hint;

  model::Finding mac = only_finding(not_found("/Users/bob/x.csv"), philly());
  EXPECT_TRUE(contains(mac.message, "home folder of bob")) << mac.message;

  model::Finding windows = only_finding(not_found("C:\\data\\x.csv"), philly());
  EXPECT_TRUE(contains(windows.message, "Windows path")) << windows.message;

  // The platform user's own home is not a laptop path.
  model::Finding own = only_finding(not_found("/home/job/.cache/x"), philly());
  EXPECT_FALSE(contains(own.message, "home folder")) << own.message;
}

TEST(DiagnosisAttribution, AFileMissingFromTheMountedInput) {
  model::Finding finding =
      only_finding(not_found("/job/inputs/mnist/raw/train-images"), laptop_with({"/home/alice/mnist/data"}));
  EXPECT_TRUE(contains(finding.message,
                       "the local copy of input \"mnist\" (/home/alice/mnist/data) has no "
                       "raw/train-images either"))
      << finding.message;
  EXPECT_TRUE(contains(finding.hint, "${{inputs.mnist}}")) << finding.hint;
}

TEST(DiagnosisAttribution, AnOutputReadBeforeItWasWritten) {
  model::Finding finding = only_finding(not_found("/job/outputs/model/last.pt"), philly());
  EXPECT_TRUE(contains(finding.message, "outputs start empty on the platform")) << finding.message;
}

TEST(DiagnosisAttribution, TildeIsNotExpanded) {
  model::Finding finding = only_finding(not_found("~/data/x.csv"), philly());
  EXPECT_TRUE(contains(finding.message, "does not expand \"~\"")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "/home/job")) << finding.hint;
}

TEST(DiagnosisAttribution, NoDifferenceKeepsTheRulesHint) {
  model::Finding finding = only_finding(not_found("/data/typo.csv"), laptop_with({}));
  EXPECT_EQ(finding.message, "FileNotFoundError: [Errno 2] No such file or directory: '/data/typo.csv'");
  EXPECT_TRUE(contains(finding.hint, "/data/typo.csv does not exist in the container")) << finding.hint;
}

TEST(DiagnosisAttribution, AModuleOfThisMachineMissingFromTheImage) {
  model::RunOutcome outcome = crashed("ModuleNotFoundError", "No module named 'cv2'", "init");
  model::Finding finding = only_finding(outcome, laptop_with({}, {"cv2"}));
  EXPECT_TRUE(contains(finding.message, "cv2 is installed on this machine but not in image pytorch"))
      << finding.message;
  EXPECT_TRUE(contains(finding.hint, "pip install --user opencv-python-headless")) << finding.hint;

  model::Finding absent = only_finding(outcome, laptop_with({}, {}));
  EXPECT_FALSE(contains(absent.message, "installed on this machine")) << absent.message;
  EXPECT_TRUE(contains(absent.hint, "no module cv2")) << absent.hint;

  model::RunOutcome submodule = crashed("ModuleNotFoundError", "No module named 'timm.models'", "init");
  EXPECT_TRUE(contains(only_finding(submodule, laptop_with({}, {"timm"})).message,
                       "timm is installed on this machine"));
}

TEST(DiagnosisAttribution, WritingIntoTheReadOnlyCodeFolder) {
  model::RunOutcome outcome =
      crashed("PermissionError", "[Errno 13] Permission denied: 'checkpoints/model.pt'", "checkpoint");
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Permission Denied");
  EXPECT_EQ(finding.stage, "checkpoint");
  EXPECT_TRUE(contains(finding.message, "the code folder /job/code is read-only on the platform"))
      << finding.message;
  EXPECT_EQ(finding.hint, "write to ${{outputs.model}} (outputs: model at /job/outputs/model) instead");
}

TEST(DiagnosisAttribution, TorchSaveWithoutErrnoIsTiedToTheMount) {
  model::RunOutcome outcome =
      crashed("RuntimeError", "File /job/code/ckpt.pt cannot be opened.", "checkpoint");
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Permission Denied");
  EXPECT_EQ(finding.rule, "torch-save-cannot-open");
  EXPECT_TRUE(contains(finding.message, "the code folder /job/code is read-only")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "${{outputs.model}}")) << finding.hint;
}

TEST(DiagnosisAttribution, ReadOnlyInputAndNoOutputDeclared) {
  model::PlatformFacts facts = philly();
  facts.mounts.erase(facts.mounts.begin() + 2);  // no output
  model::RunOutcome outcome =
      crashed("OSError", "[Errno 30] Read-only file system: '/job/inputs/mnist/cache'");
  model::Finding finding = only_finding(outcome, facts);
  EXPECT_TRUE(contains(finding.message, "the input \"mnist\" at /job/inputs/mnist is read-only"))
      << finding.message;
  EXPECT_EQ(finding.hint,
            "write to ${{outputs.model}} (declare it in job.yaml: outputs: {model: {}}) instead");
}

// A job read from another platform's definition is told what to change there, in its words,
// never in job.yaml's.
TEST(DiagnosisAttribution, HintsSpeakTheJobsOwnDefinition) {
  model::PlatformFacts pytorchjob = laptop_with({"/data/mnist/train.csv"});
  pytorchjob.job_kind = model::JobKind::PyTorchJob;
  model::Finding unmounted = only_finding(not_found("/data/mnist/train.csv"), pytorchjob);
  EXPECT_EQ(unmounted.hint,
            "mount it from a volume (a persistentVolumeClaim in the pod's volumes, mounted readOnly at "
            "/data/mnist by the container's volumeMounts), and give its local copy here with --map "
            "pvc://CLAIM=/data/mnist");
  // An output is named by where the job sees it.
  model::Finding code = only_finding(
      crashed("PermissionError", "[Errno 13] Permission denied: 'checkpoints/model.pt'", "checkpoint"),
      pytorchjob);
  EXPECT_EQ(code.hint, "write to /job/outputs/model (outputs: /job/outputs/model) instead");

  model::PlatformFacts slurm = laptop_with({"/home/alice/data/x.csv"});
  slurm.job_kind = model::JobKind::SlurmBatch;
  EXPECT_TRUE(contains(only_finding(not_found("/home/alice/data/x.csv"), slurm).hint,
                       "keep it on the cluster's shared file system"));
  // A folder of the cluster the script reads is given by --map.
  const model::Finding cluster = only_finding(not_found("/datasets/wiki/corpus.txt"), slurm);
  EXPECT_TRUE(contains(cluster.message,
                       "a folder of the cluster is in the dry run only when --map gives its "
                       "local copy"))
      << cluster.message;
  EXPECT_EQ(cluster.hint,
            "if /datasets/wiki/corpus.txt is on the cluster's shared file system, give the dry run its local "
            "copy: --map /datasets/wiki=./LOCAL");
  model::RunOutcome key =
      crashed("KeyError", "'RANK'", "init", {user_frame(), library_frame("/usr/lib/python3.11/os.py")});
  const std::string env_hint = only_finding(key, slurm).hint;
  EXPECT_TRUE(contains(env_hint, "export it in the script (export RANK=...)")) << env_hint;

  model::PlatformFacts sagemaker = philly();
  sagemaker.job_kind = model::JobKind::SageMakerEstimator;
  sagemaker.mounts.erase(sagemaker.mounts.begin() + 2);  // no output
  const std::string read_only =
      only_finding(crashed("OSError", "[Errno 30] Read-only file system: '/job/inputs/mnist/cache'"),
                   sagemaker)
          .hint;
  EXPECT_EQ(read_only, "write to SM_MODEL_DIR (/opt/ml/model, uploaded when the job ends) instead");
  for (const auto& facts : {pytorchjob, slurm, sagemaker}) {
    for (const auto& outcome :
         {not_found("/data/mnist/train.csv"), not_found("/job/outputs/model/x"), not_found("~/data"), key}) {
      const std::string hint = only_finding(outcome, facts).hint;
      EXPECT_FALSE(contains(hint, "job.yaml") || contains(hint, "${{")) << hint;
    }
  }
}

TEST(DiagnosisAttribution, WritingIntoRootOwnedImageFolders) {
  model::RunOutcome outcome = crashed("PermissionError", "[Errno 13] Permission denied: '/opt/cache'");
  model::Finding finding = only_finding(outcome);
  EXPECT_TRUE(contains(finding.message, "the job runs as job (uid 1000), not root")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "${{outputs.model}}")) << finding.hint;
}

TEST(DiagnosisAttribution, PipInstallingIntoTheImagesPython) {
  model::Finding finding = only_finding(
      setup_failed(1, {"ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
                       "'/usr/local/lib/python3.11/dist-packages/timm'",
                       "Consider using the `--user` option or check the permissions."}));
  EXPECT_EQ(finding.category, "Permission Denied");
  EXPECT_EQ(finding.rule, "pip-permission-denied");
  EXPECT_EQ(finding.stage, "setup");
  EXPECT_TRUE(contains(finding.message, "not root")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "pip install --user")) << finding.hint;

  // Building a local package inside the read-only code folder.
  model::Finding local = only_finding(
      setup_failed(1, {"ERROR: Could not install packages due to an OSError: [Errno 30] Read-only file "
                       "system: '/job/code/build'"}));
  EXPECT_TRUE(contains(local.message, "the code folder /job/code is read-only")) << local.message;
}

TEST(DiagnosisAttribution, AnEnvironmentVariableThePlatformDoesNotSet) {
  model::RunOutcome outcome = crashed("KeyError", "'SM_MODEL_DIR'", "init",
                                      {user_frame(), library_frame("/usr/lib/python3.11/os.py")});
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Key Not Found");
  EXPECT_EQ(finding.root_cause, "Environment Difference");
  EXPECT_TRUE(contains(finding.message, "SM_MODEL_DIR is not set on platform philly")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "os.environ.get(\"SM_MODEL_DIR\"")) << finding.hint;
}

TEST(DiagnosisAttribution, MountOfTakesTheLongestPrefix) {
  std::vector<model::MountFact> mounts = {{model::MountFact::Kind::Code, "", "/job", "", true},
                                          {model::MountFact::Kind::Output, "m", "/job/outputs/m", "", false}};
  EXPECT_EQ(mount_of(mounts, "/job/outputs/m/x.pt")->name, "m");
  EXPECT_EQ(mount_of(mounts, "/job/outputs/m")->name, "m");
  EXPECT_EQ(mount_of(mounts, "/job/outputs/mm")->kind, model::MountFact::Kind::Code);
  EXPECT_EQ(mount_of(mounts, "/jobs"), nullptr);
}

}  // namespace
}  // namespace preflight::diagnosis
