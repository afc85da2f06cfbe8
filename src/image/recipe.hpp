// A built-in image recipe (images/NAME.yaml): which Debian suite and packages mmdebstrap
// installs, what is removed or edited afterwards, and the image config (env, user, workdir, cmd).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace preflight::image {

// One text replaced in the files a glob matches, after install: a package's metadata that
// disagrees with the suite it comes from (docs/images.md).
struct TextEdit {
  std::string path;     // absolute path or glob, as remove's
  std::string replace;  // the literal text, which every file matched must hold
  std::string with;     // what takes its place
};

struct ImageRecipe {
  std::filesystem::path file;
  std::string name;  // the file's stem
  std::string description;
  std::string suite;  // e.g. bookworm
  std::string variant = "apt";
  std::vector<std::string> mirrors;     // empty: mmdebstrap's default for the suite
  std::vector<std::string> components;  // empty: main
  std::vector<std::string> packages;
  std::vector<std::string> exclude;                      // dpkg path-exclude globs (docs, man pages)
  std::vector<std::string> remove;                       // absolute paths or globs deleted after install
  std::vector<TextEdit> edit;                            // text replaced in installed files
  std::vector<std::pair<std::string, std::string>> env;  // in the order written
  std::string user;
  std::string workdir;
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::string hash;  // sha256 hex of the recipe file and the builder version
};

// The index.json annotation of a built image that records its recipe's hash.
inline constexpr const char* kRecipeHashAnnotation = "dev.preflight.recipe.sha256";

Result<ImageRecipe> load_recipe(const std::filesystem::path& file);

// mmdebstrap's argument vector (without the program) that writes the root filesystem as a
// tar to `output_tar`.
std::vector<std::string> mmdebstrap_arguments(const ImageRecipe& recipe,
                                              const std::filesystem::path& output_tar);

}  // namespace preflight::image
