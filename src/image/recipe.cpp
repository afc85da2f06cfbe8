#include "image/recipe.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <set>

#include "util/sha256.hpp"
#include "util/text.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

// Bumped when the builder changes what it makes from the same recipe, so images rebuild.
constexpr const char* kBuilderVersion = "preflight-image-builder/1";

const std::set<std::string> kKeys = {"description", "suite",      "variant", "mirrors", "components",
                                     "packages",    "exclude",    "remove",  "env",     "user",
                                     "workdir",     "entrypoint", "cmd"};

SourceLocation at(const fs::path& file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return {file, mark.line + 1, mark.column + 1};
}

Result<std::vector<std::string>> string_list(const fs::path& file, const YAML::Node& node,
                                             const std::string& key) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence())
    return Error::bad_input("\"" + key + "\" must be a list of strings", at(file, node));
  for (const auto& item : node) {
    if (!item.IsScalar())
      return Error::bad_input("\"" + key + "\" must be a list of strings", at(file, item));
    out.push_back(item.as<std::string>());
  }
  return out;
}

Result<std::string> scalar(const fs::path& file, const YAML::Node& node, const std::string& key) {
  if (!node || node.IsNull()) return std::string();
  if (!node.IsScalar()) return Error::bad_input("\"" + key + "\" must be a string", at(file, node));
  return node.as<std::string>();
}

// Paths go into an mmdebstrap shell hook unquoted (so globs expand): allow no shell syntax.
bool safe_glob(const std::string& path) {
  if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos) return false;
  for (char c : path) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) ||
              std::string_view("/._-+*?@").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Result<ImageRecipe> load_recipe(const fs::path& file) {
  auto text = read_file(file);
  if (!text) return Error::bad_input("cannot read the image recipe", {file});

  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return Error::bad_input("malformed YAML: " + e.msg, {file, e.mark.line + 1, e.mark.column + 1});
  }
  if (!doc.IsMap()) return Error::bad_input("an image recipe must be a YAML mapping", {file});

  ImageRecipe recipe;
  recipe.file = file;
  recipe.name = file.stem().string();
  recipe.hash = sha256_hex(std::string(kBuilderVersion) + "\n" + *text);
  for (const auto& item : doc) {
    std::string key = item.first.as<std::string>();
    if (!kKeys.count(key)) {
      return Error::bad_input("unknown key \"" + key + "\"; recipe keys are described in docs/images.md",
                              at(file, item.first));
    }
  }
#define PF_TRY(var, expr)             \
  {                                   \
    auto value = (expr);              \
    if (!value) return value.error(); \
    (var) = std::move(*value);        \
  }
  PF_TRY(recipe.description, scalar(file, doc["description"], "description"));
  PF_TRY(recipe.suite, scalar(file, doc["suite"], "suite"));
  if (doc["variant"]) PF_TRY(recipe.variant, scalar(file, doc["variant"], "variant"));
  PF_TRY(recipe.mirrors, string_list(file, doc["mirrors"], "mirrors"));
  PF_TRY(recipe.components, string_list(file, doc["components"], "components"));
  PF_TRY(recipe.packages, string_list(file, doc["packages"], "packages"));
  PF_TRY(recipe.exclude, string_list(file, doc["exclude"], "exclude"));
  PF_TRY(recipe.remove, string_list(file, doc["remove"], "remove"));
  PF_TRY(recipe.user, scalar(file, doc["user"], "user"));
  PF_TRY(recipe.workdir, scalar(file, doc["workdir"], "workdir"));
  PF_TRY(recipe.entrypoint, string_list(file, doc["entrypoint"], "entrypoint"));
  PF_TRY(recipe.cmd, string_list(file, doc["cmd"], "cmd"));
#undef PF_TRY

  if (recipe.suite.empty()) return Error::bad_input("\"suite\" is required, e.g. suite: bookworm", {file});
  for (std::size_t i = 0; i < recipe.remove.size(); ++i) {
    if (!safe_glob(recipe.remove[i])) {
      return Error::bad_input(
          "remove: \"" + recipe.remove[i] +
              "\" must be an absolute path made of letters, digits, / . _ - + @ and the globs * ?",
          at(file, doc["remove"][i]));
    }
  }
  if (const YAML::Node env = doc["env"]; env && !env.IsNull()) {
    if (!env.IsMap()) return Error::bad_input("\"env\" must be a mapping of NAME: value", at(file, env));
    for (const auto& item : env) {
      if (!item.second.IsScalar())
        return Error::bad_input("env values must be strings", at(file, item.second));
      recipe.env.emplace_back(item.first.as<std::string>(), item.second.as<std::string>());
    }
  }
  return recipe;
}

std::vector<std::string> mmdebstrap_arguments(const ImageRecipe& recipe, const fs::path& output_tar) {
  std::vector<std::string> args = {
      "--variant=" + recipe.variant,
      "--format=tar",
      // Like platform images built with --no-install-recommends: only what was asked for.
      "--aptopt=APT::Install-Recommends \"false\"",
      "--aptopt=Acquire::Languages \"none\"",
  };
  if (!recipe.components.empty()) {
    std::string list;
    for (const auto& c : recipe.components) list += (list.empty() ? "" : ",") + c;
    args.push_back("--components=" + list);
  }
  if (!recipe.packages.empty()) {
    std::string list;
    for (const auto& p : recipe.packages) list += (list.empty() ? "" : ",") + p;
    args.push_back("--include=" + list);
  }
  for (const auto& glob : recipe.exclude) args.push_back("--dpkgopt=path-exclude=" + glob);
  if (!recipe.remove.empty()) {
    // mmdebstrap runs hooks with sh and the chroot as $1; the globs were checked by load_recipe.
    std::string hook = "for p in";
    for (const auto& glob : recipe.remove) hook += " \"$1\"" + glob;
    hook += "; do rm -rf \"$p\"; done";
    args.push_back("--customize-hook=" + hook);
  }
  // mmdebstrap already leaves out apt's package lists and downloaded .debs (its cleanup step).
  args.push_back(recipe.suite);
  args.push_back(output_tar.string());
  for (const auto& mirror : recipe.mirrors) args.push_back(mirror);
  return args;
}

}  // namespace preflight::image
