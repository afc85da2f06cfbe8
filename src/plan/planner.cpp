#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "plan/hyperparameters.hpp"
#include "plan/run_plan.hpp"
#include "spec/template.hpp"
#include "spec/yaml_doc.hpp"
#include "util/json_fields.hpp"
#include "util/text.hpp"

namespace preflight::plan {
namespace {

using Kind = model::MountFact::Kind;
using Vars = std::map<std::string, std::string>;

// A host name is one DNS label: Linux refuses longer ones (sethostname: EINVAL), and
// Kubernetes cuts a pod's to 63 characters, then drops a trailing '-' or '.' — so a long job
// name gets the host name it would get there instead of a failed start.
std::string host_name_label(std::string name) {
  constexpr std::size_t kLabelMax = 63;
  if (name.size() > kLabelMax) name.resize(kLabelMax);
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return name;
}

// Names upper-cased as they are, hyphens kept: SageMaker exports SM_HP_LEARNING-RATE.
std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

std::string gpu_list(int gpus) {
  std::string list;
  for (int i = 0; i < gpus; ++i) list += (i ? "," : "") + std::to_string(i);
  return list;
}

// Sets KEY in a "KEY=VALUE" list, replacing an earlier value: later layers win.
void set_env(std::vector<std::string>& env, const std::string& key, const std::string& value) {
  auto same_key = [&](const std::string& entry) { return entry.compare(0, key.size() + 1, key + "=") == 0; };
  env.erase(std::remove_if(env.begin(), env.end(), same_key), env.end());
  env.push_back(key + "=" + value);
}

// The platform's launcher, started so that variables whose names are not shell identifiers
// (SageMaker's SM_HP_LEARNING-RATE) reach it: launch.sh runs under /bin/sh, and dash leaves
// such names out of the environment of what it starts (bash and zsh pass them on). `env`
// sets them again between launch.sh and the launcher.
std::vector<std::string> launcher_keeping_env(const std::vector<std::string>& env,
                                              const std::vector<std::string>& launcher) {
  std::vector<std::string> args;
  for (const auto& entry : env)
    if (!spec::is_identifier(entry.substr(0, entry.find('=')))) args.push_back(entry);
  if (!args.empty()) args.insert(args.begin(), "/usr/bin/env");
  args.insert(args.end(), launcher.begin(), launcher.end());
  return args;
}

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
  for (const auto& entry : env)
    if (entry.compare(0, key.size() + 1, key + "=") == 0) return entry.substr(key.size() + 1);
  return {};
}

// dryrun.args as the JSON object the harness reads: numbers and booleans typed, the rest text.
std::string clamp_args_json(const std::map<std::string, std::string>& args) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, text] : args) {
    auto value = json_fields::parse_bounded(text);
    object[name] = value.is_number() || value.is_boolean() ? value : nlohmann::json(text);
  }
  return object.dump();
}

Status add_templated_env(std::vector<std::string>& env, const std::vector<spec::EnvTemplate>& entries,
                         const Vars& vars) {
  for (const auto& entry : entries) {
    auto name = spec::expand_template(entry.name, vars, entry.where);
    if (!name) return std::move(name).error();
    auto value = spec::expand_template(entry.value, vars, entry.where);
    if (!value) return std::move(value).error();
    set_env(env, *name, *value);
  }
  return Ok{};
}

// The JSON-valued template variables (docs/formats.md "Templates"): the dry run's one host,
// the mounted inputs, and the hyperparameters in SageMaker's encodings.
void add_json_variables(Vars& vars, const spec::JobSpec& job, const spec::PlatformProfile& profile,
                        const std::map<std::string, std::string>& input_paths) {
  nlohmann::json names = nlohmann::json::array(), dirs = nlohmann::json::object(),
                 config = nlohmann::json::object();
  const auto input_config = nlohmann::json::parse(profile.input_config_json);
  for (const auto& input : job.inputs) {
    if (input.value) continue;
    dirs[input.name] = input_paths.at(input.name);
    config[input.name] = input_config;
  }
  for (const auto& [name, _] : dirs.items()) names.push_back(name);
  vars["hosts.json"] = nlohmann::json::array({vars["host.name"]}).dump();
  vars["inputs.names.json"] = names.dump();
  vars["inputs.dirs.json"] = dirs.dump();
  vars["inputs.config.json"] = config.dump();
  vars["hyperparameters.json"] = hyperparameters_object(job.hyperparameters).dump();
  vars["hyperparameters.strings.json"] = hyperparameters_strings(job.hyperparameters).dump();
  vars["hyperparameters.args.json"] = nlohmann::json(hyperparameter_arguments(job.hyperparameters)).dump();
}

