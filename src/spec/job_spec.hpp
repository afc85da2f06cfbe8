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

#include "model/job_kind.hpp"
#include "spec/host_grant.hpp"
#include "util/error.hpp"

namespace preflight::spec {

// A cloud or cluster location (`s3://bucket/prefix`, `gs://bucket`, `azureml://datastores/x`,
// `pvc://claim`) and the local copy or sample that stands for it in the dry run.
struct PathMap {
  std::string prefix;           // SCHEME://REST, without a trailing "/"
  std::filesystem::path local;  // absolute
  SourceLocation where;         // of the job's paths: entry; unknown for --map
};

struct InputSpec {
  std::string name;
  std::filesystem::path path;  // absolute, resolved against the job file's folder; empty for a literal
  SourceLocation where;        // of the input's entry
  // AzureML literal inputs (`epochs: 10`, `learning_rate: 0.2`, `shuffle: true`): substituted
  // into ${{inputs.NAME}} as written; nothing is mounted.
  std::optional<std::string> value;
  SourceLocation path_where;  // of the path (or literal) value
  std::string cloud;          // the cloud path written, when `path` is its mapped local copy
  std::string mount;          // where the job sees it (mount:); empty: the profile's mounts.input
};

struct OutputSpec {
  std::string name;
  SourceLocation where;
  std::string mount;  // where the job sees it (mount:); empty: the profile's mounts.output
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
  int steps = 2;  // batches per DataLoader loop
  int batch = 2;  // a DataLoader's batch size above this is sampled to it; 0: the job's own (docs/harness.md)
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
  // The definition it was read from (formats::read_job_file sets it for other platforms').
  model::JobKind kind = model::JobKind::JobYaml;
  std::string name;      // default: the job file's folder name
  std::string platform;  // empty: not given (the caller picks --platform or philly);
                         // a profile file is made absolute against the job's folder
  SourceLocation platform_where;
  std::string image;  // empty: not given (the profile's default image)
  SourceLocation image_where;
  std::filesystem::path code_dir;  // absolute; default: the job file's folder
  std::string code_mount;          // where the job sees its code (code_mount:); empty: the profile's
  SourceLocation code_mount_where;
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
  // How long the platform lets the whole run take (time_limit:, AzureML's limits.timeout);
  // the estimate compares the run's projected length with it.
  std::optional<std::chrono::seconds> time_limit;
  SourceLocation time_limit_where;
  std::vector<SpecNote> notes;
};

// What a job's loading takes from outside its file.
struct LoadOptions {
  std::vector<PathMap> maps;  // --map, searched before the job's paths:
  HostGrant grant;            // what the job may name outside its folder tree (--allow, ...)
};

// Loads and validates a job file. Errors (exit 2) carry file:line:column; unknown keys get a
// did-you-mean. AzureML's $schema, type: command, environment, resources.instance_count and
// distribution are accepted.
Result<JobSpec> load_job(const std::filesystem::path& file, const LoadOptions& options = {});

// The same for job.yaml text that stands for `job_file` (a job definition of another platform,
// translated): relative paths are against job_file's folder, and locations name `shown_as`.
Result<JobSpec> load_job_text(const std::string& text, const std::filesystem::path& shown_as,
                              const std::filesystem::path& job_file, const LoadOptions& options = {});

// A --map argument, PREFIX=LOCAL (LOCAL relative to `base_dir`); a malformed one is an error.
Result<PathMap> parse_path_map(const std::string& text, const std::filesystem::path& base_dir);

// Whether `text` names a cloud or cluster location (SCHEME://... or azureml:...), which a job
// reaches through a --map or paths: entry.
bool is_cloud_path(const std::string& text);

// The map of `maps` that gives the cloud path `written` its local copy: the longest prefix
// that matches whole path components; null for none.
const PathMap* find_path_map(const std::string& written, const std::vector<PathMap>& maps);

// The local path that find_path_map's map gives `written`, or nullopt.
std::optional<std::filesystem::path> map_cloud_path(const std::string& written,
                                                    const std::vector<PathMap>& maps);

// Replaces ${{inputs.NAME}} and ${{outputs.NAME}} in `text` with the given paths. An unknown
// reference is an error at `where` (the column points into the string where possible).
Result<std::string> substitute_references(const std::string& text,
                                          const std::map<std::string, std::string>& inputs,
                                          const std::map<std::string, std::string>& outputs,
                                          const SourceLocation& where);

}  // namespace preflight::spec
