#include "util/host_root.hpp"

#include <unistd.h>

#include <sstream>

#include "util/text.hpp"

namespace preflight {

bool is_identity_uid_map(std::string_view uid_map) {
  std::istringstream in{std::string(uid_map)};
  unsigned long inside = 1, outside = 1, count = 0;
  if (!(in >> inside >> outside >> count)) return false;
  unsigned long more = 0;
  return inside == 0 && outside == 0 && count == 4294967295UL && !(in >> more);
}

bool is_host_root() {
  if (::geteuid() != 0) return false;
  // A kernel without user namespaces has no such file: its only namespace is the host's.
  auto map = read_file("/proc/self/uid_map");
  return !map || is_identity_uid_map(*map);
}

}  // namespace preflight