// A folder of the profile in the container once its templates are filled in (a job's names
// among them): absolute and normalised, and not "/" where something is mounted or made.
// Empty stays empty where the profile may leave it out (scratch).
Result<std::string> filled_path(const std::string& text, const Vars& vars, const SourceLocation& where,
                                bool may_be_root) {
  auto path = spec::expand_template(text, vars, where);
  if (!path || path->empty()) return path;
  if (!is_normal_absolute_path(*path) || (!may_be_root && *path == "/"))
    return Error::bad_input(
        fmt::format("\"{}\" gives \"{}\", which is not an absolute path inside the container "
                    "without \".\", \"..\" or \"//\"{}: correct the profile",
                    text, *path, may_be_root ? "" : " (nor \"/\")"),
        where);
  return path;
}

// The files the platform writes for the job, into the run folder; a .json file must be JSON
// once its templates are filled in, or the profile is wrong.
Result<std::vector<PlannedFile>> plan_files(const spec::PlatformProfile& profile, const Vars& vars,
                                            const model::RunLayout& run) {
  std::vector<PlannedFile> files;
  for (const auto& file : profile.files) {
    auto content = spec::expand_template(file.content, vars, file.where);
    if (!content) return std::move(content).error();
    if (file.path.ends_with(".json") && !nlohmann::json::accept(*content)) {
      return Error::bad_input("files: " + file.path + " is not valid JSON once filled in: " + *content,
                              file.where);
    }
    files.push_back({run.platform_file(file.path), *content});
  }
  return files;
}

Status add_hyperparameter_env(std::vector<std::string>& env, const spec::JobSpec& job,
                              const spec::PlatformProfile& profile) {
  for (const auto& hp : job.hyperparameters) {
    Vars per{{"name", hp.name}, {"NAME", upper(hp.name)}, {"value", hyperparameter_env_value(hp)}};
    if (auto status = add_templated_env(env, profile.hyperparameters.environment, per); !status)
      return status;
  }
  return Ok{};
}

// The job's variables and an input's or output's own, for its mount path.
Vars entry_vars(Vars vars, const std::string& name) {
  vars["name"] = name;
  vars["NAME"] = upper(name);
  return vars;
}

model::MountFact fact_of(const MountPlan& mount) {
  return {mount.kind, mount.name, mount.destination, mount.source.string(), mount.read_only};
}

// The harness's variables (docs/harness.md "Injection"); it goes first on the job's own
// PYTHONPATH, which it keeps.
void set_harness_env(std::vector<std::string>& env, const spec::JobSpec& job,
                     const spec::PlatformProfile& profile, const RunPlan& plan, const std::string& code) {
  std::string python_path = std::string(kEmulatorMount) + "/site";
  if (auto existing = env_value(env, "PYTHONPATH"); !existing.empty()) python_path += ":" + existing;
  set_env(env, "PYTHONPATH", python_path);
  set_env(env, "PREFLIGHT_EVENTS", kEventsFile);
  set_env(env, "PREFLIGHT_STEPS", std::to_string(plan.steps));
  set_env(env, "PREFLIGHT_BATCH", std::to_string(plan.batch));
  set_env(env, "PREFLIGHT_CODE_DIR", code);
  std::string inputs;  // reading them enters stage data
  for (const auto& mount : plan.mounts)
    if (mount.kind == Kind::Input) inputs += (inputs.empty() ? "" : ":") + mount.destination;
  if (!inputs.empty()) set_env(env, "PREFLIGHT_INPUTS", inputs);
  if (job.gpus > 0) {  // the harness shows them to a framework that has none (virtual GPUs)
    set_env(env, "PREFLIGHT_GPUS", std::to_string(job.gpus));
    set_env(env, "PREFLIGHT_GPU_NAME", profile.gpu.name);
    set_env(env, "PREFLIGHT_GPU_MEMORY", std::to_string(profile.gpu.memory_bytes));
  }
  if (!job.dryrun.args.empty()) set_env(env, "PREFLIGHT_CLAMP_ARGS", clamp_args_json(job.dryrun.args));
}

