#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "spec/platform_profile.hpp"

namespace preflight::cli {
namespace {

YAML::Node env_node(const std::vector<spec::EnvTemplate>& entries) {
  YAML::Node node(YAML::NodeType::Map);
  for (const auto& entry : entries) node[entry.name] = entry.value;
  return node;
}

// The profile as Preflight resolved it, defaults filled in, in the profile format.
std::string resolved_yaml(const spec::PlatformProfile& p) {
  YAML::Node root;
  root["name"] = p.name;
  root["description"] = p.description;
  root["file"] = p.file.string();
  root["default_image"] = p.default_image;
  if (!p.hostname.empty()) root["hostname"] = p.hostname;
  root["user"]["name"] = p.user.name;
  root["user"]["uid"] = p.user.uid;
  root["user"]["gid"] = p.user.gid;
  root["user"]["home"] = p.user.home;
  root["user"]["sudo"] = p.user.sudo;
  root["mounts"]["code"] = p.mounts.code;
  root["mounts"]["input"] = p.mounts.input;
  root["mounts"]["output"] = p.mounts.output;
  if (!p.mounts.scratch.empty()) root["mounts"]["scratch"] = p.mounts.scratch;
  root["mounts"]["working_dir"] = p.mounts.working_dir;
  root["mounts"]["writable"] = p.mounts.writable;
  if (!p.mounts.kept.empty()) root["mounts"]["kept"] = p.mounts.kept;
  root["network"] = p.network;
  root["seccomp"] = p.seccomp.name;
  root["limits"]["memory"] = p.limits.memory_bytes;
  root["limits"]["shm"] = p.limits.shm_bytes;
  if (p.limits.disk_bytes) root["limits"]["disk"] = p.limits.disk_bytes;
  root["limits"]["pids"] = p.limits.pids;
  root["limits"]["cpus"] = p.limits.cpus;
  root["gpu"]["name"] = p.gpu.name;
  root["gpu"]["memory"] = p.gpu.memory_bytes;
  root["environment"] = env_node(p.environment);
  root["input_environment"] = env_node(p.input_environment);
  root["output_environment"] = env_node(p.output_environment);
  root["input_config"] = YAML::Load(p.input_config_json);  // JSON is YAML
  root["hyperparameters"]["arguments"] = p.hyperparameters.arguments;
  root["hyperparameters"]["environment"] = env_node(p.hyperparameters.environment);
  for (const auto& file : p.files) root["files"][file.path] = file.content;
  root["launcher"] = p.launcher;
  root["retry"]["attempts"] = p.retry_attempts;
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

}  // namespace

Command platforms_command() {
  return {"platforms", "List the platform profiles Preflight ships", [](CLI::App&) -> Action {
            return [] {
              const auto dir = spec::shipped_platforms_dir();
              for (const auto& name : spec::list_platforms(dir)) {
                auto profile = spec::load_platform(name, dir);
                if (!profile) return report_error(profile.error());
                std::cout << fmt::format("{:<12} {}\n", name, profile->description);
              }
              return 0;
            };
          }};
}

Command platform_command() {
  return {"platform", "Show one platform profile, resolved", [](CLI::App& app) -> Action {
            auto name = std::make_shared<std::string>();
            app.require_subcommand(1);
            app.add_subcommand("show", "print the resolved profile")
                ->add_option("name", *name, "a shipped profile name or a profile file")
                ->required();
            return [name] {
              auto profile = spec::load_platform(*name, spec::shipped_platforms_dir());
              if (!profile) return report_error(profile.error());
              std::cout << resolved_yaml(*profile) << "\n";
              return 0;
            };
          }};
}

}  // namespace preflight::cli
