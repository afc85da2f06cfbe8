// ImageStore::build: a recipe → mmdebstrap → root filesystem tar → OCI layout in the cache.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "image/image_store.hpp"
#include "image/oci_writer.hpp"
#include "image/recipe.hpp"
#include "image/rootfs_cache.hpp"
#include "image/tool_run.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

Result<UniqueFd> ImageStore::take_build_turn(const std::string& name, const ProgressSink& progress) const {
  return take_turn(cache_dir_ / "locks" / ("build-" + name),
                   "waiting for another Preflight's build of image " + name + "...", progress);
}

Result<std::string> ImageStore::build(const std::string& name, const ProgressSink& progress) {
  auto turn = take_build_turn(name, progress);
  if (!turn) return turn.error();
  return build_in_turn(name, progress);
}

Error ImageStore::no_recipe(const std::string& name) const {
  std::string known;
  for (const auto& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
  return Error::bad_input("no built-in image \"" + name + "\" (no " +
                          (recipes_dir_ / (name + ".yaml")).string() +
                          "); built-in images: " + (known.empty() ? "(none)" : known));
}

Result<std::string> ImageStore::build_in_turn(const std::string& name, const ProgressSink& progress) {
  fs::path recipe_file = recipes_dir_ / (name + ".yaml");
  if (!fs::exists(recipe_file)) return no_recipe(name);
  auto recipe = load_recipe(recipe_file);
  if (!recipe) return recipe.error();
  std::string mmdebstrap = find_program("mmdebstrap");
  if (mmdebstrap.empty()) {
    return Error::runtime(
        "building image " + name +
        " needs mmdebstrap, which is not installed; "
        "install it (apt-get install mmdebstrap) or use a docker-archive:/oci:/rootfs: image");
  }

  fs::path images_dir = cache_dir_ / "images";
  fs::path temp = images_dir / (".tmp-" + name + "-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(temp, ec);
  fs::create_directories(temp, ec);
  if (ec) return Error::runtime(temp.string() + ": cannot create: " + ec.message());
  struct RemoveOnExit {
    fs::path path;
    ~RemoveOnExit() {
      std::error_code ignored;
      if (!path.empty()) fs::remove_all(path, ignored);
    }
  } cleanup{temp};

  if (progress) progress("building image " + name + " with mmdebstrap (first use, takes a few minutes)...");
  auto started = std::chrono::steady_clock::now();
  fs::path layer_tar = temp / "rootfs.tar";
  auto run = run_tool(mmdebstrap, mmdebstrap_arguments(*recipe, layer_tar), "mmdebstrap: ", progress);
  if (!run) return run.error().context("building image " + name);
  if (run->exit_code != 0) {
    return Error::runtime("building image " + name + ": mmdebstrap failed (exit " +
                          std::to_string(run->exit_code) + "); its last lines:\n" + run->tail +
                          "check the network and the recipe " + recipe_file.string());
  }

  OciLayoutSpec spec;
  for (const auto& [key, value] : recipe->env) spec.config.env.push_back(key + "=" + value);
  spec.config.user = recipe->user;
  spec.config.working_dir = recipe->workdir;
  spec.config.entrypoint = recipe->entrypoint;
  spec.config.cmd = recipe->cmd;
  spec.created_by = "preflight image build " + name + " (mmdebstrap " + recipe->suite + ")";
  spec.annotations[kRecipeHashAnnotation] = recipe->hash;
  fs::path layout = temp / "layout";
  auto digest = write_oci_layout(layout, layer_tar, spec);
  if (!digest) return digest.error().context("building image " + name);

  // Swap the new layout in: the old one moves aside first so the name is never half-written.
  fs::path final_dir = images_dir / name;
  fs::path old = temp / "old";
  if (fs::exists(final_dir)) fs::rename(final_dir, old, ec);
  if (!ec) fs::rename(layout, final_dir, ec);
  if (ec)
    return Error::runtime(final_dir.string() + ": cannot move the built image into place: " + ec.message());

  if (progress) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[128];
    std::snprintf(line, sizeof line, "built image %s (%s) in %.0f s", name.c_str(), digest->c_str(), seconds);
    progress(line);
  }
  return digest;
}

}  // namespace preflight::image