// PREFLIGHT_WATCH: one file per line, "LINE,LINE,... PATH" with PATH relative to the code
// folder (read without json, at every interpreter start).
std::string watch_list(const std::vector<SourceLocation>& watched) {
  std::map<std::string, std::set<int>> lines;
  for (const auto& where : watched) {
    const std::string file = where.file.generic_string();
    if (where.line > 0 && file.find('\n') == std::string::npos) lines[file].insert(where.line);
  }
  std::string out;
  for (const auto& [file, numbers] : lines) {
    std::string list;
    for (int number : numbers) list += (list.empty() ? "" : ",") + std::to_string(number);
    out += (out.empty() ? "" : "\n") + list + " " + file;
  }
  return out;
}

// make_plan's steps. Each fills its part of the plan from the job, the profile and what the
// steps before it decided: the profile's template variables (`vars_`), where the inputs and
// outputs are mounted.
class Planner {
 public:
  Planner(const spec::JobSpec& job, const spec::PlatformProfile& profile, const PlanContext& context)
      : job_(job), profile_(profile), context_(context), where_{profile.file, 0, 0} {}

  Result<RunPlan> make(const image::ImageConfig& image) {
    start();
    for (auto step : {&Planner::name_places, &Planner::add_mounts, &Planner::add_platform_files})
      if (auto status = (this->*step)(); !status) return std::move(status).error();
    add_writable_folders();
    add_harness_mounts();
    if (auto status = set_command(); !status) return std::move(status).error();
    if (auto status = set_environment(image); !status) return std::move(status).error();
    if (auto status = set_process(); !status) return std::move(status).error();
    record_facts();
    return std::move(plan_);
  }

 private:
  void start() {
    plan_.job_name = job_.name;
    plan_.job_id = context_.job_id;
    plan_.container_id = "preflight-" + context_.job_id;
    plan_.platform = profile_.name;
    plan_.run_dir = context_.run_dir;
    plan_.limits = profile_.limits;
    if (job_.shm_bytes) plan_.limits.shm_bytes = *job_.shm_bytes;
    plan_.network = context_.sandbox.network;
    plan_.seccomp = context_.sandbox.seccomp;
    plan_.seccomp_abis = context_.sandbox.compat_abis;
    plan_.notes = sandbox_notes(profile_, context_.sandbox);
    plan_.steps = context_.steps_override.value_or(job_.dryrun.steps);
    plan_.batch = context_.batch_override.value_or(job_.dryrun.batch);
    plan_.timeout = context_.timeout_override.value_or(job_.dryrun.timeout);
    plan_.harness = context_.harness;
    plan_.image_sealed = context_.image_sealed;
    // What the platform gives the job, as variables for the profile's templates.
    vars_ = {{"job.name", job_.name},
             {"job.id", context_.job_id},
             {"gpus.count", std::to_string(job_.gpus)},
             {"gpus.list", gpu_list(job_.gpus)},
             {"nodes", std::to_string(job_.nodes)},
             {"node.rank", "0"},
             {"cpus.count", std::to_string(std::max(1, static_cast<int>(std::ceil(profile_.limits.cpus))))},
             {"user.name", profile_.user.name},
             {"user.uid", std::to_string(profile_.user.uid)},
             {"user.gid", std::to_string(profile_.user.gid)},
             {"user.home", profile_.user.home}};
  }

  // The host name, the code folder and the scratch folder, which later templates may name.
  Status name_places() {
    auto hostname = spec::expand_template(profile_.hostname, vars_, where_);
    if (!hostname) return std::move(hostname).error();
    plan_.hostname = vars_["host.name"] =
        host_name_label(hostname->empty() ? profile_.name + "-worker-0" : *hostname);
    // A job that says where its code is (a container's workingDir, Slurm's --chdir) has it there.
    auto code = job_.code_mount.empty() ? filled_path(profile_.mounts.code, vars_, where_, false)
                                        : Result<std::string>(job_.code_mount);
    if (!code) return std::move(code).error();
    code_ = vars_["code"] = *code;
    auto scratch = filled_path(profile_.mounts.scratch, vars_, where_, false);
    if (!scratch) return std::move(scratch).error();
    scratch_ = vars_["scratch"] = *scratch;
    return Ok{};
  }

