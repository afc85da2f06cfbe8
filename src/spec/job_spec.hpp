// job.yaml v1 (docs/formats.md): what the user wants run, as written, with the location of
// every value that a later error may need to point at.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

struct InputSpec {
  std::string name;
  std::filesystem::path path;  // absolute, resolved against the job file's folder; empty for a literal
  SourceLocation where;        // of the input's entry
  // AzureML literal inputs (`epochs: 10`, `learning_rate: 0.2`, `shuffle: true`): substituted
  // into ${{inputs.NAME}} as written; nothing is mounted.
  std::optional<std::string> value;
  SourceLocation path_where;  // of the path (or literal) value
};

struct OutputSpec {
  std::string name;
  SourceLocation where;
};

// A SageMaker-style hyperparameter (`hyperparameters: {epochs: 2, optimizer: adam}`); how it
// reaches the job is the platform profile's (docs/formats.md).
struct Hyperparameter {
  std::string name;
  std::string value;   // as written
  bool typed = false;  // an unquoted number or boolean, as opposed to a string
  SourceLocation where;
};

struct DryrunSpec {
  int steps = 2;                              // batches per DataLoader loop
  std::chrono::milliseconds timeout{600000};  // whole dry run
  // Explicit values for the job's arguments in the dry run (argparse names such as "epochs"),
  // as written; they replace Preflight's own clamping for those names.
  std::map<std::string, std::string> args;
  std::optional<std::uint64_t> sample_above_bytes;  // inputs larger than this are sampled
  SourceLocation where;
};

// Something accepted but not acted on (AzureML's environment:), for the caller to show.
struct SpecNote {
  std::string message;
  SourceLocation where;
};

struct JobSpec {
  std::filesystem::path file;  // the job.yaml, absolute
  std::string name;            // default: the job file's folder name
  std::string platform;        // empty: not given (the caller picks --platform or philly);
                               // a profile file is made absolute against the job's folder
  SourceLocation platform_where;
  std::string image;  // empty: not given (the profile's default image)
  SourceLocation image_where;
  std::filesystem::path code_dir;  // absolute; default: the job file's folder
  std::optional<std::string> setup;
  SourceLocation setup_where;    // where the text starts (inside the quotes, if quoted)
  std::string command;           // raw, with ${{inputs.x}} / ${{outputs.y}} still in it
  SourceLocation command_where;  // where the text starts (inside the quotes, if quoted)
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::map<std::string, std::string> environment;
  std::vector<Hyperparameter> hyperparameters;  // in the order written
  int gpus = 0;
  int nodes = 1;
  std::optional<std::uint64_t> shm_bytes;  // resources.shm_size (AzureML); else the profile's
  DryrunSpec dryrun;
  std::vector<SpecNote> notes;
};

// Loads and validates a job file. Errors (exit 2) carry file:line:column; unknown keys get a
// did-you-mean. AzureML's $schema, type: command, environment, resources.instance_count and
// distribution are accepted.
Result<JobSpec> load_job(const std::filesystem::path& file);

// Replaces ${{inputs.NAME}} and ${{outputs.NAME}} in `text` with the given paths. An unknown
// reference is an error at `where` (the column points into the string where possible).
Result<std::string> substitute_references(const std::string& text,
                                          const std::map<std::string, std::string>& inputs,
                                          const std::map<std::string, std::string>& outputs,
                                          const SourceLocation& where);

}  // namespace preflight::spec
