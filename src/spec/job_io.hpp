// The inputs: and outputs: sections of job.yaml (internal to load_job).
#pragma once

#include <filesystem>
#include <vector>

#include "spec/job_spec.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::spec {

// `written` (as in job.yaml) resolved against the job's folder, normalised, without a
// trailing "/".
std::filesystem::path resolve_path(const std::filesystem::path& job_dir, const std::string& written);

// Whether the host folder `path` (after its links) is the root or lies in /proc, /sys or
// /dev: never a job's code or data, whatever a job file says.
bool is_system_folder(const std::filesystem::path& path);

// An unquoted number or boolean (`epochs: 10`, `shuffle: true`): how AzureML writes literal
// inputs, and a typed hyperparameter.
bool is_literal(const YAML::Node& node);

// A container path the job gives (mount:, code_mount:): absolute, normal, not "/" and not in
// /proc, /sys or /dev, which the container's own file systems hold.
Result<std::string> read_mount(const YamlDoc& doc, const YamlField& field);

// inputs: {NAME: {path: P, type: uri_folder, mode: ro_mount, mount: /data}} or NAME: P, or an
// AzureML literal (NAME: 10). Paths are resolved against `job_dir` and must exist; a cloud
// path (s3://...) is resolved through `maps` to its local copy; each must lie, after its
// links, in the job's folder tree or a folder of `grant`.
Result<std::vector<InputSpec>> read_inputs(const YamlDoc& doc, const YamlField& section,
                                           const std::filesystem::path& job_dir,
                                           const std::vector<PathMap>& maps, const HostGrant& grant);

// outputs: {NAME: {} | null | {type:, mode:, path:, mount:, ...}}.
Result<std::vector<OutputSpec>> read_outputs(const YamlDoc& doc, const YamlField& section);

// paths: {s3://bucket/prefix: ./local, ...}: each local path against `job_dir`, confined as
// inputs are.
Result<std::vector<PathMap>> read_paths(const YamlDoc& doc, const YamlField& section,
                                        const std::filesystem::path& job_dir, const HostGrant& grant);

}  // namespace preflight::spec