  void add_mount(MountPlan mount) {
    plan_.facts.mounts.push_back(fact_of(mount));
    plan_.mounts.push_back(std::move(mount));
  }

  // The code, the inputs, the profile's kept folders and the outputs, each where the
  // platform puts it; the harness's folders.
  Status add_mounts() {
    const model::RunLayout run = plan_.layout();
    if (!job_.code_mount.empty())
      if (auto taken = check_place_free(code_, job_.code_mount_where); !taken)
        return std::move(taken).error();
    if (profile_.mounts.code_writable) {
      // The upper layer's root is the merged view's root: the job's user owns it, as the
      // platform's job owns its code folder.
      const auto layers = run.code_overlay();
      plan_.prepare.push_back({layers.upper(), profile_.user.uid, profile_.user.gid});
      add_mount({Kind::Code, "", code_, job_.code_dir, false, layers.dir});
    } else {
      add_mount({Kind::Code, "", code_, job_.code_dir, true, {}});
    }
    for (const auto& input : job_.inputs) {
      if (input.value) {  // a literal: substituted as written, nothing mounted
        input_paths_[input.name] = vars_["inputs." + input.name] = *input.value;
        continue;
      }
      auto where = input.mount.empty()
                       ? filled_path(profile_.mounts.input, entry_vars(vars_, input.name), where_, false)
                       : Result<std::string>(input.mount);
      if (!where) return std::move(where).error();
      if (!input.mount.empty())
        if (auto taken = check_place_free(*where, input.where); !taken) return std::move(taken).error();
      input_paths_[input.name] = vars_["inputs." + input.name] = *where;
      add_mount({Kind::Input, input.name, *where, input.path, true, {}});
    }
    // Before the outputs, which may lie inside them (SageMaker's /opt/ml/output/data/NAME).
    for (const auto& kept : profile_.mounts.kept) {
      auto dir = filled_path(kept, vars_, where_, false);
      if (!dir) return std::move(dir).error();
      auto source = run.kept(*dir);
      plan_.prepare.push_back({source, profile_.user.uid, profile_.user.gid});
      add_mount({Kind::Output, "", *dir, source, false, {}});
    }
    for (const auto& output : job_.outputs) {
      auto where = output.mount.empty()
                       ? filled_path(profile_.mounts.output, entry_vars(vars_, output.name), where_, false)
                       : Result<std::string>(output.mount);
      if (!where) return std::move(where).error();
      if (!output.mount.empty())
        if (auto taken = check_place_free(*where, output.where); !taken) return std::move(taken).error();
      output_paths_[output.name] = vars_["outputs." + output.name] = *where;
      auto source = run.output(output.name);
      plan_.prepare.push_back({source, profile_.user.uid, profile_.user.gid});
      add_mount({Kind::Output, output.name, *where, source, false, {}});
    }
    return Ok{};
  }

  // A place the job names (mount:, a volume's mountPath) must be its own: at the place of
  // something mounted before it, or around it, it would hide it; inside the code, an input or
  // an output, its mount point would have to be made in the user's folder.
  Status check_place_free(const std::string& place, const SourceLocation& where) const {
    for (const std::string own : {kEmulatorMount, kRunMount})
      if (place == own || is_under(own, place) || is_under(place, own))
        return Error::bad_input(
            fmt::format("mount: {} would hide or lie in Preflight's own {}; give another place", place, own),
            where);
    for (const auto& mount : plan_.mounts) {
      const bool kept = mount.kind == Kind::Output && mount.name.empty();
      const char* relation = place == mount.destination                    ? "the place of"
                             : is_under(mount.destination, place)          ? "around"
                             : !kept && is_under(place, mount.destination) ? "inside"
                                                                           : nullptr;
      if (!relation) continue;
      const std::string other = mount.kind == Kind::Code ? "the code (" + mount.destination + ")"
                                : kept                   ? "the platform's folder " + mount.destination
                                : mount.kind == Kind::Input
                                    ? fmt::format("input \"{}\" ({})", mount.name, mount.destination)
                                    : fmt::format("output \"{}\" ({})", mount.name, mount.destination);
      return Error::bad_input(
          fmt::format("mount: {} is {} {}; give each input and output a place of its own, "
                      "outside the others",
                      place, relation, other),
          where);
    }
    return Ok{};
  }

