#include "formats/job_formats.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "formats/readers.hpp"
#include "spec/job_io.hpp"
#include "util/text.hpp"

namespace preflight::formats {

namespace {

namespace fs = std::filesystem;

struct KindInfo {
  JobKind kind;
  std::string_view name;
  std::string_view platform;
  std::string_view described;
};

constexpr std::array<KindInfo, 6> kKinds = {{
    {JobKind::JobYaml, "job.yaml", "", "Preflight's or AzureML's command job"},
    {JobKind::PyTorchJob, "pytorchjob", "kubeflow", "a Kubeflow PyTorchJob"},
    {JobKind::TrainJob, "trainjob", "kubeflow", "a Kubeflow Trainer TrainJob"},
    {JobKind::VertexCustomJob, "vertex", "vertex", "a Vertex AI custom job"},
    {JobKind::SageMakerEstimator, "sagemaker", "sagemaker", "a SageMaker estimator's arguments"},
    {JobKind::SlurmBatch, "slurm", "slurm", "a Slurm batch script"},
}};

const KindInfo& info(JobKind kind) {
  for (const auto& entry : kKinds)
    if (entry.kind == kind) return entry;
  return kKinds[0];
}

bool is_batch_script(const std::string& text) {
  if (text.rfind("#!", 0) == 0) return true;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = text.find('\n', start);
    if (text.compare(start, 7, "#SBATCH") == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

std::string scalar_at(const YAML::Node& root, const char* key) {
  const YAML::Node node = root[key];
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

// Every place in the job that names the translation's text now names the source.
class Remap {
 public:
  Remap(const Translation& translation, fs::path shown_as)
      : translation_(translation), shown_as_(std::move(shown_as)) {}

  void operator()(SourceLocation& where) const {
    if (where.file != shown_as_) return;
    const SourceLocation origin = translation_.origin(where.line);
    where = origin.known() ? origin : SourceLocation{translation_.source(), 0, 0};
  }

  void operator()(spec::JobSpec& job) const {
    for (SourceLocation* where : {&job.platform_where, &job.image_where, &job.setup_where, &job.command_where,
                                  &job.code_mount_where, &job.dryrun.where, &job.time_limit_where})
      (*this)(*where);
    for (auto& input : job.inputs) (*this)(input.where), (*this)(input.path_where);
    for (auto& output : job.outputs) (*this)(output.where);
    for (auto& hyperparameter : job.hyperparameters) (*this)(hyperparameter.where);
    for (auto& note : job.notes) (*this)(note.where);
  }

 private:
  const Translation& translation_;
  fs::path shown_as_;
};

}  // namespace

std::string_view kind_name(JobKind kind) { return info(kind).name; }
std::string_view kind_platform(JobKind kind) { return info(kind).platform; }

Result<JobKind> kind_named(std::string_view name) {
  std::string names;
  for (const auto& entry : kKinds) {
    if (entry.name == name) return entry.kind;
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", entry.name, entry.described);
  }
  return Error::bad_input(fmt::format("--as {}: unknown kind of job file; one of {}", name, names));
}

Result<JobKind> detect_kind(const fs::path& file, const ReadOptions& options) {
  if (options.as) return *options.as;
  // A file that cannot be read or parsed is left to job.yaml's loader, which says why.
  const auto text = read_file(file);
  if (!text) return JobKind::JobYaml;
  if (file.extension() == ".py") return JobKind::SageMakerEstimator;  // the Python that builds one
  if (is_batch_script(*text)) return JobKind::SlurmBatch;
  auto doc = spec::YamlDoc::parse(*text, file);
  if (!doc || !doc->root().IsMap()) return JobKind::JobYaml;
  const YAML::Node& root = doc->root();
  const std::string api = scalar_at(root, "apiVersion");
  const std::string kind = scalar_at(root, "kind");
  if (root["entry_point"]) return JobKind::SageMakerEstimator;
  if (root["workerPoolSpecs"] ||
      (root["jobSpec"] && root["jobSpec"].IsMap() && root["jobSpec"]["workerPoolSpecs"]))
    return JobKind::VertexCustomJob;
  if (api.empty() && kind.empty()) return JobKind::JobYaml;
  if (kind == "PyTorchJob" && api.rfind("kubeflow.org/", 0) == 0) return JobKind::PyTorchJob;
  if (kind == "TrainJob" && api.rfind("trainer.kubeflow.org/", 0) == 0) return JobKind::TrainJob;
  return Error::bad_input(
      fmt::format(
          "{} {} is not a job definition Preflight reads; it reads a Kubeflow PyTorchJob "
          "(apiVersion: kubeflow.org/v1) or TrainJob (trainer.kubeflow.org), a Vertex AI custom job, a "
          "SageMaker estimator, a Slurm batch script and job.yaml",
          api.empty() ? "apiVersion (none)" : "apiVersion " + api,
          kind.empty() ? "kind (none)" : "kind " + kind),
      doc->at(root[kind.empty() ? "apiVersion" : "kind"]));
}

Result<Translation> translate(const fs::path& file, JobKind kind, const ReadOptions& options) {
  const auto text = read_file(file);
  if (!text)
    return Error::bad_input(fmt::format("{}: cannot read it (missing, not a regular file, or larger than {})",
                                        file.string(), human_size(kMaxReadBytes)));
  if (kind == JobKind::SlurmBatch) return translate_slurm(file, *text, options);
  if (kind == JobKind::SageMakerEstimator) return translate_sagemaker(file, *text, options);
  auto doc = spec::YamlDoc::parse(*text, file);
  if (!doc) return std::move(doc).error();
  if (!doc->root().IsMap())
    return Error::bad_input(
        fmt::format("expected {}, a YAML map, got {}", info(kind).described, spec::describe(doc->root())),
        doc->at(doc->root()));
  if (kind == JobKind::TrainJob) return translate_trainjob(*doc, options);
  if (kind == JobKind::VertexCustomJob) return translate_vertex(*doc, options);
  return translate_pytorchjob(*doc, options);
}

Result<spec::JobSpec> load_any_job(const fs::path& file, const ReadOptions& options) {
  auto kind = detect_kind(file, options);
  if (!kind) return std::move(kind).error();
  // A cluster folder is mapped where a Slurm script reads it; elsewhere an input says where
  // the job sees it (mount:).
  for (const auto& map : options.load.maps)
    if (!spec::is_cloud_path(map.prefix) && *kind != JobKind::SlurmBatch)
      return Error::bad_input(
          fmt::format("--map {}=...: a folder of the cluster maps only for a Slurm script; "
                      "for {} give a cloud path (s3://, gs://, pvc://...)",
                      map.prefix, kind_name(*kind)));
  if (*kind == JobKind::JobYaml) {
    if (!options.code_dir.empty())
      return Error::bad_input(
          "--code is for job definitions that do not name their code; a job.yaml names "
          "it with code:",
          SourceLocation{file, 0, 0});
    return spec::load_job(file, options.load);
  }
  auto translation = translate(file, *kind, options);
  if (!translation) return std::move(translation).error();
  // The text's locations name a file of their own, which the remap turns back into the source.
  const fs::path shown_as = file.string() + " (as job.yaml)";
  const Remap remap(*translation, shown_as);
  auto job = spec::load_job_text(translation->text(), shown_as, fs::absolute(file), options.load);
  if (!job) {
    remap(job.error().where);
    job.error().message +=
        fmt::format(" (preflight convert {} shows the job.yaml it stands for)", file.string());
    return std::move(job).error();
  }
  remap(*job);
  for (const auto& note : translation->notes()) job->notes.push_back(note);
  return job;
}

std::string relative_to_source(const Translation& out, const fs::path& path) {
  const fs::path absolute = fs::absolute(path).lexically_normal();
  const fs::path written =
      absolute.lexically_relative(fs::absolute(out.source()).lexically_normal().parent_path());
  return (written.empty() ? absolute : written).string();
}

void write_paths(Translation& out, const ReadOptions& options) {
  bool opened = false;
  for (const spec::PathMap& map : options.load.maps) {
    if (!spec::is_cloud_path(map.prefix)) continue;
    if (!opened) out.open(0, "paths", {}, "--map"), opened = true;
    out.field(1, map.prefix, {relative_to_source(out, map.local)}, {}, "--map " + map.prefix);
  }
}

fs::path code_folder(const ReadOptions& options) {
  return fs::absolute(options.code_dir.empty() ? fs::path(".") : options.code_dir).lexically_normal();
}

void write_code(Translation& out, const ReadOptions& options, const SourceLocation& from) {
  const std::string written = relative_to_source(out, code_folder(options));
  out.field(0, "code", {written}, from,
            options.code_dir.empty() ? "the current folder (--code DIR names another)" : "--code");
}

Result<std::vector<Found>> read_env_list(const spec::YamlDoc& doc, const spec::YamlField& env,
                                         Translation& out) {
  if (!env.value.IsSequence()) return doc.error(env, "expected a list of {name:, value:}");
  std::vector<Found> variables;
  for (std::size_t i = 0; i < env.value.size(); ++i) {
    const std::string path = fmt::format("{}[{}]", env.path, i);
    auto fields = doc.fields(env.value[i], path, {});
    if (!fields) return std::move(fields).error();
    std::optional<std::string> name;
    std::optional<Found> value;
    for (const spec::YamlField& field : *fields) {
      if (field.key == "name" || field.key == "value") {
        auto text = doc.string(field);
        if (!text) return std::move(text).error();
        if (field.key == "name")
          name = *text;
        else
          value = Found{*text, doc.at(field), field.path};
      } else {
        out.unmapped(doc.at(field.key_node), field.path,
                     field.key == "valueFrom"
                         ? "a Secret's, ConfigMap's or the pod's value is not known here; the "
                           "variable is not set in the dry run"
                         : "not used by the dry run");
      }
    }
    if (!name) return Error::bad_input(path + ": needs a name", doc.at(env.value[i]));
    if (value) variables.push_back(Found{value->text, value->from, *name});
  }
  return variables;
}

void write_environment(Translation& out, const std::vector<Found>& variables, std::string_view said) {
  if (variables.empty()) return;
  out.open(0, "environment_variables", variables.front().from, said);
  for (const Found& variable : variables)
    out.field(1, variable.said, {variable.text}, variable.from, std::string(said) + " " + variable.said);
}

std::optional<std::string> script_folder(const std::vector<std::string>& words, const fs::path& code_dir) {
  for (const std::string& word : words) {
    const fs::path path(word);
    if (!path.is_absolute() || !is_normal_absolute_path(word)) continue;
    fs::path tail = path.filename();
    for (fs::path dir = path.parent_path(); dir != dir.root_path(); dir = dir.parent_path()) {
      std::error_code ec;
      if (fs::is_regular_file(code_dir / tail, ec)) return dir.string();
      tail = dir.filename() / tail;
    }
  }
  return std::nullopt;
}

std::string job_name_of(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '-';
  return name;
}

std::string input_name(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "v_" + name;
  return name;
}

}  // namespace preflight::formats
