#include "spec/host_grant.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "util/text.hpp"

namespace preflight::spec {

namespace fs = std::filesystem;

namespace {

// The user's home, as the shell has it: a work tree there holds every file of the user.
std::optional<fs::path> home_folder() {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return std::nullopt;
  std::error_code ec;
  fs::path real = fs::canonical(home, ec);
  if (ec) return std::nullopt;
  return real;
}

bool is_within(const fs::path& path, const fs::path& folder) {
  return path == folder || is_under(path.string(), folder.string());
}

// The folder to suggest to --allow for `path`: the path itself when a folder, else its folder.
fs::path folder_to_allow(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? path : path.parent_path();
}

}  // namespace

std::optional<fs::path> job_tree(const fs::path& job_dir) {
  std::error_code ec;
  const fs::path folder = fs::canonical(job_dir, ec);
  if (ec) return std::nullopt;
  const auto home = home_folder();
  const auto too_wide = [&](const fs::path& tree) { return tree == tree.root_path() || tree == home; };
  for (fs::path at = folder; !too_wide(at); at = at.parent_path()) {
    if (fs::exists(at / ".git", ec)) return at;
    if (at == at.parent_path()) break;
  }
  if (too_wide(folder)) return std::nullopt;
  return folder;
}

Result<fs::path> confine_host_path(const fs::path& path, const fs::path& job_dir, const HostGrant& grant,
                                   const std::string& what, const SourceLocation& where) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return path;  // missing: the caller says so, with what would make it right
  const auto tree = job_tree(job_dir);
  if (tree && is_within(real, *tree)) return real;
  for (const fs::path& folder : grant.folders) {
    const fs::path allowed = fs::weakly_canonical(folder, ec);
    if (!ec && is_within(real, allowed)) return real;
  }
  std::string message = what + ": " + path.string();
  if (real != path) message += " (" + real.string() + " after its links)";
  message += " is outside " +
             (tree ? "the job's folder tree " + tree->string() : "any folder the job file may name");
  if (!grant.folders.empty()) message += " and the folders allowed";
  message +=
      "; a job file names only files of its own repository: put a copy or sample there, or, if you trust "
      "this job with that folder, run with --allow " +
      folder_to_allow(real).string();
  return Error::bad_input(message, where);
}

bool climbs_out(const std::string& written) {
  std::string_view rest = written;
  if (const auto scheme = rest.find("://"); scheme != std::string_view::npos) rest.remove_prefix(scheme + 3);
  std::istringstream parts{std::string(rest)};
  for (std::string part; std::getline(parts, part, '/');)
    if (part == "..") return true;
  return false;
}

namespace {

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// HOST of HOST, HOST:PORT, [V6] or [V6]:PORT.
std::string host_without_port(const std::string& registry) {
  if (!registry.empty() && registry[0] == '[') return registry.substr(1, registry.find(']') - 1);
  if (std::count(registry.begin(), registry.end(), ':') > 1) return registry;  // a bare IPv6 address
  return registry.substr(0, registry.find(':'));
}

bool is_local_address(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    const auto ip = ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr);
    return (ip >> 24) == 127 || (ip >> 16) == 0xA9FE || ip == 0;  // 127/8, 169.254/16, 0.0.0.0
  }
  if (address->sa_family == AF_INET6) {
    const in6_addr& ip = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&ip)) {
      sockaddr_in mapped{};
      mapped.sin_family = AF_INET;
      std::memcpy(&mapped.sin_addr, &ip.s6_addr[12], 4);
      return is_local_address(reinterpret_cast<const sockaddr*>(&mapped));
    }
    return IN6_IS_ADDR_LOOPBACK(&ip) || IN6_IS_ADDR_LINKLOCAL(&ip) || IN6_IS_ADDR_UNSPECIFIED(&ip);
  }
  return false;
}

// Whether `host` is, or resolves to, an address of this machine or its link: a name that
// does not resolve is left to the fetch, which then fails on its own.
bool is_local_host(const std::string& host) {
  const std::string name = lower_case(host);
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) return false;
  bool local = false;
  for (const addrinfo* at = found; at; at = at->ai_next) local = local || is_local_address(at->ai_addr);
  freeaddrinfo(found);
  return local;
}

}  // namespace

std::string registry_host(const std::string& reference) {
  const auto slash = reference.find('/');
  if (slash == std::string::npos) return "docker.io";
  const std::string first = reference.substr(0, slash);
  const bool host = first.find_first_of(".:") != std::string::npos || first == "localhost" || first[0] == '[';
  return host ? first : "docker.io";
}

Status check_registry(const std::string& reference, const HostGrant& grant, const SourceLocation& where) {
  const std::string registry = registry_host(reference);
  if (is_local_host(host_without_port(registry)))
    return Error::bad_input("image: docker://" + reference + " is on " + registry +
                                ", an address of this machine or its link; a job file never makes Preflight "
                                "connect there. Fetch the image yourself and give it on the command line "
                                "(--image docker-archive:PATH or oci:PATH)",
                            where);
  const bool allowed =
      std::any_of(grant.registries.begin(), grant.registries.end(),
                  [&](const std::string& host) { return lower_case(host) == lower_case(registry); });
  if (!allowed)
    return Error::bad_input(
        "image: docker://" + reference + " is on the registry " + registry +
            ", which a job file may name only when you allow it: run with --allow-registry " + registry +
            " (or $PREFLIGHT_ALLOW_REGISTRY) if you trust this job with it, or "
            "give the image on the command line with --image",
        where);
  return Ok{};
}

HostGrant environment_grant(const fs::path& base_dir) {
  HostGrant grant;
  const auto list = [](const char* name, char separator) {
    std::vector<std::string> items;
    const char* value = std::getenv(name);
    std::istringstream parts(value ? value : "");
    for (std::string item; std::getline(parts, item, separator);)
      if (!trim(item).empty()) items.push_back(trim(item));
    return items;
  };
  for (const std::string& folder : list("PREFLIGHT_ALLOW", ':'))
    grant.folders.push_back((base_dir / folder).lexically_normal());
  grant.registries = list("PREFLIGHT_ALLOW_REGISTRY", ',');
  return grant;
}

}  // namespace preflight::spec
