// The readers of each kind of job definition (internal to job_formats.cpp).
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/job_formats.hpp"
#include "formats/translation.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::formats {

// A value of the source, where it was written and the field that holds it (for the comment).
struct Found {
  std::string text;
  SourceLocation from;
  std::string said;
};

// A container's image and the command it runs, as Kubernetes and Vertex write them: the
// command's words, then the args'.
struct Container {
  std::optional<Found> image;
  std::optional<Found> command_from;  // command: (or what stands for it, Vertex's pythonModule)
  SourceLocation args_from;
  std::vector<std::string> command, args;

  // Takes `field` when it is the image (a key of `image_keys`), command or args; false for
  // any other field.
  Result<bool> read(const spec::YamlDoc& doc, const spec::YamlField& field,
                    std::initializer_list<std::string_view> image_keys);
  std::vector<std::string> words() const;
};

// What every reader of a container writes alike: its image, when given; the code folder
// (write_code); code_mount, `working_dir` or else the folder of the script `words` names
// (script_folder); and the command, `words` quoted for the shell.
void write_container(Translation& out, const ReadOptions& options, const Container& container,
                     const std::vector<std::string>& words, const std::optional<Found>& working_dir = {});

// A Kubeflow PyTorchJob (kubeflow.org/v1).
Result<Translation> translate_pytorchjob(const spec::YamlDoc& doc, const ReadOptions& options);

// A SageMaker estimator's arguments, as a JSON or YAML file of them (fit()'s channels under
// inputs:), or in the Python that builds the estimator (a .py file), read, never run.
Result<Translation> translate_sagemaker(const spec::YamlDoc& doc, const ReadOptions& options);
Result<Translation> translate_sagemaker_python(const std::filesystem::path& file, const std::string& text,
                                               const ReadOptions& options);

// A Slurm batch script: its #SBATCH directives and the script.
Result<Translation> translate_slurm(const std::filesystem::path& file, const std::string& text,
                                    const ReadOptions& options);

// A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1).
Result<Translation> translate_trainjob(const spec::YamlDoc& doc, const ReadOptions& options);

// A Google Vertex AI CustomJob or its jobSpec, as `gcloud ai custom-jobs create --config` takes it.
Result<Translation> translate_vertex(const spec::YamlDoc& doc, const ReadOptions& options);

// A container's env: [{name: N, value: V}] (Kubernetes' and Vertex's form), in order, each
// Found's `said` the variable's name; a valueFrom (a Secret's value) is a note.
Result<std::vector<Found>> read_env_list(const spec::YamlDoc& doc, const spec::YamlField& env,
                                         Translation& out);

// The environment_variables: section of `variables` (said: their names).
void write_environment(Translation& out, const std::vector<Found>& variables, std::string_view said);

// Where the code is in the container when a definition does not say (its code is in the
// image): the folder that holds the script `words` names, when the code folder has the
// script at the same place below it ("/opt/app/src/train.py" and src/train.py: /opt/app).
std::optional<std::string> script_folder(const std::vector<std::string>& words,
                                         const std::filesystem::path& code_dir);

// The code folder --code gives, absolute (the current folder without it).
std::filesystem::path code_folder(const ReadOptions& options);

// What every reader writes the same way: the code folder (--code, or the current folder) as
// a path relative to the definition's folder, with the comment that says where it came from.
void write_code(Translation& out, const ReadOptions& options, const SourceLocation& from);

// `path` as a translation writes it: relative to the definition's folder where it can be.
std::string relative_to_source(const Translation& out, const std::filesystem::path& path);

// The cloud paths --map gave, as a paths: section (local paths relative to the definition's
// folder), so that the job.yaml runs without them.
void write_paths(Translation& out, const ReadOptions& options);

// A platform's job name as job.yaml's name: other characters than letters, digits, "-", "_"
// and "." become "-".
std::string job_name_of(std::string name);

// The input or output that a cluster or cloud location stands for, at `mount` in the job's
// container, named `name` (made an identifier).
std::string input_name(std::string name);

// input_name(name), made unique among `taken` with _2, _3, ... (a volume mounted twice, two
// folders of one bucket); the name is added to `taken`.
std::string unique_input_name(const std::string& name, std::vector<std::string>& taken);

}  // namespace preflight::formats
