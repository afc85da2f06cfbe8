// The image's own Python, run without a container: a chroot into the cached root filesystem
// in a new user namespace (util-linux's unshare), so that it works for non-root users too.
// Static checks use it for what only the image can answer: which modules it can import,
// which code its interpreter can parse. The root filesystem is never written (-B).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::check {

// `path` (absolute, as seen inside the image) resolved on the host under `root`, following
// symlinks as the image would see them (an absolute link target stays inside `root`).
// nullopt when it does not exist in the image.
std::optional<std::filesystem::path> resolve_in_root(const std::filesystem::path& root,
                                                     const std::string& path);

struct PythonRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class ImagePython {
 public:
  // Finds `python3` (else `python`) on the image's PATH (its config's ENV, else the usual
  // one); nullopt when the image has none.
  static std::optional<ImagePython> find(const std::filesystem::path& rootfs,
                                         const std::vector<std::string>& env);

  // Runs `python -I -B [-S] -c program` in the image with `input` on stdin. An error only
  // when the process cannot be started; the exit status is in the result.
  Result<PythonRun> run(const std::string& program, const std::string& input, bool with_site) const;

  const std::string& path() const { return path_; }  // inside the image, e.g. /usr/bin/python3

 private:
  ImagePython(std::filesystem::path rootfs, std::string path, std::string search_path)
      : rootfs_(std::move(rootfs)), path_(std::move(path)), search_path_(std::move(search_path)) {}
  std::filesystem::path rootfs_;
  std::string path_;
  std::string search_path_;  // the image's PATH
};

}  // namespace preflight::check
