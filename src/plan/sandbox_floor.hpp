// The sandbox a run gets (docs/security.md "The sandbox floor"): no network and the `default`
// seccomp policy, lowered only by the user on the command line (--network, --seccomp NAME),
// never by a job file or a profile. A profile's `network:` and `seccomp:` say what its
// platform does; where that is more than the floor, the report says what the dry run did not
// emulate.
#pragma once

#include <string>
#include <vector>

#include "spec/platform_profile.hpp"
#include "spec/seccomp_policy.hpp"

namespace preflight::plan {

struct SandboxFloor {
  bool network = false;         // --network: the host's network
  spec::SeccompPolicy seccomp;  // the floor's policy, or the one --seccomp names
};

// The report's notes on the sandbox: each way the user lowered the floor, and each way the
// platform (at the profile's line) gives its jobs more than the dry run did.
std::vector<std::string> sandbox_notes(const spec::PlatformProfile& profile, const SandboxFloor& sandbox);

}  // namespace preflight::plan
