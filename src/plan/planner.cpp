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
    auto value = nlohmann::json::parse(text, nullptr, false);
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
                     const spec::PlatformProfile& profile, int steps, const std::string& code,
                     const std::vector<MountPlan>& mounts) {
  std::string python_path = std::string(kEmulatorMount) + "/site";
  if (auto existing = env_value(env, "PYTHONPATH"); !existing.empty()) python_path += ":" + existing;
  set_env(env, "PYTHONPATH", python_path);
  set_env(env, "PREFLIGHT_EVENTS", kEventsFile);
  set_env(env, "PREFLIGHT_STEPS", std::to_string(steps));
  set_env(env, "PREFLIGHT_CODE_DIR", code);
  std::string inputs;  // reading them enters stage data
  for (const auto& mount : mounts)
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

}  // namespace

Result<RunPlan> make_plan(const spec::JobSpec& job, const spec::PlatformProfile& profile,
                          const image::ImageConfig& image, const PlanContext& context) {
  RunPlan plan;
  plan.job_name = job.name;
  plan.job_id = context.job_id;
  plan.container_id = "preflight-" + context.job_id;
  plan.platform = profile.name;
  plan.run_dir = context.run_dir;
  const model::RunLayout run = plan.layout();
  plan.limits = profile.limits;
  plan.network = profile.network;
  plan.seccomp = profile.seccomp;
  plan.steps = context.steps_override.value_or(job.dryrun.steps);
  plan.timeout = context.timeout_override.value_or(job.dryrun.timeout);
  plan.harness = context.harness;

  // Paths the platform gives the job, as variables for the profile's templates.
  Vars vars{{"job.name", job.name},
            {"job.id", context.job_id},
            {"gpus.count", std::to_string(job.gpus)},
            {"gpus.list", gpu_list(job.gpus)},
            {"nodes", std::to_string(job.nodes)},
            {"node.rank", "0"},
            {"cpus.count", std::to_string(std::max(1, static_cast<int>(std::ceil(profile.limits.cpus))))},
            {"user.name", profile.user.name},
            {"user.uid", std::to_string(profile.user.uid)},
            {"user.gid", std::to_string(profile.user.gid)},
            {"user.home", profile.user.home}};
  if (job.shm_bytes) plan.limits.shm_bytes = *job.shm_bytes;
  const SourceLocation profile_where{profile.file, 0, 0};
  auto hostname = spec::expand_template(profile.hostname, vars, profile_where);
  if (!hostname) return std::move(hostname).error();
  plan.hostname = vars["host.name"] =
      host_name_label(hostname->empty() ? profile.name + "-worker-0" : *hostname);
  auto code = filled_path(profile.mounts.code, vars, profile_where, false);
  if (!code) return std::move(code).error();
  vars["code"] = *code;
  auto scratch = filled_path(profile.mounts.scratch, vars, profile_where, false);
  if (!scratch) return std::move(scratch).error();
  vars["scratch"] = *scratch;

  std::map<std::string, std::string> input_paths, output_paths;
  auto add_mount = [&](MountPlan mount) {
    plan.facts.mounts.push_back(fact_of(mount));
    plan.mounts.push_back(std::move(mount));
  };
  if (profile.mounts.code_writable) {
    // The upper layer's root is the merged view's root: the job's user owns it, as the
    // platform's job owns its code folder.
    const auto layers = run.code_overlay();
    plan.prepare.push_back({layers.upper(), profile.user.uid, profile.user.gid});
    add_mount({Kind::Code, "", *code, job.code_dir, false, layers.dir});
  } else {
    add_mount({Kind::Code, "", *code, job.code_dir, true, {}});
  }
  for (const auto& input : job.inputs) {
    if (input.value) {  // a literal: substituted as written, nothing mounted
      input_paths[input.name] = vars["inputs." + input.name] = *input.value;
      continue;
    }
    auto where = filled_path(profile.mounts.input, entry_vars(vars, input.name), profile_where, false);
    if (!where) return std::move(where).error();
    input_paths[input.name] = vars["inputs." + input.name] = *where;
    add_mount({Kind::Input, input.name, *where, input.path, true, {}});
  }
  // Before the outputs, which may lie inside them (SageMaker's /opt/ml/output/data/NAME).
  for (const auto& kept : profile.mounts.kept) {
    auto dir = filled_path(kept, vars, profile_where, false);
    if (!dir) return std::move(dir).error();
    auto source = run.kept(*dir);
    plan.prepare.push_back({source, profile.user.uid, profile.user.gid});
    add_mount({Kind::Output, "", *dir, source, false, {}});
  }
  for (const auto& output : job.outputs) {
    auto where = filled_path(profile.mounts.output, entry_vars(vars, output.name), profile_where, false);
    if (!where) return std::move(where).error();
    output_paths[output.name] = vars["outputs." + output.name] = *where;
    auto source = run.output(output.name);
    plan.prepare.push_back({source, profile.user.uid, profile.user.gid});
    add_mount({Kind::Output, output.name, *where, source, false, {}});
  }
  add_json_variables(vars, job, profile, input_paths);
  auto files = plan_files(profile, vars, run);
  if (!files) return std::move(files).error();
  for (size_t i = 0; i < files->size(); ++i)
    add_mount({Kind::PlatformFile, "", profile.files[i].path, (*files)[i].path, true, {}});
  plan.files = std::move(*files);
  // Container engines (Docker, containerd under Kubernetes) bind an /etc/hosts of their own
  // into every container, naming localhost and the host name, whatever the image holds:
  // images built from a root filesystem often have none, and then "localhost" (a distributed
  // job's MASTER_ADDR) does not resolve without a network. Bound, never written into the
  // image's root, where a link could lead it onto the host (docs/security.md).
  if (std::none_of(profile.files.begin(), profile.files.end(),
                   [](auto& f) { return f.path == "/etc/hosts"; })) {
    auto hosts = run.platform_file("/etc/hosts");
    plan.files.push_back(
        {hosts, fmt::format("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                            "127.0.1.1\t{}\n",
                            plan.hostname)});
    add_mount({Kind::PlatformFile, "", "/etc/hosts", hosts, true, {}});
  }
  // Writable folders are part of the container's own root, as on the platform: an image's
  // folder keeps its owner and mode (/tmp stays 1777), a missing one is made for the user.
  for (const auto& dir : profile.mounts.writable) {
    plan.user_dirs.push_back({dir, dir == profile.user.home});
    plan.facts.mounts.push_back({Kind::Writable, "", dir, "", false});
  }
  if (!scratch->empty()) {
    plan.user_dirs.push_back({*scratch, false});
    plan.facts.mounts.push_back({Kind::Scratch, "", *scratch, "", false});
  }
  add_mount({Kind::Harness, "", kEmulatorMount, context.emulator_dir, true, {}});  // launch.sh too
  if (context.harness) {
    auto harness_run = run.harness();
    plan.prepare.push_back({harness_run, profile.user.uid, profile.user.gid});
    add_mount({Kind::Harness, "", kRunMount, harness_run, false, {}});
  }

  auto setup = job.setup ? spec::substitute_references(*job.setup, input_paths, output_paths, job.setup_where)
                         : Result<std::string>(std::string());
  if (!setup) return std::move(setup).error();
  auto command = spec::substitute_references(job.command, input_paths, output_paths, job.command_where);
  if (!command) return std::move(command).error();
  plan.setup = *setup;
  plan.command = *command;
  // As SageMaker's toolkit does, the arguments go after the entry point's own.
  if (profile.hyperparameters.arguments && !job.hyperparameters.empty())
    plan.command += " " + shell_quoted(hyperparameter_arguments(job.hyperparameters));
  const bool delivered = profile.hyperparameters.arguments || !profile.hyperparameters.environment.empty();
  if (!delivered && !job.hyperparameters.empty())
    plan.notes.push_back("hyperparameters: are not passed to the job on " + profile.name +
                         " (SageMaker's way of giving them); use arguments in command: or inputs: instead");

  // The environment, layer by layer: the image's ENV, the platform's, the job's, then the
  // harness's own few variables. Nothing of the host's.
  auto& env = plan.process.env;
  for (const auto& entry : image.env) {
    auto eq = entry.find('=');
    if (eq != std::string::npos) set_env(env, entry.substr(0, eq), entry.substr(eq + 1));
  }
  if (auto status = add_templated_env(env, profile.environment, vars); !status)
    return std::move(status).error();
  for (const auto& input : job.inputs) {
    if (input.value) continue;
    Vars per{{"name", input.name}, {"NAME", upper(input.name)}, {"path", input_paths[input.name]}};
    if (auto status = add_templated_env(env, profile.input_environment, per); !status)
      return std::move(status).error();
  }
  for (const auto& output : job.outputs) {
    Vars per{{"name", output.name}, {"NAME", upper(output.name)}, {"path", output_paths[output.name]}};
    if (auto status = add_templated_env(env, profile.output_environment, per); !status)
      return std::move(status).error();
  }
  if (auto status = add_hyperparameter_env(env, job, profile); !status) return std::move(status).error();
  for (const auto& [key, value] : job.environment) {
    auto expanded =
        spec::substitute_references(value, input_paths, output_paths,
                                    job.file.empty() ? SourceLocation{} : SourceLocation{job.file, 0, 0});
    if (!expanded) return std::move(expanded).error();
    set_env(env, key, *expanded);
  }
  if (context.harness) {
    set_harness_env(env, job, profile, plan.steps, *code, plan.mounts);
    if (auto watch = watch_list(context.watched); !watch.empty()) set_env(env, "PREFLIGHT_WATCH", watch);
  }

  auto working_dir = filled_path(profile.mounts.working_dir, vars, profile_where, true);
  if (!working_dir) return std::move(working_dir).error();
  plan.process.cwd = *working_dir;
  plan.process.uid = profile.user.uid;
  plan.process.gid = profile.user.gid;
  plan.process.args = {"/bin/sh", std::string(kEmulatorMount) + "/launch.sh", plan.setup, plan.command};
  auto launcher = launcher_keeping_env(env, profile.launcher);
  plan.process.args.insert(plan.process.args.end(), launcher.begin(), launcher.end());
  if (!profile.user.home.empty()) plan.user_dirs.push_back({profile.user.home, true});

  plan.facts.platform = profile.name;
  plan.facts.user = profile.user.name + " (uid " + std::to_string(profile.user.uid) + ")";
  plan.facts.uid = profile.user.uid;
  plan.facts.home = profile.user.home;
  plan.facts.seccomp = profile.seccomp.name;
  plan.facts.shm_bytes = plan.limits.shm_bytes;
  plan.facts.memory_bytes = plan.limits.memory_bytes;
  plan.facts.disk_bytes = plan.limits.disk_bytes;
  plan.facts.gpus = job.gpus;
  plan.facts.nodes = job.nodes;
  plan.facts.gpu_name = profile.gpu.name;
  plan.facts.gpu_memory_bytes = profile.gpu.memory_bytes;
  plan.facts.gpu_tflops = profile.gpu.tflops;
  for (const auto& entry : plan.process.env) plan.facts.environment.insert(entry.substr(0, entry.find('=')));
  plan.facts.code_container_dir = *code;
  plan.facts.code_host_dir = job.code_dir.string();
  return plan;
}

}  // namespace preflight::plan
