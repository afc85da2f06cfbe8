// ImageStore::resolve: any image reference → a cached, unpacked root filesystem.
#include "image/image_store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

#include "image/image_source.hpp"
#include "image/recipe.hpp"
#include "image/rootfs_cache.hpp"
#include "image/tool_run.hpp"
#include "util/sha256.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

// The recipe hash a built layout was made from; empty when there is no usable layout.
std::string built_recipe_hash(const fs::path& layout) {
  std::ifstream in(layout / "index.json");
  if (!in) return {};
  auto index = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded()) return {};
  try {
    return index.at("manifests").at(0).at("annotations").at(kRecipeHashAnnotation).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}

// A rootfs: folder is used in place. Its "digest" is an identity, not a content hash: the
// canonical path and the folder's change time, so the same folder keeps its identity.
Result<UnpackedImage> use_rootfs_folder(const ImageRef& ref) {
  std::error_code ec;
  fs::path path = fs::canonical(ref.path, ec);
  if (ec || !fs::is_directory(path)) {
    return Error::bad_input(ref.path.string() +
                            ": no such directory; rootfs:PATH needs an unpacked root filesystem");
  }
  struct stat info {};
  ::stat(path.c_str(), &info);
  std::string identity = "rootfs:" + path.string() + "\n" + std::to_string(info.st_mtim.tv_sec) + "." +
                         std::to_string(info.st_mtim.tv_nsec);
  UnpackedImage image;
  image.ref = ref.text;
  image.digest = "sha256:" + sha256_hex(identity);
  image.rootfs = path;
  return image;
}

// Where docker://REF's pull is kept: an OCI layout under the cache.
fs::path registry_layout(const ImageRef& ref, const fs::path& cache_dir) {
  return cache_dir / "registry" / sha256_hex(ref.name).substr(0, 16);
}

// docker://REF goes through skopeo into an OCI layout under the cache, then as oci:.
Result<fs::path> pull_with_skopeo(const ImageRef& ref, const fs::path& cache_dir,
                                  const ProgressSink& progress) {
  std::string skopeo = find_program("skopeo");
  if (skopeo.empty()) {
    return Error::runtime(
        "image " + ref.text +
        ": pulling from a registry needs skopeo, which is not installed; "
        "install it (apt-get install skopeo), or `docker save` the image and use docker-archive:PATH");
  }
  const fs::path layout = registry_layout(ref, cache_dir);
  std::error_code ec;
  fs::create_directories(layout.parent_path(), ec);
  if (progress) progress("pulling " + ref.name + " with skopeo...");
  auto run =
      run_tool(skopeo, {"copy", "--quiet", "docker://" + ref.name, "oci:" + layout.string() + ":latest"},
               "skopeo: ", progress);
  if (!run) return run.error();
  if (run->exit_code != 0) {
    return Error::runtime("image " + ref.text + ": skopeo could not pull it (exit " +
                          std::to_string(run->exit_code) +
                          "); is the network up and the reference right? its last lines:\n" + run->tail);
  }
  return layout;
}

// The names a store may know an image by: as written, and, for a name without a registry
// host, under localhost/, as podman build and podman import name it (team/train:latest is
// localhost/team/train:latest in Podman's store).
std::vector<std::string> store_names(const std::string& transport, const std::string& name) {
  std::vector<std::string> names{name};
  const std::string first = name.substr(0, name.find('/'));
  const bool has_host = name.find('/') != std::string::npos &&
                        (first.find_first_of(".:") != std::string::npos || first == "localhost");
  if (transport == "containers-storage" && !has_host) names.push_back("localhost/" + name);
  return names;
}

// The digest of the manifest the store has for `name`; nullopt when it has no such image, or
// skopeo cannot reach the store (no Docker daemon).
std::optional<std::string> store_digest(const std::string& skopeo, const std::string& transport,
                                        const std::string& name) {
  auto run = run_tool(skopeo, {"inspect", "--format", "{{.Digest}}", transport + ":" + name}, "", nullptr);
  if (!run || run->exit_code != 0) return std::nullopt;
  std::istringstream lines(run->tail);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("sha256:");
    if (at == std::string::npos) continue;
    const std::string hex = line.substr(at + 7, 64);
    if (hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string::npos) return hex;
  }
  return std::nullopt;
}

