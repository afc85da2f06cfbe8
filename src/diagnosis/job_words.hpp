// What a hint asks the user to change, in the words of the definition the job was read from
// (job.yaml, a PyTorchJob, a Vertex AI custom job, a SageMaker estimator, a Slurm script):
// where data the job reads comes from, where results that outlive it go, how a variable is
// set. docs/diagnosis.md "Hints in the job's own words".
#pragma once

#include <string>

#include "model/job_kind.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// How to give the job data at `path` (a folder, or a file in one) from outside its image: for
// job.yaml "add it as an input in job.yaml (inputs: {mnist: {path: /data/mnist}}) and use
// ${{inputs.mnist}}/train.csv in place of the literal path".
std::string add_input_hint(const std::string& path, model::JobKind kind);

// A path of the cluster a Slurm script reads: "if /datasets/wiki/corpus.txt is on the
// cluster's shared file system, give the dry run its local copy: --map /datasets/wiki=./LOCAL".
std::string cluster_folder_hint(const std::string& path);

// Where data the job reads comes from, as a phrase: "an input in job.yaml (${{inputs.NAME}})",
// "a read-only volume mount (volumeMounts, with --map pvc://CLAIM=./LOCAL here)", ...
std::string input_words(model::JobKind kind);

// Where results that outlive the job go, as a phrase: the job's outputs (`facts.mounts`) when
// it has some, else how its definition declares one.
std::string output_words(const model::PlatformFacts& facts);

// The command line the job was given, as its definition holds it: "the command line in
// job.yaml (command:, after ${{...}} substitution)", "the container's command and args", ...
std::string command_line_words(model::JobKind kind);

// How the variable `name` is set: "set it in job.yaml (environment_variables: {NAME: ...})",
// "set it in the container's env: ...", ...
std::string set_variable_words(const std::string& name, model::JobKind kind);

}  // namespace preflight::diagnosis
