// Images: references (built-in | docker-archive:PATH | oci:PATH[:TAG] | rootfs:PATH |
// docker://REF | docker-daemon:NAME | containers-storage:NAME | a name a local store may
// have), built-in recipes (images/NAME.yaml, built with mmdebstrap into an OCI
// layout), and the digest-keyed cache of unpacked root filesystems. A warm resolve copies
// no image data.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image/sealed_folders.hpp"
#include "util/error.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::image {

struct ImageRef {
  // LocalStore: an image of Docker's or Podman's store (transport docker-daemon or
  // containers-storage); Named: a name such as team/train:latest, looked up in both stores.
  enum class Kind { Builtin, DockerArchive, OciLayout, Rootfs, Registry, LocalStore, Named };
  Kind kind = Kind::Builtin;
  std::string text;            // as the user wrote it
  std::string name;            // built-in name, registry reference, or a store's image name
  std::string transport;       // LocalStore: "docker-daemon" or "containers-storage"
  std::filesystem::path path;  // for archive/layout/rootfs kinds, absolute
  std::string tag;             // oci:PATH:TAG
};

// The parts of the image configuration a run needs (OCI image config "config" object).
struct ImageConfig {
  std::vector<std::string> env;  // "KEY=VALUE"
  std::string user;
  std::string working_dir;
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
};

struct UnpackedImage {
  std::string ref;               // as the user wrote it
  std::string digest;            // "sha256:<hex>": the image config digest (image ID)
  std::filesystem::path rootfs;  // read-only lower layer for the container; never written
  ImageConfig config;
  // Folders of the root that a run may bind in place of the overlay (sealed_folders.hpp); none
  // for a rootfs: folder, whose files can change under its name.
  std::vector<SealedFolder> sealed;
  // Keeps a cached root from being pruned while this image (or a copy of it) is in use;
  // none for a rootfs: folder.
  std::shared_ptr<const UniqueFd> hold;
};

// Progress lines for long steps ("building image pytorch: ..."); may be a no-op.
using ProgressSink = std::function<void(const std::string&)>;

// Relative paths resolve against `base_dir` (the job file's folder). Unknown scheme → exit 2.
Result<ImageRef> parse_image_ref(const std::string& text, const std::filesystem::path& base_dir);

class ImageStore {
 public:
  // cache_dir: e.g. ~/.cache/preflight; recipes_dir: the repository's images/ folder.
  ImageStore(std::filesystem::path cache_dir, std::filesystem::path recipes_dir);

  // Makes the image's root filesystem available: builds a missing built-in image, unpacks
  // archives and layouts into the cache once (keyed by digest), then returns the cached copy.
  Result<UnpackedImage> resolve(const ImageRef& ref, const ProgressSink& progress);

  // Builds (or rebuilds) a built-in image from its recipe; returns its digest. One build of
  // a name at a time: another process's waits for it (<cache>/locks/build-NAME).
  Result<std::string> build(const std::string& name, const ProgressSink& progress);

  std::vector<std::string> builtin_names() const;

  // The image's digest, read from what is already here without building, pulling or copying
  // it: a built image's layout, an OCI layout, a docker archive, a pull kept in the cache. An
  // image of a local store or a rootfs: folder is bad input.
  Result<std::string> digest_here(const ImageRef& ref) const;

 private:
  Result<std::string> build_in_turn(const std::string& name, const ProgressSink& progress);
  Result<UniqueFd> take_build_turn(const std::string& name, const ProgressSink& progress) const;
  // No recipe images/NAME.yaml: the error names the built-in images there are.
  Error no_recipe(const std::string& name) const;

  std::filesystem::path cache_dir_;
  std::filesystem::path recipes_dir_;
};

// The cache folder: $PREFLIGHT_CACHE, else $XDG_CACHE_HOME/preflight, else ~/.cache/preflight.
std::filesystem::path default_cache_dir();

}  // namespace preflight::image
