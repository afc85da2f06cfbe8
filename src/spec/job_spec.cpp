#include "spec/job_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "spec/job_io.hpp"
#include "spec/platform_profile.hpp"
#include "spec/references.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::spec {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {
    "name", "platform", "image", "code", "code_mount", "setup", "command", "inputs", "outputs",
    "environment_variables", "hyperparameters", "resources", "dryrun", "paths", "time_limit",
    // AzureML command-job keys, accepted so the same file can be submitted there.
    "$schema", "type", "display_name", "experiment_name", "description", "tags", "environment",
    "distribution", "compute", "limits"};
const std::vector<std::string> kResourceKeys = {"gpus", "nodes", "instance_count", "instance_type",
                                                "shm_size"};
const std::vector<std::string> kDryrunKeys = {"steps", "batch", "timeout", "args", "sample_above"};
const std::vector<std::string> kLimitsKeys = {"timeout"};

// A job's name names its run folder, container and cgroup (and the host name, cut to one DNS
// label): longer ones are typos, and file systems and runc refuse far longer ones.
constexpr std::size_t kMaxJobName = 128;

bool valid_job_name(const std::string& name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// A job without a name: its folder's, made valid (other characters become "-", at most
// kMaxJobName of them), else "job".
std::string default_job_name(const std::string& folder) {
  std::string name;
  for (char c : folder) {
    if (name.size() == kMaxJobName) break;
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (plain || !name.empty()) name += plain ? c : '-';
  }
  return valid_job_name(name) ? name : "job";
}

// Reads a string that must not be empty or blank.
Result<std::string> text(const YamlDoc& doc, const YamlField& field) {
  auto value = doc.string(field);
  if (!value) return value;
  if (value->find_first_not_of(" \t\r\n") == std::string::npos) {
    return doc.error(field, "must not be empty");
  }
  return value;
}

// The most GPUs a node of any platform has (HGX and DGX systems: 8 or 16), the most nodes a
// job may ask for, the most batches a dry run's loop may take: beyond them a number is a typo.
constexpr int kMaxGpus = 16;
constexpr int kMaxNodes = 4096;
constexpr int kMaxSteps = 100000;

Result<int> count(const YamlDoc& doc, const YamlField& field, int minimum, int maximum) {
  auto value = doc.integer(field);
  if (!value) return std::move(value).error();
  if (*value < minimum || *value > maximum) {
    return doc.error(field, fmt::format("must be between {} and {}, got {}", minimum, maximum, *value));
  }
  return static_cast<int>(*value);
}

Result<fs::path> read_code(const YamlDoc& doc, const YamlField& field, const fs::path& job_dir,
                           const HostGrant& grant) {
  auto written = text(doc, field);
  if (!written) return std::move(written).error();
  if (is_cloud_path(*written)) {
    return doc.error(field, "\"" + *written +
                                "\" is not a local folder; set code: to the "
                                "folder holding your training code");
  }
  const fs::path code = resolve_path(job_dir, *written);
  std::error_code ec;
  const auto status = fs::status(code, ec);
  if (!fs::exists(status)) {
    return doc.error(field, "code folder " + code.string() + " does not exist (\"" + *written +
                                "\", relative to " + job_dir.string() +
                                "); set code: to the folder holding your training code");
  }
  if (!fs::is_directory(status)) {
    return doc.error(field, code.string() +
                                " is not a folder; code: names the folder that is "
                                "uploaded with the job");
  }
  // The code folder is walked and uploaded whole: the host's root (or /proc, /sys, /dev)
  // never is a job's code.
  if (is_system_folder(code))
    return doc.error(field, code.string() +
                                " is a system folder, not a job's code; set code: to the folder "
                                "holding your training code");
  if (auto confined = confine_host_path(code, job_dir, grant, "code", doc.at(field)); !confined)
    return std::move(confined).error();
  return code;
}

Status read_resources(const YamlDoc& doc, const YamlField& section, JobSpec& job) {
  auto fields = doc.fields(section, kResourceKeys);
  if (!fields) return std::move(fields).error();
  const YamlField* nodes_field = nullptr;
  for (const YamlField& field : *fields) {
    if (field.key == "gpus") {
      auto value = count(doc, field, 0, kMaxGpus);
      if (!value) return std::move(value).error();
      job.gpus = *value;
    } else if (field.key == "nodes" || field.key == "instance_count") {
      if (nodes_field != nullptr) {
        return doc.error(field,
                         "give either resources.nodes or resources.instance_count, "
                         "not both (" +
                             nodes_field->key + " is on line " +
                             std::to_string(doc.at(nodes_field->key_node).line) + ")");
      }
      nodes_field = &field;
      auto value = count(doc, field, 1, kMaxNodes);
      if (!value) return std::move(value).error();
      job.nodes = *value;
    } else if (field.key == "instance_type") {
      if (auto value = doc.string(field); !value) return std::move(value).error();
    } else if (field.key == "shm_size") {
      auto bytes = doc.size(field);
      if (!bytes) return std::move(bytes).error();
      job.shm_bytes = *bytes;
    }
  }
  return Ok{};
}

Status read_dryrun(const YamlDoc& doc, const YamlField& section, DryrunSpec& dryrun) {
  dryrun.where = doc.at(section.key_node);
  auto fields = doc.fields(section, kDryrunKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "steps") {
      auto value = count(doc, field, 1, kMaxSteps);
      if (!value) return std::move(value).error();
      dryrun.steps = *value;
    } else if (field.key == "batch") {
      auto value = count(doc, field, 0, kMaxSteps);
      if (!value) return std::move(value).error();
      dryrun.batch = *value;
    } else if (field.key == "timeout") {
      auto value = doc.string(field);
      if (!value) return std::move(value).error();
      auto duration = parse_duration(*value);
      if (!duration) return doc.error(field, duration.error().message);
      if (duration->count() <= 0) return doc.error(field, "must be longer than zero");
      dryrun.timeout = *duration;
    } else if (field.key == "sample_above") {
      auto bytes = doc.size(field);
      if (!bytes) return std::move(bytes).error();
      dryrun.sample_above_bytes = *bytes;
    } else if (field.key == "args") {
      auto args = doc.fields(field, {});
      if (!args) return std::move(args).error();
      for (const YamlField& arg : *args) {
        auto value = doc.string(arg);
        if (!value) return std::move(value).error();
        dryrun.args[arg.key] = *value;
      }
    }
  }
  return Ok{};
}

