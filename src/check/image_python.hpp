// The image's own Python, run in a container like the job's (sandbox/runtime.hpp): as
// nobody, without network or capabilities, over an overlay of the cached root file system,
// which is never written. Static checks use it for what only the image can answer: which
// modules it can import, which code its interpreter can parse. Without root it needs
// Preflight's user namespace (docs/rootless.md), as a run does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/runtime.hpp"
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
  // one); nullopt when the image has none. It runs in containers of `runtime`, which must
  // outlive it.
  static std::optional<ImagePython> find(const std::filesystem::path& rootfs,
                                         const std::vector<std::string>& env,
                                         sandbox::ContainerRuntime& runtime);

  // Runs `python -I -B [-S] -c program` in the image with `input` on stdin. An error when
  // the container cannot be run, is interrupted or times out (5 minutes), or the output is
  // larger than 64 MiB; the exit status is in the result.
  Result<PythonRun> run(const std::string& program, const std::string& input, bool with_site) const;

  const std::string& path() const { return path_; }  // inside the image, e.g. /usr/bin/python3

 private:
  ImagePython(std::filesystem::path rootfs, std::string path, std::string search_path,
              sandbox::ContainerRuntime& runtime)
      : rootfs_(std::move(rootfs)),
        path_(std::move(path)),
        search_path_(std::move(search_path)),
        runtime_(&runtime) {}
  std::filesystem::path rootfs_;
  std::string path_;
  std::string search_path_;  // the image's PATH
  sandbox::ContainerRuntime* runtime_;
};

}  // namespace preflight::check
