// --network and --seccomp: the only way to lower the sandbox's floor, given by the user on the
// command line, never by a job file or a profile (docs/security.md "The sandbox floor").
#include "cli/command.hpp"

namespace preflight::cli {

void add_sandbox_options(CLI::App& app, SandboxArgs& args) {
  app.add_flag("--network", args.network,
               "give the job the host's network, below the sandbox's floor (its own services on "
               "127.0.0.1 included); a profile's network: true does not");
  app.add_option("--seccomp", args.seccomp,
                 "run the job under the shipped seccomp policy NAME (unconfined: namespaces, mounts, "
                 "keyrings...) instead of the floor, default; a profile's seccomp: does not");
}

Result<std::optional<spec::SeccompPolicy>> sandbox_seccomp(const SandboxArgs& args) {
  if (args.seccomp.empty()) return std::optional<spec::SeccompPolicy>();
  auto policy = spec::load_seccomp_policy(args.seccomp, spec::shipped_seccomp_dir());
  if (!policy) return std::move(policy).error().context("--seccomp");
  return std::optional<spec::SeccompPolicy>(std::move(*policy));
}

std::vector<std::string> sandbox_arguments(const SandboxArgs& args) {
  std::vector<std::string> arguments;
  if (args.network) arguments.emplace_back("--network");
  if (!args.seccomp.empty()) arguments.insert(arguments.end(), {"--seccomp", args.seccomp});
  return arguments;
}

}  // namespace preflight::cli
