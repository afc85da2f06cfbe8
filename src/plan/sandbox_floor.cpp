#include "plan/sandbox_floor.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace preflight::plan {
namespace {

// "FILE:LINE: " where the profile says it, or nothing for a profile made in memory.
std::string at(const SourceLocation& where) { return where.known() ? where.str() + ": " : ""; }

}  // namespace

const std::vector<CompatAbi>& compat_abi_loaders() {
  static const std::vector<CompatAbi> loaders = {
#if defined(__x86_64__)
    {"SCMP_ARCH_X86", "/lib/ld-linux.so.2"},
    {"SCMP_ARCH_X32", "/libx32/ld-linux-x32.so.2"},
#elif defined(__aarch64__)
    {"SCMP_ARCH_ARM", "/lib/ld-linux-armhf.so.3"},
    {"SCMP_ARCH_ARM", "/lib/ld-linux.so.3"},
#endif
  };
  return loaders;
}

std::vector<std::string> compat_abis() {
  std::vector<std::string> names;
  for (const CompatAbi& abi : compat_abi_loaders())
    if (std::find(names.begin(), names.end(), abi.name) == names.end()) names.emplace_back(abi.name);
  return names;
}

void soften_withheld(std::vector<model::Finding>& findings, const spec::PlatformProfile& profile,
                     const SandboxFloor& sandbox) {
  const bool network_withheld = profile.network && !sandbox.network;
  const bool seccomp_withheld =
      profile.seccomp.name == "unconfined" && sandbox.seccomp.name == spec::kFloorSeccompPolicy;
  const auto soften = [&](model::Finding& finding, const std::string& why, const char* flag) {
    finding.severity = model::Severity::Warning;
    finding.message = why + ": " + finding.message;
    finding.hint = fmt::format(
        "Not a failure on {0}: the dry run stopped here, so what follows did not run. Pass {1} to emulate "
        "{0} "
        "and run the rest",
        profile.name, flag);
  };
  for (model::Finding& finding : findings) {
    if (finding.severity != model::Severity::Error || finding.phase != model::Phase::Dryrun) continue;
    const bool download = finding.rule == "network-unavailable" ||
                          finding.rule == "network-unavailable-message" || finding.rule == "pip-no-network";
    if (download && network_withheld)
      soften(finding,
             profile.name + "'s nodes have network, which the dry run withholds, and the job needed it here",
             "--network");
    else if (finding.rule == "syscall-refused-by-seccomp" && seccomp_withheld)
      soften(finding,
             profile.name +
                 " runs its jobs without a seccomp policy; the dry run keeps the floor, which refused "
                 "this call",
             "--seccomp unconfined");
    else if (finding.rule == "system-call-killed" && sandbox.compat_abis.size() < compat_abis().size()) {
      finding.severity = model::Severity::Warning;
      finding.message = fmt::format(
          "the dry run's seccomp filter answers only the system-call ABIs the image holds a program loader "
          "of, and the job called the kernel through another one (a 32-bit call), which {}'s runtime "
          "answers: {}",
          profile.name, finding.message);
      finding.hint = "Not a failure on " + profile.name +
                     " unless the call is one its policy refuses: the dry run stopped here, so what follows "
                     "did not run. Pass --seccomp unconfined to answer every ABI and run the rest, or build "
                     "the program for the image's own architecture";
    }
  }
}

std::vector<std::string> sandbox_notes(const spec::PlatformProfile& profile, const SandboxFloor& sandbox) {
  std::vector<std::string> notes;
  if (sandbox.network)
    notes.push_back(
        "the job had the host's network (--network): it could reach this machine's own services and "
        "beyond; without the flag it has none");
  else if (profile.network)
    notes.push_back(fmt::format(
        "{}{}'s nodes have network; the dry run has none: pass --network to grant it (what the job "
        "downloads there fails here)",
        at(profile.network_at), profile.name));
  const std::string run = sandbox.seccomp.name;
  if (run.empty()) return notes;  // a plan that runs nothing (the static checks', an export's)
  if (run != spec::kFloorSeccompPolicy)
    notes.push_back(fmt::format(
        "the job ran under seccomp policy \"{0}\" (--seccomp {0}, policies/seccomp/{0}.yaml) instead of the "
        "floor, \"{1}\": it could make calls that Docker's default profile refuses",
        run, spec::kFloorSeccompPolicy));
  else if (profile.seccomp.name != run)
    notes.push_back(fmt::format(
        "{0}{1} runs its jobs under seccomp policy \"{2}\"; the dry run keeps the floor, \"{3}\", which "
        "refuses namespaces, mounts, kernel keyrings and io_uring: a call {1} allows may fail here. Pass "
        "--seccomp {2} to emulate it",
        at(profile.seccomp_at), profile.name, profile.seccomp.name, run));
  return notes;
}

}  // namespace preflight::plan