  // The files the platform writes for the job (SageMaker's JSON files, an /etc/hosts).
  Status add_platform_files() {
    add_json_variables(vars_, job_, profile_, input_paths_);
    auto files = plan_files(profile_, vars_, plan_.layout());
    if (!files) return std::move(files).error();
    for (size_t i = 0; i < files->size(); ++i)
      add_mount({Kind::PlatformFile, "", profile_.files[i].path, (*files)[i].path, true, {}});
    plan_.files = std::move(*files);
    // Container engines (Docker, containerd under Kubernetes) bind an /etc/hosts of their own
    // into every container, naming localhost and the host name, whatever the image holds:
    // images built from a root filesystem often have none, and then "localhost" (a distributed
    // job's MASTER_ADDR) does not resolve without a network. Bound, never written into the
    // image's root, where a link could lead it onto the host (docs/security.md).
    if (std::none_of(profile_.files.begin(), profile_.files.end(),
                     [](auto& f) { return f.path == "/etc/hosts"; })) {
      auto hosts = plan_.layout().platform_file("/etc/hosts");
      plan_.files.push_back(
          {hosts, fmt::format("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                              "127.0.1.1\t{}\n",
                              plan_.hostname)});
      add_mount({Kind::PlatformFile, "", "/etc/hosts", hosts, true, {}});
    }
    return Ok{};
  }

  // Writable folders are part of the container's own root, as on the platform: an image's
  // folder keeps its owner and mode (/tmp stays 1777), a missing one is made for the user.
  void add_writable_folders() {
    for (const auto& dir : profile_.mounts.writable) {
      plan_.user_dirs.push_back({dir, dir == profile_.user.home});
      plan_.facts.mounts.push_back({Kind::Writable, "", dir, "", false});
    }
    if (!scratch_.empty()) {
      plan_.user_dirs.push_back({scratch_, false});
      plan_.facts.mounts.push_back({Kind::Scratch, "", scratch_, "", false});
    }
  }

  // Preflight's own: the harness and the launcher, and the folder the harness writes to.
  void add_harness_mounts() {
    add_mount({Kind::Harness, "", kEmulatorMount, context_.emulator_dir, true, {}});
    if (!context_.harness) return;
    const auto events = plan_.layout().harness();
    plan_.prepare.push_back({events, profile_.user.uid, profile_.user.gid});
    add_mount({Kind::Harness, "", kRunMount, events, false, {}});
  }

  // The setup and command lines with the inputs' and outputs' paths in, and SageMaker's
  // hyperparameters as arguments.
  Status set_command() {
    auto setup = job_.setup
                     ? spec::substitute_references(*job_.setup, input_paths_, output_paths_, job_.setup_where)
                     : Result<std::string>(std::string());
    if (!setup) return std::move(setup).error();
    auto command = spec::substitute_references(job_.command, input_paths_, output_paths_, job_.command_where);
    if (!command) return std::move(command).error();
    plan_.setup = *setup;
    plan_.command = *command;
    // As SageMaker's toolkit does, the arguments go after the entry point's own.
    if (profile_.hyperparameters.arguments && !job_.hyperparameters.empty())
      plan_.command += " " + quote_shell_words(hyperparameter_arguments(job_.hyperparameters));
    const bool delivered =
        profile_.hyperparameters.arguments || !profile_.hyperparameters.environment.empty();
    if (!delivered && !job_.hyperparameters.empty())
      plan_.notes.push_back(
          "hyperparameters: are not passed to the job on " + profile_.name +
          " (SageMaker's way of giving them); use arguments in command: or inputs: instead");
    return Ok{};
  }

