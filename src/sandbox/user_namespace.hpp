// Rootless runs (docs/rootless.md): a non-root Preflight moves into a user namespace of its
// own, where it is root over its own uid and a range of subordinate ids (/etc/subuid), so it
// can mount the overlay root, give folders to the platform's user and drive runc.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace preflight::sandbox {

// A block of subordinate ids of one user, as /etc/subuid and /etc/subgid list them.
struct IdRange {
  unsigned first = 0;
  unsigned count = 0;
};

// Fewest subordinate ids Preflight needs: the platform's users (uid 1000 and the like) and
// the image's own (up to 65535) must all exist inside the namespace.
inline constexpr unsigned kSubordinateIdsNeeded = 65536;

// The first range of `user` (named, or by its numeric id) in the text of /etc/subuid or
// /etc/subgid; nullopt when there is none.
std::optional<IdRange> subordinate_range(std::string_view file_text, std::string_view user, unsigned id);

// The arguments of newuidmap/newgidmap for process `pid`: id 0 inside is `own_id` outside
// (so the files the user owns, the cached image among them, are root's inside), and ids from
// 1 on are the subordinate range.
std::vector<std::string> id_map_arguments(pid_t pid, unsigned own_id, IdRange subordinate);

// As root on the host this does nothing and returns nullopt. Otherwise it forks: the child
// enters a new user and mount namespace (mapped by newuidmap and newgidmap), becomes root in
// it and returns nullopt to go on with the command; the parent forwards SIGINT, SIGTERM and
// SIGHUP to it and returns the child's exit status, which the caller exits with. Before the
// fork and after the child ends, the parent stops the containers of runs whose process in a
// namespace died (stop_abandoned_containers), which only it can. Must be called while the
// process has a single thread. Missing uidmap or subordinate ids → exit 3.
Result<std::optional<int>> enter_user_namespace();

}  // namespace preflight::sandbox
