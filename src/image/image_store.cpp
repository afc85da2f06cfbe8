// ImageStore::resolve: any image reference → a cached, unpacked root filesystem.
#include "image/image_store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
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
  fs::path layout = cache_dir / "registry" / sha256_hex(ref.name).substr(0, 16);
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

Result<UnpackedImage> ImageStore::resolve(const ImageRef& ref, const ProgressSink& progress) {
  if (ref.kind == ImageRef::Kind::Rootfs) return use_rootfs_folder(ref);

  Result<ImageSource> source = Error::runtime("unreachable");
  switch (ref.kind) {
    case ImageRef::Kind::Builtin: {
      fs::path recipe_file = recipes_dir_ / (ref.name + ".yaml");
      fs::path layout = cache_dir_ / "images" / ref.name;
      if (fs::exists(recipe_file)) {
        auto recipe = load_recipe(recipe_file);
        if (!recipe) return recipe.error();
        if (built_recipe_hash(layout) != recipe->hash) {
          auto built = build(ref.name, progress);
          if (!built) return built.error();
        }
      } else if (!fs::exists(layout / "index.json")) {
        auto missing = build(ref.name, progress);  // reports the unknown name and the known ones
        if (!missing) return missing.error();
      }
      source = read_oci_layout(layout, "");
      break;
    }
    case ImageRef::Kind::OciLayout:
      source = read_oci_layout(ref.path, ref.tag);
      break;
    case ImageRef::Kind::DockerArchive:
      source = read_docker_archive(ref.path);
      break;
    case ImageRef::Kind::Registry: {
      auto layout = pull_with_skopeo(ref, cache_dir_, progress);
      if (!layout) return layout.error();
      source = read_oci_layout(*layout, "latest");
      break;
    }
    case ImageRef::Kind::Rootfs:
      break;
  }
  if (!source) return source.error().context("image " + ref.text);

  auto config = parse_image_config(source->config_json, ref.text);
  if (!config) return config.error();
  RootfsCache cache(cache_dir_);
  auto unpacked = cache.unpack(*source, ref.text, progress);
  if (!unpacked) return unpacked.error();
  UnpackedImage image;
  image.ref = ref.text;
  image.digest = source->digest;
  std::tie(image.rootfs, image.hold) = std::move(*unpacked);
  image.config = std::move(*config);
  return image;
}

}  // namespace preflight::image
