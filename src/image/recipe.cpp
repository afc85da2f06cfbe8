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

const std::set<std::string> kKeys = {"description", "suite",   "variant",    "mirrors", "components",
                                     "packages",    "exclude", "remove",     "edit",    "env",
                                     "user",        "workdir", "entrypoint", "cmd"};

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

// The refusal of a path safe_glob() refuses; `what` names it ("remove: \"/path").
Error unsafe_glob(const std::string& what, SourceLocation where) {
  return Error::bad_input(
      what + "\" must be an absolute path made of letters, digits, / . _ - + @ and the globs * ?",
      std::move(where));
}

// An edit's texts go into the hook inside single quotes: any byte but a quote and a line end.
bool safe_text(const std::string& text) { return text.find_first_of("'\n\r") == std::string::npos; }

// `text` as sed reads it literally: in the pattern (a basic regular expression), or in the
// replacement; '/' is the delimiter in both.
std::string sed_literal(const std::string& text, bool pattern) {
  const std::string_view special = pattern ? "\\/.*[]^$" : "\\/&";
  std::string out;
  for (char c : text) {
    if (special.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

Result<std::vector<TextEdit>> edit_list(const fs::path& file, const YAML::Node& node) {
  std::vector<TextEdit> out;
  if (!node || node.IsNull()) return out;
  const std::string form = "each \"edit\" entry is a mapping {path: /glob, replace: TEXT, with: TEXT}";
  if (!node.IsSequence()) return Error::bad_input(form, at(file, node));
  for (const auto& item : node) {
    if (!item.IsMap()) return Error::bad_input(form, at(file, item));
    for (const auto& key : item) {
      const std::string name = key.first.as<std::string>();
      if (name != "path" && name != "replace" && name != "with")
        return Error::bad_input("unknown key \"" + name + "\" in an edit; " + form, at(file, key.first));
      if (!key.second.IsScalar()) return Error::bad_input(form, at(file, key.second));
    }
    if (!item["path"] || !item["replace"] || !item["with"]) return Error::bad_input(form, at(file, item));
    TextEdit edit{item["path"].as<std::string>(), item["replace"].as<std::string>(),
                  item["with"].as<std::string>()};
    if (!safe_glob(edit.path)) {
      return unsafe_glob("edit: path \"" + edit.path, at(file, item["path"]));
    }
    for (const char* key : {"replace", "with"}) {
      if (!safe_text(item[key].as<std::string>()))
        return Error::bad_input(std::string("edit: \"") + key + "\" must be one line without a single quote",
                                at(file, item[key]));
    }
    if (edit.replace.empty())
      return Error::bad_input("edit: \"replace\" must not be empty", at(file, item["replace"]));
    out.push_back(std::move(edit));
  }
  return out;
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
  PF_TRY(recipe.edit, edit_list(file, doc["edit"]));
  PF_TRY(recipe.user, scalar(file, doc["user"], "user"));
  PF_TRY(recipe.workdir, scalar(file, doc["workdir"], "workdir"));
  PF_TRY(recipe.entrypoint, string_list(file, doc["entrypoint"], "entrypoint"));
  PF_TRY(recipe.cmd, string_list(file, doc["cmd"], "cmd"));
#undef PF_TRY

  if (recipe.suite.empty()) return Error::bad_input("\"suite\" is required, e.g. suite: bookworm", {file});
  for (std::size_t i = 0; i < recipe.remove.size(); ++i) {
    if (!safe_glob(recipe.remove[i])) {
      return unsafe_glob("remove: \"" + recipe.remove[i], at(file, doc["remove"][i]));
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
  for (const TextEdit& edit : recipe.edit) {
    // Every file the glob matches must hold the text: an edit that no longer applies (the
    // package changed) stops the build instead of leaving the image as it was.
    const std::string hook = "for p in \"$1\"" + edit.path + "; do grep -qF -- '" + edit.replace +
                             "' \"$p\" || { echo \"edit: " + edit.path +
                             " does not hold the text to replace\" >&2; exit 1; }; sed -i 's/" +
                             sed_literal(edit.replace, true) + "/" + sed_literal(edit.with, false) +
                             "/g' \"$p\"; done";
    args.push_back("--customize-hook=" + hook);
  }
  // mmdebstrap already leaves out apt's package lists and downloaded .debs (its cleanup step).
  args.push_back(recipe.suite);
  args.push_back(output_tar.string());
  for (const auto& mirror : recipe.mirrors) args.push_back(mirror);
  return args;
}

}  // namespace preflight::image