Status read_environment_variables(const YamlDoc& doc, const YamlField& section, JobSpec& job) {
  auto fields = doc.fields(section, {});
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (!is_identifier(field.key)) {
      return Error::bad_input("environment variable name \"" + field.key +
                                  "\" must be letters, digits and \"_\", not starting with a digit",
                              doc.at(field.key_node));
    }
    if (field.value.IsNull()) {
      return doc.error(field, "expected a value, got nothing (write \"\" for an empty string)");
    }
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    job.environment[field.key] = *value;
  }
  return Ok{};
}

// Names as SageMaker's script mode passes them on (--name value, SM_HP_NAME): letters, digits,
// "_", "-" and ".", starting with a letter, digit or "_".
bool valid_hyperparameter_name(const std::string& name) {
  if (name.empty() || name[0] == '-' || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

Status read_hyperparameters(const YamlDoc& doc, const YamlField& section, JobSpec& job) {
  auto fields = doc.fields(section, {});
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (!valid_hyperparameter_name(field.key)) {
      return Error::bad_input(
          "hyperparameter name \"" + field.key + "\" must be letters, digits, \"_\", \"-\" and \".\"",
          doc.at(field.key_node));
    }
    if (field.value.IsNull()) {
      return doc.error(field, "expected a value, got nothing (write \"\" for an empty string)");
    }
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    job.hyperparameters.push_back(Hyperparameter{field.key, *value, is_literal(field.value), doc.at(field)});
  }
  return Ok{};
}

// time_limit: a duration ("2h", "1d12h"); AzureML's limits.timeout: seconds.
Status read_time_limit(const YamlDoc& doc, const YamlField& field, JobSpec& job) {
  auto value = doc.string(field);
  if (!value) return std::move(value).error();
  const bool seconds = field.key == "timeout";
  const bool plain = !value->empty() && value->find_first_not_of("0123456789") == std::string::npos;
  if (seconds && !plain)
    return doc.error(field, "expected a whole number of seconds, got \"" + *value + "\"");
  auto duration = parse_duration(seconds ? *value + "s" : *value);
  if (!duration) return doc.error(field, duration.error().message);
  if (*duration < std::chrono::seconds(1)) return doc.error(field, "must be at least a second");
  if (job.time_limit)
    return doc.error(field,
                     fmt::format("a second time limit; the first is at line {}", job.time_limit_where.line));
  job.time_limit = std::chrono::duration_cast<std::chrono::seconds>(*duration);
  job.time_limit_where = doc.at(field);
  return Ok{};
}

// Anything accepted for AzureML's sake: checked for shape, otherwise left alone.
Status read_azureml_key(const YamlDoc& doc, const YamlField& field, JobSpec& job) {
  if (field.key == "type") {
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    if (*value != "command") {
      return doc.error(field, "only command jobs are supported, got \"" + *value + "\"");
    }
  } else if (field.key == "limits") {
    auto limits = doc.fields(field, kLimitsKeys);
    if (!limits) return std::move(limits).error();
    for (const YamlField& limit : *limits)
      if (auto ok = read_time_limit(doc, limit, job); !ok) return ok;
  } else if (field.key == "tags") {
    auto tags = doc.fields(field, {});
    if (!tags) return std::move(tags).error();
  } else if (field.key == "distribution") {
    if (!field.value.IsMap()) {
      return doc.error(field, "expected a map such as {type: pytorch}, got " + describe(field.value));
    }
  } else if (field.key == "environment") {
    if (!field.value.IsScalar() && !field.value.IsMap()) {
      return doc.error(field, "expected an environment name or a map, got " + describe(field.value));
    }
    job.notes.push_back(
        SpecNote{"environment: is AzureML's and is not used; Preflight runs "
                 "image: (or the platform's default image)",
                 doc.at(field.key_node)});
  } else if (auto value = doc.string(field); !value) {
    return std::move(value).error();
  }
  return Ok{};
}

Status read_field(const YamlDoc& doc, const YamlField& field, const fs::path& job_dir,
                  const std::vector<PathMap>& maps, const HostGrant& grant, JobSpec& job) {
  bool exact = false;
  if (field.key == "name") {
    auto value = text(doc, field);
    if (!value) return std::move(value).error();
    if (!valid_job_name(*value)) {
      return doc.error(field, "\"" + *value +
                                  "\" may contain only letters, digits, \"-\", "
                                  "\"_\" and \".\", starting with a letter or digit");
    }
    if (value->size() > kMaxJobName)
      return doc.error(
          field, fmt::format("is {} characters long; give a name of at most {}", value->size(), kMaxJobName));
    job.name = *value;
  } else if (field.key == "platform" || field.key == "image") {
    auto value = text(doc, field);
    if (!value) return std::move(value).error();
    (field.key == "platform" ? job.platform : job.image) = *value;
    (field.key == "platform" ? job.platform_where : job.image_where) = doc.at(field);
    // A profile file named in job.yaml is relative to the job file, like code: and inputs.
    const bool profile_file =
        value->find('/') != std::string::npos || value->ends_with(".yaml") || value->ends_with(".yml");
    if (field.key == "platform" && profile_file) {
      const fs::path profile = resolve_path(job_dir, *value);
      if (auto confined = confine_host_path(profile, job_dir, grant, "platform", doc.at(field)); !confined)
        return std::move(confined).error();
      job.platform = profile.string();
    }
  } else if (field.key == "code") {
    auto code = read_code(doc, field, job_dir, grant);
    if (!code) return std::move(code).error();
    job.code_dir = *code;
  } else if (field.key == "code_mount") {
    auto mount = read_mount(doc, field);
    if (!mount) return std::move(mount).error();
    job.code_mount = *mount;
    job.code_mount_where = doc.at(field);
  } else if (field.key == "paths") {
    return Ok{};  // read first, for the inputs
  } else if (field.key == "setup" || field.key == "command") {
    auto value = text(doc, field);
    if (!value) return std::move(value).error();
    const SourceLocation where = doc.text_at(field.value, &exact);
    if (field.key == "setup") {
      job.setup = *value, job.setup_where = where;
    } else {
      job.command = *value, job.command_where = where;
    }
  } else if (field.key == "inputs") {
    auto inputs = read_inputs(doc, field, job_dir, maps, grant);
    if (!inputs) return std::move(inputs).error();
    job.inputs = std::move(*inputs);
  } else if (field.key == "outputs") {
    auto outputs = read_outputs(doc, field);
    if (!outputs) return std::move(outputs).error();
    job.outputs = std::move(*outputs);
  } else if (field.key == "environment_variables") {
    return read_environment_variables(doc, field, job);
  } else if (field.key == "hyperparameters") {
    return read_hyperparameters(doc, field, job);
  } else if (field.key == "resources") {
    return read_resources(doc, field, job);
  } else if (field.key == "dryrun") {
    return read_dryrun(doc, field, job.dryrun);
  } else if (field.key == "time_limit") {
    return read_time_limit(doc, field, job);
  } else {
    return read_azureml_key(doc, field, job);
  }
  return Ok{};
}

// ${{inputs.x}} in command and setup must name declared inputs and outputs; checked here so
// that `preflight check` reports a typo at its column.
Status check_command_references(const YamlDoc& doc, const std::vector<YamlField>& fields,
                                const JobSpec& job) {
  std::vector<std::string> inputs, outputs;
  for (const InputSpec& input : job.inputs) inputs.push_back(input.name);
  for (const OutputSpec& output : job.outputs) outputs.push_back(output.name);
  for (const YamlField& field : fields) {
    if (field.key != "command" && field.key != "setup") continue;
    bool exact = false;
    const SourceLocation where = doc.text_at(field.value, &exact);
    if (auto ok = check_references(field.value.Scalar(), inputs, outputs, where, exact); !ok) {
      return ok;
    }
  }
  return Ok{};
}

}  // namespace

