#include "diagnosis/job_words.hpp"

#include <cctype>
#include <string_view>

namespace preflight::diagnosis {

namespace {

using model::JobKind;

// A file is usually mounted through its folder: "/data/mnist/train.csv" → "/data/mnist".
std::string folder_to_mount(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string base = path.substr(slash + 1);
  if (base.find('.') == std::string::npos || slash == 0 || slash == std::string::npos) return path;
  return path.substr(0, slash);
}

// A name for a new input: the folder's last component, as an identifier.
std::string input_name(const std::string& folder) {
  std::string base = folder.substr(folder.find_last_of("/\\") + 1);
  std::string name;
  for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ? "data" : name;
}

}  // namespace

std::string add_input_hint(const std::string& path, JobKind kind) {
  const std::string folder = folder_to_mount(path);
  const std::string name = input_name(folder);
  switch (kind) {
    case JobKind::JobYaml:
      break;
    case JobKind::PyTorchJob:
      return "mount it from a volume (a persistentVolumeClaim in the pod's volumes, mounted readOnly at " +
             folder +
             " by the container's volumeMounts), and give its local copy here with --map pvc://CLAIM=" +
             folder;
    case JobKind::TrainJob:
      return "give it as spec.initializer.dataset.storageUri and read it from /workspace/dataset, and its "
             "local copy here with --map URI=" +
             folder;
    case JobKind::VertexCustomJob:
      return "keep it in Cloud Storage and read it through /gcs/BUCKET/PATH, and give its local copy here "
             "with --map gs://BUCKET/PATH=" +
             folder;
    case JobKind::SageMakerEstimator:
      return "pass it to fit() as a channel ({\"" + name + "\": \"s3://BUCKET/PREFIX\"}) and read it from " +
             "the folder in SM_CHANNEL_" +
             [&] {
               std::string upper;
               for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
               return upper;
             }() +
             " (/opt/ml/input/data/" + name +
             "), and give its local copy here with --map s3://BUCKET/PREFIX=" + folder;
    case JobKind::SlurmBatch:
      return "keep it on the cluster's shared file system and name that folder in the script, and give its "
             "local copy here with --map /CLUSTER/FOLDER=" +
             folder;
  }
  std::string use = "${{inputs." + name + "}}";
  if (folder != path) use += path.substr(folder.size());
  return "add it as an input in job.yaml (inputs: {" + name + ": {path: " + folder + "}}) and use " + use +
         " in place of the literal path";
}

std::string cluster_folder_hint(const std::string& path) {
  return "if " + path + " is on the cluster's shared file system, give the dry run its local copy: --map " +
         folder_to_mount(path) + "=./LOCAL";
}

namespace {

// Each kind's words; "NAME" in `set_variable` stands for the variable's name.
struct Words {
  JobKind kind;
  std::string_view input;         // where data the job reads comes from
  std::string_view output;        // where results go, when the job declares no output
  std::string_view command_line;  // where its command line is
  std::string_view set_variable;  // how a variable is set
};

constexpr Words kWords[] = {
    {JobKind::JobYaml, "an input in job.yaml, read from ${{inputs.NAME}}",
     "${{outputs.model}} (declare it in job.yaml: outputs: {model: {}})",
     "the command line in job.yaml (command:, after ${{...}} substitution)",
     "set it in job.yaml (environment_variables: {NAME: ...})"},
    {JobKind::PyTorchJob,
     "a read-only volume mount (volumeMounts; --map pvc://CLAIM=./LOCAL gives it data here)",
     "a writable volume (a persistentVolumeClaim mounted by the container's volumeMounts)",
     "the container's command and args", "set it in the container's env: ({name: NAME, value: ...})"},
    {JobKind::TrainJob, "the dataset initializer (spec.initializer.dataset, read from /workspace/dataset)",
     "a writable volume (a persistentVolumeClaim mounted by the container's volumeMounts)",
     "the container's command and args", "set it in the container's env: ({name: NAME, value: ...})"},
    {JobKind::VertexCustomJob,
     "Cloud Storage, read through /gcs/ (--map gs://BUCKET=./LOCAL gives it data here)",
     "Cloud Storage under baseOutputDirectory (AIP_MODEL_DIR, through its /gcs/ path)",
     "the worker pool's command and args", "set it in the worker pool's env: ({name: NAME, value: ...})"},
    {JobKind::SageMakerEstimator,
     "a fit() channel, read from its SM_CHANNEL_NAME folder (--map s3://BUCKET/PREFIX=./LOCAL gives it data "
     "here)",
     "SM_MODEL_DIR (/opt/ml/model, uploaded when the job ends)",
     "the estimator's hyperparameters (passed to the entry point as --NAME VALUE)",
     "set it in the estimator's environment={\"NAME\": ...}"},
    {JobKind::SlurmBatch,
     "a folder of the cluster's shared file system (--map /CLUSTER/FOLDER=./LOCAL gives it data here)",
     "a folder of the cluster's shared file system (the submit folder, or your scratch space)",
     "the command line in the script",
     "export it in the script (export NAME=...) or with #SBATCH --export=ALL,NAME=..."},
};

const Words& words(JobKind kind) {
  for (const Words& entry : kWords)
    if (entry.kind == kind) return entry;
  return kWords[0];
}

}  // namespace

std::string input_words(JobKind kind) { return std::string(words(kind).input); }

std::string output_words(const model::PlatformFacts& facts) {
  std::string listed;
  const model::MountFact* first = nullptr;
  for (const model::MountFact& mount : facts.mounts) {
    if (mount.kind != model::MountFact::Kind::Output) continue;
    if (!first) first = &mount;
    listed += (listed.empty() ? "" : ", ") +
              (mount.name.empty() || facts.job_kind != JobKind::JobYaml ? "" : mount.name + " at ") +
              mount.container_path;
  }
  if (!first) return std::string(words(facts.job_kind).output);
  // A kept folder of the platform's own (SageMaker's /opt/ml/model) is named by its path, as is
  // every output of a definition other than job.yaml.
  const bool by_name = !first->name.empty() && facts.job_kind == JobKind::JobYaml;
  return (by_name ? "${{outputs." + first->name + "}}" : first->container_path) + " (outputs: " + listed +
         ")";
}

std::string command_line_words(JobKind kind) { return std::string(words(kind).command_line); }

std::string set_variable_words(const std::string& name, JobKind kind) {
  std::string text(words(kind).set_variable);
  for (auto at = text.find("NAME"); at != std::string::npos; at = text.find("NAME", at + name.size()))
    text.replace(at, 4, name);
  return text;
}

}  // namespace preflight::diagnosis
