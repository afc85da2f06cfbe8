#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "plan/run_plan.hpp"
#include "spec/template.hpp"

namespace preflight::plan {
namespace {

using Kind = diagnosis::MountFact::Kind;
using Vars = std::map<std::string, std::string>;

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
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

diagnosis::MountFact fact_of(const MountPlan& mount) {
  return {mount.kind, mount.name, mount.destination, mount.source.string(), mount.read_only};
}

// The harness's variables (docs/harness.md "Injection"); it goes first on the job's own
// PYTHONPATH, which it keeps.
void set_harness_env(std::vector<std::string>& env, const spec::JobSpec& job, const spec::PlatformProfile& profile,
                     int steps, const std::string& code, const std::vector<MountPlan>& mounts) {
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

}  // namespace

Result<RunPlan> make_plan(const spec::JobSpec& job, const spec::PlatformProfile& profile,
                          const image::ImageConfig& image, const PlanContext& context) {
  RunPlan plan;
  plan.job_name = job.name;
  plan.job_id = context.job_id;
  plan.container_id = "preflight-" + context.job_id;
  plan.platform = profile.name;
  plan.hostname = profile.name + "-worker-0";
  plan.run_dir = context.run_dir;
  plan.limits = profile.limits;
  plan.network = profile.network;
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
            {"host.name", plan.hostname},
            {"user.name", profile.user.name},
            {"user.uid", std::to_string(profile.user.uid)},
            {"user.gid", std::to_string(profile.user.gid)},
            {"user.home", profile.user.home}};
  if (job.shm_bytes) plan.limits.shm_bytes = *job.shm_bytes;
  const SourceLocation profile_where{profile.file, 0, 0};
  auto code = spec::expand_template(profile.mounts.code, vars, profile_where);
  if (!code) return std::move(code).error();
  vars["code"] = *code;
  auto scratch = spec::expand_template(profile.mounts.scratch, vars, profile_where);
  if (!scratch) return std::move(scratch).error();
  vars["scratch"] = *scratch;

  std::map<std::string, std::string> input_paths, output_paths;
  auto add_mount = [&](MountPlan mount) {
    plan.facts.mounts.push_back(fact_of(mount));
    plan.mounts.push_back(std::move(mount));
  };
  add_mount({Kind::Code, "", *code, job.code_dir, true});
  for (const auto& input : job.inputs) {
    if (input.value) {  // a literal: substituted as written, nothing mounted
      input_paths[input.name] = vars["inputs." + input.name] = *input.value;
      continue;
    }
    auto where = spec::expand_template(profile.mounts.input, Vars{{"name", input.name}}, profile_where);
    if (!where) return std::move(where).error();
    input_paths[input.name] = vars["inputs." + input.name] = *where;
    add_mount({Kind::Input, input.name, *where, input.path, true});
  }
  for (const auto& output : job.outputs) {
    auto where = spec::expand_template(profile.mounts.output, Vars{{"name", output.name}}, profile_where);
    if (!where) return std::move(where).error();
    output_paths[output.name] = vars["outputs." + output.name] = *where;
    auto source = context.run_dir / "outputs" / output.name;
    plan.prepare.push_back({source, profile.user.uid, profile.user.gid});
    add_mount({Kind::Output, output.name, *where, source, false});
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
  add_mount({Kind::Harness, "", kEmulatorMount, context.emulator_dir, true});  // launch.sh too
  if (context.harness) {
    auto harness_run = context.run_dir / "harness";
    plan.prepare.push_back({harness_run, profile.user.uid, profile.user.gid});
    add_mount({Kind::Harness, "", kRunMount, harness_run, false});
  }

  auto setup = job.setup ? spec::substitute_references(*job.setup, input_paths, output_paths, job.setup_where)
                         : Result<std::string>(std::string());
  if (!setup) return std::move(setup).error();
  auto command = spec::substitute_references(job.command, input_paths, output_paths, job.command_where);
  if (!command) return std::move(command).error();
  plan.setup = *setup;
  plan.command = *command;

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
  for (const auto& [key, value] : job.environment) {
    auto expanded =
        spec::substitute_references(value, input_paths, output_paths,
                                    job.file.empty() ? SourceLocation{} : SourceLocation{job.file, 0, 0});
    if (!expanded) return std::move(expanded).error();
    set_env(env, key, *expanded);
  }
  if (context.harness) set_harness_env(env, job, profile, plan.steps, *code, plan.mounts);

  auto working_dir = spec::expand_template(profile.mounts.working_dir, vars, profile_where);
  if (!working_dir) return std::move(working_dir).error();
  plan.process.cwd = *working_dir;
  plan.process.uid = profile.user.uid;
  plan.process.gid = profile.user.gid;
  plan.process.args = {"/bin/sh", std::string(kEmulatorMount) + "/launch.sh", plan.setup, plan.command};
  plan.process.args.insert(plan.process.args.end(), profile.launcher.begin(), profile.launcher.end());
  if (!profile.user.home.empty()) plan.user_dirs.push_back({profile.user.home, true});

  plan.facts.platform = profile.name;
  plan.facts.user = profile.user.name + " (uid " + std::to_string(profile.user.uid) + ")";
  plan.facts.uid = profile.user.uid;
  plan.facts.home = profile.user.home;
  plan.facts.shm_bytes = plan.limits.shm_bytes;
  plan.facts.memory_bytes = plan.limits.memory_bytes;
  plan.facts.gpus = job.gpus;
  plan.facts.nodes = job.nodes;
  plan.facts.gpu_name = profile.gpu.name;
  plan.facts.gpu_memory_bytes = profile.gpu.memory_bytes;
  plan.facts.gpu_tflops = profile.gpu.tflops;
  plan.facts.code_container_dir = *code;
  plan.facts.code_host_dir = job.code_dir.string();
  return plan;
}

}  // namespace preflight::plan
