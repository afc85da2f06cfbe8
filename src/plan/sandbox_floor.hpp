// The sandbox a run gets (docs/security.md "The sandbox floor"): no network and the `default`
// seccomp policy, lowered only by the user on the command line (--network, --seccomp NAME),
// never by a job file or a profile. A profile's `network:` and `seccomp:` say what its
// platform does; where that is more than the floor, the report says what the dry run did not
// emulate.
#pragma once

#include <string>
#include <vector>

#include "model/finding.hpp"
#include "spec/platform_profile.hpp"
#include "spec/seccomp_policy.hpp"

namespace preflight::plan {

struct SandboxFloor {
  bool network = false;         // --network: the host's network
  spec::SeccompPolicy seccomp;  // the floor's policy, or the one --seccomp names
  // The system-call ABIs besides the host's own that the filter answers (SCMP_ARCH_*): under
  // the floor, those the image has a program loader of; a call of another one kills the caller
  // with SIGSYS.
  std::vector<std::string> compat_abis;
};

// An ABI besides the host's own that its processes can call the kernel through, with the
// program loader (PT_INTERP) every dynamically linked program of it names.
struct CompatAbi {
  const char* name;    // libseccomp's
  const char* loader;  // absolute, in the image
};

// On x86-64 i386's (int 0x80) and x32's, on aarch64 32-bit Arm's (one ABI, two loaders).
const std::vector<CompatAbi>& compat_abi_loaders();

// Each ABI of compat_abi_loaders() once: what a container runtime's filter answers.
std::vector<std::string> compat_abis();

// The report's notes on the sandbox: each way the user lowered the floor, and each way the
// platform (at the profile's line) gives its jobs more than the dry run did.
std::vector<std::string> sandbox_notes(const spec::PlatformProfile& profile, const SandboxFloor& sandbox);

// A failure that only the floor caused: a download on a platform whose nodes have network,
// or a refused call on one that runs its jobs unconfined, made without the user's --network
// or --seccomp. The platform would not fail there, so it is no evidence against the job: its
// finding becomes a warning that says what the dry run withheld, how to grant it, and that
// what follows did not run.
void soften_withheld(std::vector<model::Finding>& findings, const spec::PlatformProfile& profile,
                     const SandboxFloor& sandbox);

}  // namespace preflight::plan
