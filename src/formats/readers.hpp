// The readers of each kind of job definition (internal to job_formats.cpp).
#pragma once

#include <filesystem>
#include <string>

#include "formats/job_formats.hpp"
#include "formats/translation.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::formats {

// A Kubeflow PyTorchJob (kubeflow.org/v1).
Result<Translation> translate_pytorchjob(const spec::YamlDoc& doc, const ReadOptions& options);

// A Slurm batch script: its #SBATCH directives and the script.
Result<Translation> translate_slurm(const std::filesystem::path& file, const std::string& text,
                                    const ReadOptions& options);

// What every reader writes the same way: the code folder (--code, or the current folder) as
// a path relative to the definition's folder, with the comment that says where it came from.
void write_code(Translation& out, const ReadOptions& options, const SourceLocation& from);

// `path` as a translation writes it: relative to the definition's folder where it can be.
std::string relative_to_source(const Translation& out, const std::filesystem::path& path);

// The cloud paths --map gave, as a paths: section (local paths relative to the definition's
// folder), so that the job.yaml runs without them.
void write_paths(Translation& out, const ReadOptions& options);

// The input or output that a cluster or cloud location stands for, at `mount` in the job's
// container, named `name` (made an identifier).
std::string input_name(std::string name);

}  // namespace preflight::formats