// An image of Docker's or Podman's store (or, for a plain name, of whichever has it) copied by
// skopeo into an OCI layout of the cache, one per manifest digest: a second resolve of the
// same image copies nothing.
Result<fs::path> copy_from_store(const ImageRef& ref, const fs::path& cache_dir,
                                 const ProgressSink& progress) {
  const std::string skopeo = find_program("skopeo");
  if (skopeo.empty())
    return Error::bad_input(
        "image " + ref.text +
        ": reading Docker's or Podman's image store needs skopeo, which is not installed; "
        "install it (apt-get install skopeo), or give --image (a built-in name, "
        "docker-archive:PATH of docker save, oci:PATH)");
  const std::vector<std::string> transports =
      ref.kind == ImageRef::Kind::LocalStore
          ? std::vector<std::string>{ref.transport}
          : std::vector<std::string>{"containers-storage", "docker-daemon"};
  for (const std::string& transport : transports) {
    for (const std::string& name : store_names(transport, ref.name)) {
      const auto digest = store_digest(skopeo, transport, name);
      if (!digest) continue;
      const fs::path layout = cache_dir / "local" / *digest;
      std::error_code ec;
      if (fs::exists(layout / "index.json", ec)) return layout;
      // Copied aside and renamed into place: a run that stops half-way, or another one
      // copying the same image, never leaves a layout half-written under the digest.
      const fs::path partial = layout.string() + ".partial-" + std::to_string(::getpid());
      fs::remove_all(partial, ec);
      fs::create_directories(partial.parent_path(), ec);
      if (progress) progress("copying " + name + " from " + transport + " with skopeo...");
      auto run =
          run_tool(skopeo, {"copy", "--quiet", transport + ":" + name, "oci:" + partial.string() + ":latest"},
                   "skopeo: ", progress);
      if (!run) return run.error();
      if (run->exit_code != 0) {
        fs::remove_all(partial, ec);
        return Error::runtime("image " + ref.text + ": skopeo could not copy it from " + transport +
                              " (exit " + std::to_string(run->exit_code) + "); its last lines:\n" +
                              run->tail);
      }
      fs::rename(partial, layout, ec);
      if (ec) fs::remove_all(partial, ec);  // another run put the same image there first
      return layout;
    }
  }
  if (ref.kind == ImageRef::Kind::LocalStore)
    return Error::bad_input("image " + ref.text + ": " +
                            (ref.transport == "docker-daemon"
                                 ? "Docker's daemon has no image " + ref.name + ", or is not running"
                                 : "Podman's store (containers-storage) has no image " + ref.name) +
                            "; build or tag it there, or give another --image");
  return Error::bad_input(
      "image " + ref.text +
      " is not a built-in image, and neither Podman's store (containers-storage) nor Docker's "
      "(docker-daemon) has it; build it there (podman build -t " +
      ref.name + " .), give docker://" + ref.name +
      " to pull it, or --image another (a built-in name: pytorch, python; "
      "docker-archive:PATH; oci:PATH)");
}

}  // namespace

ImageStore::ImageStore(fs::path cache_dir, fs::path recipes_dir)
    : cache_dir_(std::move(cache_dir)), recipes_dir_(std::move(recipes_dir)) {}

