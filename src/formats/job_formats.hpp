// Job definitions as teams already have them (docs/formats.md "Other platforms' job files"):
// Preflight's and AzureML's job.yaml, a Kubeflow PyTorchJob or TrainJob, a Vertex AI custom
// job, a SageMaker estimator, a Slurm batch script. Each kind
// is recognised by its content and translated into the job.yaml that stands for it, which
// `preflight run` loads and `preflight convert` prints; errors and findings point back into
// the file as written.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "formats/translation.hpp"
#include "spec/job_spec.hpp"
#include "util/error.hpp"

namespace preflight::formats {

using model::JobKind;

// The name --as takes and the report shows ("job.yaml", "pytorchjob", "trainjob", "vertex", "sagemaker",
// "slurm").
std::string_view kind_name(JobKind kind);
// The platform profile a kind runs on unless --platform says otherwise; empty for job.yaml,
// which names its own (or philly).
std::string_view kind_platform(JobKind kind);
Result<JobKind> kind_named(std::string_view name);  // an unknown name is an error naming them all

struct ReadOptions {
  std::optional<JobKind> as;       // --as: the kind, when its content does not say
  std::filesystem::path code_dir;  // --code: the code of a definition that names none; empty: "."
  spec::LoadOptions load;          // --map
};

// What kind of job definition `file` is, by its content (--as when given).
Result<JobKind> detect_kind(const std::filesystem::path& file, const ReadOptions& options);

// A job file as `preflight run` reads it: read and parsed once, its kind told, and another
// platform's definition translated into the job.yaml that stands for it, which is then loaded.
struct JobFile {
  JobKind kind;
  // For a translated one, every location in it (and in its errors) points into the file, and
  // what could not be mapped is among its notes.
  spec::JobSpec job;
  std::optional<Translation> translation;  // none for a job.yaml
};
Result<JobFile> read_job_file(const std::filesystem::path& file, const ReadOptions& options);

// The job that `file` defines, whatever its kind (read_job_file's job).
Result<spec::JobSpec> load_any_job(const std::filesystem::path& file, const ReadOptions& options);

}  // namespace preflight::formats
