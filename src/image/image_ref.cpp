// Image references as the user writes them, and where the cache lives.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include "image/image_store.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

constexpr const char* kValidForms =
    "use a built-in image name (pytorch, python), docker-archive:PATH, oci:PATH[:TAG], "
    "rootfs:PATH, docker://REF, docker-daemon:NAME, containers-storage:NAME, or the name of an image in "
    "Docker's or Podman's store (team/train:latest)";

fs::path absolute_from(const std::string& path_text, const fs::path& base_dir) {
  fs::path path = path_text;
  if (!path_text.empty() && path_text[0] == '~') {
    if (const char* home = std::getenv("HOME"); home && *home) {
      path = fs::path(home) / path_text.substr(path_text.size() > 1 && path_text[1] == '/' ? 2 : 1);
    }
  }
  if (path.is_relative()) path = base_dir / path;
  return path.lexically_normal();
}

// A name as docker and podman tag images: [HOST[:PORT]/]PATH[:TAG][@DIGEST], lower-case path
// components of letters, digits and . _ -.
bool is_image_name(std::string_view text) {
  if (text.empty() || !std::isalnum(static_cast<unsigned char>(text[0]))) return false;
  if (text.find("//") != std::string_view::npos || text.back() == '/' || text.back() == ':') return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("._-/:@").find(c) != std::string_view::npos;
  });
}

bool is_builtin_name(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Result<ImageRef> parse_image_ref(const std::string& text, const fs::path& base_dir) {
  ImageRef ref;
  ref.text = text;
  auto rest_after = [&](std::string_view prefix) { return text.substr(prefix.size()); };
  auto starts = [&](std::string_view prefix) {
    return std::string_view(text).substr(0, prefix.size()) == prefix;
  };

  if (starts("docker://")) {
    ref.kind = ImageRef::Kind::Registry;
    ref.name = rest_after("docker://");
    if (ref.name.empty())
      return Error::bad_input("image \"" + text +
                              "\": no registry reference after docker://; e.g. "
                              "docker://pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime");
    return ref;
  }
  for (std::string_view transport : {"docker-daemon:", "containers-storage:"}) {
    if (!starts(transport)) continue;
    ref.kind = ImageRef::Kind::LocalStore;
    ref.transport = std::string(transport.substr(0, transport.size() - 1));
    ref.name = rest_after(transport);
    if (!is_image_name(ref.name))
      return Error::bad_input("image \"" + text + "\": expected an image's name after " +
                              std::string(transport) + ", e.g. " + std::string(transport) +
                              "team/train:latest");
    return ref;
  }
  if (starts("docker-archive:") || starts("oci:") || starts("rootfs:")) {
    std::string scheme = text.substr(0, text.find(':'));
    std::string path_text = text.substr(scheme.size() + 1);
    if (scheme == "oci") {
      // oci:PATH:TAG — the tag is what follows the last ':' after the last '/'.
      std::size_t slash = path_text.rfind('/');
      std::size_t colon = path_text.rfind(':');
      if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
        ref.tag = path_text.substr(colon + 1);
        path_text.resize(colon);
      }
    }
    if (path_text.empty()) {
      return Error::bad_input("image \"" + text + "\": no path after " + scheme + ":; " + kValidForms);
    }
    ref.kind = scheme == "oci"      ? ImageRef::Kind::OciLayout
               : scheme == "rootfs" ? ImageRef::Kind::Rootfs
                                    : ImageRef::Kind::DockerArchive;
    ref.path = absolute_from(path_text, base_dir);
    return ref;
  }
  if (text.find(':') == std::string::npos && is_builtin_name(text)) {
    ref.kind = ImageRef::Kind::Builtin;
    ref.name = text;
    return ref;
  }
  if (text.empty()) return Error::bad_input(std::string("empty image reference; ") + kValidForms);
  if (is_image_name(text)) {
    ref.kind = ImageRef::Kind::Named;
    ref.name = text;
    return ref;
  }
  return Error::bad_input("image \"" + text + "\": unknown image reference form; " + kValidForms);
}

fs::path default_cache_dir() {
  if (const char* dir = std::getenv("PREFLIGHT_CACHE"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return fs::path(dir) / "preflight";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "preflight";
  return fs::temp_directory_path() / "preflight-cache";
}

}  // namespace preflight::image