namespace {

Result<JobSpec> load_parsed(const YamlDoc& yaml, const fs::path& job_file, const LoadOptions& options) {
  if (yaml.root().IsNull()) {
    return Error::bad_input("the job file is empty; it needs at least command:",
                            SourceLocation{yaml.file(), 1, 1});
  }
  auto fields = yaml.fields(yaml.root(), "", kTopKeys);
  if (!fields) return std::move(fields).error();

  JobSpec job;
  job.file = fs::absolute(job_file).lexically_normal();
  const fs::path job_dir = job.file.parent_path();
  job.code_dir = job_dir;
  job.name = default_job_name(job_dir.filename().string());
  // The command line's maps come first; then the job's own paths:, whichever order the keys are in.
  std::vector<PathMap> maps = options.maps;
  // The local side of a --map is the user's to grant, as --allow is.
  HostGrant grant = options.grant;
  for (const PathMap& map : options.maps) grant.folders.push_back(map.local);
  for (const YamlField& field : *fields) {
    if (field.key != "paths") continue;
    auto paths = read_paths(yaml, field, job_dir, grant);
    if (!paths) return std::move(paths).error();
    for (PathMap& map : *paths)
      if (std::none_of(maps.begin(), maps.end(), [&](const PathMap& m) { return m.prefix == map.prefix; }))
        maps.push_back(std::move(map));
  }
  for (const YamlField& field : *fields) {
    if (auto ok = read_field(yaml, field, job_dir, maps, grant, job); !ok) return std::move(ok).error();
  }
  if (job.command.empty()) {
    return Error::bad_input(
        "missing required key \"command\" (the shell command that starts "
        "training, e.g. command: python train.py)",
        yaml.at(yaml.root()));
  }
  if (auto ok = check_command_references(yaml, *fields, job); !ok) return std::move(ok).error();
  return job;
}

}  // namespace

Result<JobSpec> load_job(const fs::path& file, const LoadOptions& options) {
  // Messages name the file as the user did; the spec keeps the absolute path.
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  return load_parsed(*doc, file, options);
}

Result<JobSpec> load_job_text(const std::string& text, const fs::path& shown_as, const fs::path& job_file,
                              const LoadOptions& options) {
  auto doc = YamlDoc::parse(text, shown_as);
  if (!doc) return std::move(doc).error();
  return load_parsed(*doc, job_file, options);
}

}  // namespace preflight::spec