  // The environment, layer by layer: the image's ENV, the platform's, the job's, then the
  // harness's own few variables. Nothing of the host's.
  Status set_environment(const image::ImageConfig& image) {
    auto& env = plan_.process.env;
    for (const auto& entry : image.env) {
      auto eq = entry.find('=');
      if (eq != std::string::npos) set_env(env, entry.substr(0, eq), entry.substr(eq + 1));
    }
    if (auto status = add_templated_env(env, profile_.environment, vars_); !status) return status;
    for (const auto& input : job_.inputs) {
      if (input.value) continue;
      Vars per{{"name", input.name}, {"NAME", upper(input.name)}, {"path", input_paths_[input.name]}};
      if (auto status = add_templated_env(env, profile_.input_environment, per); !status) return status;
    }
    for (const auto& output : job_.outputs) {
      Vars per{{"name", output.name}, {"NAME", upper(output.name)}, {"path", output_paths_[output.name]}};
      if (auto status = add_templated_env(env, profile_.output_environment, per); !status) return status;
    }
    if (auto status = add_hyperparameter_env(env, job_, profile_); !status) return status;
    for (const auto& [key, value] : job_.environment) {
      auto expanded =
          spec::substitute_references(value, input_paths_, output_paths_,
                                      job_.file.empty() ? SourceLocation{} : SourceLocation{job_.file, 0, 0});
      if (!expanded) return std::move(expanded).error();
      set_env(env, key, *expanded);
    }
    if (context_.harness) {
      set_harness_env(env, job_, profile_, plan_, code_);
      if (auto watch = watch_list(context_.watched); !watch.empty()) set_env(env, "PREFLIGHT_WATCH", watch);
    }
    return Ok{};
  }

  // The platform's launcher runs the command as the platform's user in its working folder;
  // a job with setup runs it first, through emulator/launch.sh, which marks where setup ended
  // (a job without starts the launcher itself: one shell fewer). The user's home is made for it.
  Status set_process() {
    auto working_dir = filled_path(profile_.mounts.working_dir, vars_, where_, true);
    if (!working_dir) return std::move(working_dir).error();
    auto& process = plan_.process;
    process.cwd = *working_dir;
    process.uid = profile_.user.uid;
    process.gid = profile_.user.gid;
    if (plan_.setup.empty()) {
      process.args = profile_.launcher;
      process.args.push_back(plan_.command);
    } else {
      process.args = {"/bin/sh", std::string(kEmulatorMount) + "/launch.sh", plan_.setup, plan_.command};
      auto launcher = launcher_keeping_env(process.env, profile_.launcher);
      process.args.insert(process.args.end(), launcher.begin(), launcher.end());
    }
    if (!profile_.user.home.empty()) plan_.user_dirs.push_back({profile_.user.home, true});
    return Ok{};
  }

  // What diagnosis needs to know of the platform.
  void record_facts() {
    auto& facts = plan_.facts;
    facts.platform = profile_.name;
    facts.job_kind = job_.kind;
    facts.user = profile_.user.name + " (uid " + std::to_string(profile_.user.uid) + ")";
    facts.uid = profile_.user.uid;
    facts.home = profile_.user.home;
    facts.seccomp = plan_.seccomp.name;  // the policy that refuses a call, for the hint
    facts.shm_bytes = plan_.limits.shm_bytes;
    facts.memory_bytes = plan_.limits.memory_bytes;
    facts.disk_bytes = plan_.limits.disk_bytes;
    facts.gpus = job_.gpus;
    facts.nodes = job_.nodes;
    facts.gpu_name = profile_.gpu.name;
    facts.gpu_memory_bytes = profile_.gpu.memory_bytes;
    facts.gpu_tflops = profile_.gpu.tflops;
    for (const auto& entry : plan_.process.env) facts.environment.insert(entry.substr(0, entry.find('=')));
    facts.code_container_dir = code_;
    facts.code_host_dir = job_.code_dir.string();
  }

  const spec::JobSpec& job_;
  const spec::PlatformProfile& profile_;
  const PlanContext& context_;
  const SourceLocation where_;  // the profile's file, for errors in its templates
  RunPlan plan_;
  Vars vars_;
  std::string code_;     // where the code is in the container
  std::string scratch_;  // the platform's scratch folder; empty: none
  std::map<std::string, std::string> input_paths_, output_paths_;
};

}  // namespace

Result<RunPlan> make_plan(const spec::JobSpec& job, const spec::PlatformProfile& profile,
                          const image::ImageConfig& image, const PlanContext& context) {
  return Planner(job, profile, context).make(image);
}

}  // namespace preflight::plan
