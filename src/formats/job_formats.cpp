#include "formats/job_formats.hpp"

#include <fmt/format.h>

#include <algorithm>
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

// A job file as read once: its text, and the text as YAML, parsed when first asked for.
class Source {
 public:
  explicit Source(fs::path file) : file_(std::move(file)), text_(spec::read_definition(file_)) {}

  const fs::path& file() const { return file_; }
  // An error when the file cannot be read (missing, not a regular file, too large).
  const Result<std::string>& text() const { return text_; }
  const Result<spec::YamlDoc>& doc() {
    if (!doc_) doc_.emplace(spec::YamlDoc::parse(text_ ? *text_ : std::string(), file_));
    return *doc_;
  }

 private:
  fs::path file_;
  Result<std::string> text_;
  std::optional<Result<spec::YamlDoc>> doc_;
};

Result<JobKind> detect(Source& source, const ReadOptions& options) {
  if (options.as) return *options.as;
  // A file that cannot be read or parsed is left to job.yaml's loader, which says why.
  if (!source.text()) return JobKind::JobYaml;
  if (source.file().extension() == ".py") return JobKind::SageMakerEstimator;  // the Python that builds one
  if (is_batch_script(*source.text())) return JobKind::SlurmBatch;
  const auto& doc = source.doc();
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

Result<Translation> translate(Source& source, JobKind kind, const ReadOptions& options) {
  const fs::path& file = source.file();
  if (!source.text()) return source.text().error();
  if (kind == JobKind::SlurmBatch) return translate_slurm(file, *source.text(), options);
  if (kind == JobKind::SageMakerEstimator && file.extension() == ".py")
    return translate_sagemaker_python(file, *source.text(), options);
  const auto& doc = source.doc();
  if (!doc) return doc.error();
  if (!doc->root().IsMap())
    return Error::bad_input(
        fmt::format("expected {}, a YAML map, got {}", info(kind).described, spec::describe(doc->root())),
        doc->at(doc->root()));
  if (kind == JobKind::SageMakerEstimator) return translate_sagemaker(*doc, options);
  if (kind == JobKind::TrainJob) return translate_trainjob(*doc, options);
  if (kind == JobKind::VertexCustomJob) return translate_vertex(*doc, options);
  return translate_pytorchjob(*doc, options);
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
  Source source(file);
  return detect(source, options);
}

Result<JobFile> read_job_file(const fs::path& file, const ReadOptions& options) {
  Source source(file);
  auto kind = detect(source, options);
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
    auto job = spec::load_job(file, options.load);
    if (!job) return std::move(job).error();
    return JobFile{*kind, std::move(*job), std::nullopt};
  }
  auto translation = translate(source, *kind, options);
  if (!translation) return std::move(translation).error();
  // The text's locations name a file of their own, which the remap turns back into the source.
  const fs::path shown_as = file.string() + " (as job.yaml)";
  const Remap remap(*translation, shown_as);
  // The code folder of a definition that names none is the user's (--code, else where they
  // ran Preflight): the job may name it as it names its own tree.
  spec::LoadOptions load = options.load;
  if (const fs::path code = code_folder(options); code != code.root_path())
    load.grant.folders.push_back(code);
  auto job = spec::load_job_text(translation->text(), shown_as, fs::absolute(file), load);
  if (!job) {
    remap(job.error().where);
    job.error().message +=
        fmt::format(" (preflight convert {} shows the job.yaml it stands for)", file.string());
    return std::move(job).error();
  }
  remap(*job);
  job->kind = *kind;
  for (const auto& note : translation->notes()) job->notes.push_back(note);
  return JobFile{*kind, std::move(*job), std::move(*translation)};
}

Result<spec::JobSpec> load_any_job(const fs::path& file, const ReadOptions& options) {
  auto read = read_job_file(file, options);
  if (!read) return std::move(read).error();
  return std::move(read->job);
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

std::string unique_input_name(const std::string& name, std::vector<std::string>& taken) {
  const std::string base = input_name(name);
  std::string unique = base;
  for (int n = 2; std::find(taken.begin(), taken.end(), unique) != taken.end(); ++n)
    unique = base + "_" + std::to_string(n);
  taken.push_back(unique);
  return unique;
}

Result<bool> Container::read(const spec::YamlDoc& doc, const spec::YamlField& field,
                             std::initializer_list<std::string_view> image_keys) {
  if (std::find(image_keys.begin(), image_keys.end(), field.key) != image_keys.end()) {
    auto text = doc.string(field);
    if (!text) return std::move(text).error();
    image = Found{*text, doc.at(field), field.path};
    return true;
  }
  if (field.key != "command" && field.key != "args") return false;
  auto list = doc.string_list(field);
  if (!list) return std::move(list).error();
  if (field.key == "command") {
    command = std::move(*list);
    command_from = Found{"", doc.at(field), field.path};
  } else {
    args = std::move(*list);
    args_from = doc.at(field);
  }
  return true;
}

std::vector<std::string> Container::words() const {
  std::vector<std::string> words = command;
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

void write_container(Translation& out, const ReadOptions& options, const Container& container,
                     const std::vector<std::string>& words, const std::optional<Found>& working_dir) {
  if (container.image)
    out.field(0, "image", {container.image->text}, container.image->from, container.image->said);
  write_code(out, options, {});
  if (working_dir)
    out.field(0, "code_mount", {working_dir->text}, working_dir->from, working_dir->said);
  else if (auto folder = script_folder(words, code_folder(options)))
    out.field(0, "code_mount", {*folder}, container.command_from->from,
              "the folder of the script the command runs, found in the code folder");
  out.field(0, "command", {quote_shell_words(words)}, container.command_from->from,
            container.command_from->said + (container.args_from.known() ? " and args" : ""));
}

}  // namespace preflight::formats
