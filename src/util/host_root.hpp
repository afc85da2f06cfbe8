// Whether Preflight is root on the host itself, not merely root inside a user namespace (as a
// rootless run is, docs/rootless.md): only then can it keep an image's file owners, create
// cgroups and use runc's default state folder.
#pragma once

#include <string_view>

namespace preflight {

// The text of /proc/self/uid_map maps every id to itself: the host's user namespace.
bool is_identity_uid_map(std::string_view uid_map);

bool is_host_root();

}  // namespace preflight