std::vector<std::string> ImageStore::builtin_names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(recipes_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The image's config and layers, from its archive or layout: `layout` is where a built-in, a
// pulled or a copied image's layout is in the cache.
Result<ImageSource> read_source(const ImageRef& ref, const fs::path& layout) {
  Result<ImageSource> source = ref.kind == ImageRef::Kind::OciLayout ? read_oci_layout(ref.path, ref.tag)
                               : ref.kind == ImageRef::Kind::DockerArchive ? read_docker_archive(ref.path)
                               : ref.kind == ImageRef::Kind::Builtin       ? read_oci_layout(layout, "")
                                                                     : read_oci_layout(layout, "latest");
  if (!source) return source.error().context("image " + ref.text);
  return source;
}

Result<UnpackedImage> ImageStore::resolve(const ImageRef& ref, const ProgressSink& progress) {
  if (ref.kind == ImageRef::Kind::Rootfs) return use_rootfs_folder(ref);

  fs::path layout;
  switch (ref.kind) {
    case ImageRef::Kind::Builtin: {
      fs::path recipe_file = recipes_dir_ / (ref.name + ".yaml");
      layout = cache_dir_ / "images" / ref.name;
      if (fs::exists(recipe_file)) {
        auto recipe = load_recipe(recipe_file);
        if (!recipe) return recipe.error();
        if (built_recipe_hash(layout) != recipe->hash) {
          // Runs that find the recipe changed at once build it once: the others wait for the
          // first and find the image built.
          auto turn = take_build_turn(ref.name, progress);
          if (!turn) return turn.error();
          if (built_recipe_hash(layout) != recipe->hash) {
            auto built = build_in_turn(ref.name, progress);
            if (!built) return built.error();
          }
        }
      } else if (!fs::exists(layout / "index.json")) {
        auto missing = build(ref.name, progress);  // reports the unknown name and the known ones
        if (!missing) return missing.error();
      }
      break;
    }
    case ImageRef::Kind::Registry: {
      auto pulled = pull_with_skopeo(ref, cache_dir_, progress);
      if (!pulled) return pulled.error();
      layout = *pulled;
      break;
    }
    case ImageRef::Kind::LocalStore:
    case ImageRef::Kind::Named: {
      auto copied = copy_from_store(ref, cache_dir_, progress);
      if (!copied) return copied.error();
      layout = *copied;
      break;
    }
    case ImageRef::Kind::OciLayout:
    case ImageRef::Kind::DockerArchive:
    case ImageRef::Kind::Rootfs:
      break;
  }
  auto source = read_source(ref, layout);
  if (!source) return source.error();

  auto config = parse_image_config(source->config_json, ref.text);
  if (!config) return config.error();
  RootfsCache cache(cache_dir_);
  auto unpacked = cache.unpack(*source, ref.text, progress);
  if (!unpacked) return unpacked.error();
  UnpackedImage image;
  image.ref = ref.text;
  image.digest = source->digest;
  image.rootfs = std::move(unpacked->rootfs);
  image.sealed = std::move(unpacked->sealed);
  image.hold = std::move(unpacked->hold);
  image.config = std::move(*config);
  return image;
}

Result<std::string> ImageStore::digest_here(const ImageRef& ref) const {
  std::error_code ec;
  fs::path layout;
  switch (ref.kind) {
    case ImageRef::Kind::Builtin:
      layout = cache_dir_ / "images" / ref.name;
      if (fs::exists(layout / "index.json", ec)) break;
      if (!fs::exists(recipes_dir_ / (ref.name + ".yaml"), ec)) return no_recipe(ref.name);
      return Error::bad_input("image " + ref.text +
                              " is not built, so the cache holds none of it (`preflight image build " +
                              ref.name + "` builds it)");
    case ImageRef::Kind::Registry:
      layout = registry_layout(ref, cache_dir_);
      if (!fs::exists(layout / "index.json", ec))
        return Error::bad_input("image " + ref.text + " was not pulled, so the cache holds none of it");
      break;
    case ImageRef::Kind::LocalStore:
    case ImageRef::Kind::Named:
      return Error::bad_input("image " + ref.text +
                              ": an image of Docker's or Podman's store is named here by its digest, as "
                              "`preflight cache list` prints it (sha256:0123456789ab)");
    case ImageRef::Kind::Rootfs:
      return Error::bad_input("image " + ref.text +
                              ": a rootfs: folder is used in place, never unpacked into the cache");
    case ImageRef::Kind::OciLayout:
    case ImageRef::Kind::DockerArchive:
      break;
  }
  auto source = read_source(ref, layout);
  if (!source) return source.error();
  return source->digest;
}

}  // namespace preflight::image
