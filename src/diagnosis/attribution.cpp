#include "diagnosis/attribution.hpp"

#include <re2/re2.h>

#include <map>

#include "diagnosis/job_words.hpp"
#include "diagnosis/platform_variables.hpp"
#include "diagnosis/traceback.hpp"
#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

std::string joined(const std::string& dir, const std::string& rest) {
  if (rest.empty()) return dir;
  if (dir.empty() || dir.back() == '/') return dir + rest;
  return dir + "/" + rest;
}

// The part of `path` below `dir` ("" when they are the same).
std::string below(const std::string& path, const std::string& dir) {
  if (path.size() <= dir.size()) return {};
  return path.substr(dir.size() + (dir.back() == '/' ? 0 : 1));
}

bool exists_here(const model::PlatformFacts& facts, const std::string& path) {
  return facts.host_path_exists && !path.empty() && facts.host_path_exists(path);
}

std::string job_user(const model::PlatformFacts& facts) {
  return facts.user.empty() ? "uid " + std::to_string(facts.uid) : facts.user;
}

// "write to ${{outputs.model}} (outputs: model at /job/outputs/model) instead".
std::string write_to_output_hint(const model::PlatformFacts& facts) {
  return "write to " + output_words(facts) + " instead";
}

// "/home/alice/data" → "the home folder of alice on a developer's machine", when it is not
// the platform user's own home.
std::string laptop_home(const std::string& path, const model::PlatformFacts& facts) {
  static const re2::RE2 linux_home(R"(/home/([^/]+)(?:/.*)?)");
  static const re2::RE2 mac_home(R"(/Users/([^/]+)(?:/.*)?)");
  static const re2::RE2 windows(R"([A-Za-z]:[\\/].*)");
  std::string who;
  if (!facts.home.empty() && (path == facts.home || is_under(path, facts.home))) return {};
  if (re2::RE2::FullMatch(path, linux_home, &who) || re2::RE2::FullMatch(path, mac_home, &who)) {
    return "is under the home folder of " + who +
           ", a path of a developer's machine (the job "
           "runs as " +
           job_user(facts) + (facts.home.empty() ? "" : ", home " + facts.home) + ")";
  }
  if (re2::RE2::FullMatch(path, windows)) return "is a Windows path; the platform runs Linux";
  return {};
}

std::optional<EnvironmentDifference> missing_on_mount(const std::string& path, const model::MountFact& mount,
                                                      const model::PlatformFacts& facts) {
  const std::string rest = below(path, mount.container_path);
  switch (mount.kind) {
    case model::MountFact::Kind::Input: {
      const std::string here = joined(mount.host_path, rest);
      if (!facts.host_path_exists || mount.host_path.empty()) return std::nullopt;
      const std::string use =
          facts.job_kind == model::JobKind::JobYaml ? "${{inputs." + mount.name + "}}" : mount.container_path;
      if (exists_here(facts, here)) {
        return EnvironmentDifference{
            here + " exists on this machine but not inside the mounted input \"" + mount.name +
                "\" (a symbolic link pointing outside " + mount.host_path + "?)",
            "copy the file into the input folder instead of linking to it, or make its target "
            "an input of its own"};
      }
      return EnvironmentDifference{"the local copy of input \"" + mount.name + "\" (" + mount.host_path +
                                       ") has no " + (rest.empty() ? "such folder" : rest) + " either",
                                   "check the path the code builds from " + use +
                                       ": the input you mount must have the layout the code expects"};
    }
    case model::MountFact::Kind::Output:
      return EnvironmentDifference{
          "outputs start empty on the platform; nothing wrote " + path + " earlier in this run",
          "read files the job needs from " + input_words(facts.job_kind) + ", not from an output folder"};
    case model::MountFact::Kind::Writable:
    case model::MountFact::Kind::Scratch:
      return EnvironmentDifference{
          mount.container_path + " starts empty on the platform",
          "create " + path + " in the job before reading it, or give it as " + input_words(facts.job_kind)};
    case model::MountFact::Kind::Code: {
      if (!facts.host_path_exists || facts.code_host_dir.empty()) return std::nullopt;
      const std::string here = joined(facts.code_host_dir, rest);
      if (exists_here(facts, here)) return std::nullopt;
      const bool script = rest.ends_with(".py") || rest.ends_with(".sh");
      return EnvironmentDifference{
          rest + " is not in the code folder " + facts.code_host_dir +
              " either, so it is not uploaded with the job",
          script ? "the command runs in the code folder (" + facts.code_container_dir +
                       " on the platform): give the script's path relative to it, such as src/" + rest +
                       " for a script in its src folder"
                 : "put it in the code folder, or if it is data kept elsewhere, " +
                       add_input_hint(here, facts.job_kind)};
    }
    case model::MountFact::Kind::Harness:
    case model::MountFact::Kind::PlatformFile:
      break;
  }
  return std::nullopt;
}

}  // namespace

const model::MountFact* mount_of(const std::vector<model::MountFact>& mounts, const std::string& path) {
  const model::MountFact* best = nullptr;
  for (const model::MountFact& mount : mounts) {
    if (mount.container_path.empty()) continue;
    if (path != mount.container_path && !is_under(path, mount.container_path)) continue;
    if (!best || mount.container_path.size() > best->container_path.size()) best = &mount;
  }
  return best;
}

std::string absolute_in_container(const std::string& path, const model::PlatformFacts& facts) {
  const bool windows = path.size() > 2 && path[1] == ':' && (path[2] == '\\' || path[2] == '/');
  if (path.empty() || path[0] == '/' || windows || facts.code_container_dir.empty()) return path;
  std::string rest = path;
  while (rest.rfind("./", 0) == 0) rest.erase(0, 2);
  return joined(facts.code_container_dir, rest);
}

std::optional<EnvironmentDifference> missing_path(const std::string& given,
                                                  const model::PlatformFacts& facts) {
  if (given.empty()) return std::nullopt;
  if (given[0] == '~') {
    return EnvironmentDifference{"Python does not expand \"~\" in " + given,
                                 "use os.path.expanduser(...) (on the platform ~ is " +
                                     (facts.home.empty() ? std::string("the job user's home") : facts.home) +
                                     "), or better, read the data from " + input_words(facts.job_kind)};
  }
  // A storage URI handed to open() (Vertex's AIP_MODEL_DIR is one): file functions take paths.
  if (const auto scheme = given.find("://");
      scheme != std::string::npos && scheme > 0 && given.find('/') == scheme + 1) {
    const std::string kind = given.substr(0, scheme);
    return EnvironmentDifference{
        given + " is a " + kind + ":// URI, not a path: open(), os.makedirs and torch.save cannot use it",
        kind == "gs" ? "Cloud Storage FUSE has it at /gcs/" + given.substr(scheme + 3) +
                           ": use that path (replace gs:// with /gcs/), or a Cloud Storage client"
                     : "use the path where the platform mounts it, or the storage's own client library"};
  }
  const std::string path = absolute_in_container(given, facts);
  if (const model::MountFact* mount = mount_of(facts.mounts, path)) {
    return missing_on_mount(path, *mount, facts);
  }
  const std::string laptop = laptop_home(path, facts);
  if (exists_here(facts, path)) {
    std::string note = path + " exists on this machine but the platform does not mount it";
    if (!laptop.empty()) note += " (it " + laptop + ")";
    return EnvironmentDifference{note, add_input_hint(path, facts.job_kind)};
  }
  if (!laptop.empty()) {
    return EnvironmentDifference{path + " " + laptop, "don't hard-code paths of your machine: " +
                                                          add_input_hint(path, facts.job_kind)};
  }
  // A Slurm script reads the cluster's own folders, which the dry run has only through --map.
  if (facts.job_kind == model::JobKind::SlurmBatch && !path.empty() && path[0] == '/')
    return EnvironmentDifference{
        "a folder of the cluster is in the dry run only when --map gives its local copy",
        cluster_folder_hint(path)};
  return std::nullopt;
}

std::optional<EnvironmentDifference> missing_module(const std::string& module,
                                                    const model::PlatformFacts& facts) {
  // Distribution names that differ from the module imported.
  static const std::map<std::string, std::string> packages = {
      {"cv2", "opencv-python-headless"}, {"PIL", "Pillow"},  {"sklearn", "scikit-learn"},
      {"skimage", "scikit-image"},       {"yaml", "PyYAML"}, {"bs4", "beautifulsoup4"},
      {"dateutil", "python-dateutil"},   {"attr", "attrs"}};
  const std::string top = module.substr(0, module.find('.'));
  if (top.empty() || !facts.host_has_module || !facts.host_has_module(top)) return std::nullopt;
  auto known = packages.find(top);
  const std::string package = known == packages.end() ? top : known->second;
  const std::string image = facts.image.empty() ? "the platform's image" : "image " + facts.image;
  return EnvironmentDifference{
      top + " is installed on this machine but not in " + image,
      "add " + package + " to the image, or install it in setup with pip install --user " + package +
          " (the platform has no network: ship the wheel in the code folder and use "
          "pip install --user --no-index --find-links wheels/ " +
          package + ")"};
}

std::optional<EnvironmentDifference> write_denied(const std::string& given,
                                                  const model::PlatformFacts& facts) {
  if (given.empty()) return std::nullopt;
  const std::string path = absolute_in_container(given, facts);
  const std::string instead = write_to_output_hint(facts);
  if (const model::MountFact* mount = mount_of(facts.mounts, path)) {
    if (!mount->read_only) return std::nullopt;
    std::string what;
    switch (mount->kind) {
      case model::MountFact::Kind::Code:
        what = "the code folder " + mount->container_path;
        break;
      case model::MountFact::Kind::Input:
        what = "the input \"" + mount->name + "\" at " + mount->container_path;
        break;
      default:
        what = mount->container_path;
        break;
    }
    return EnvironmentDifference{what + " is read-only on the platform", instead};
  }
  if (!facts.home.empty() && (path == facts.home || is_under(path, facts.home))) {
    return std::nullopt;
  }
  const std::string who = "the job runs as " + job_user(facts) + ", not root";
  if (path.find("-packages/") != std::string::npos || path.find("/site-packages") != std::string::npos ||
      path.find("/dist-packages") != std::string::npos) {
    return EnvironmentDifference{
        path + " belongs to the image's Python, owned by root; " + who,
        "install packages with pip install --user (without --no-user, --target or sudo), or add "
        "them to the image"};
  }
  return EnvironmentDifference{path + " is a folder of the image, owned by root; " + who,
                               instead + "; for scratch files use /tmp or $HOME" +
                                   (facts.home.empty() ? std::string() : " (" + facts.home + ")")};
}

std::optional<EnvironmentDifference> missing_env_var(const std::string& name, const std::string& raised_in,
                                                     const model::PlatformFacts& facts,
                                                     const PlatformVariables& variables) {
  // Python 3.11 and later run os from a frozen module: its frames are "<frozen os>".
  const bool environ = raised_in == "os.py" || raised_in == "<frozen os>" || raised_in.ends_with("/os.py");
  if (name.empty() || !environ) return std::nullopt;
  const std::string platform = facts.platform.empty() ? "the platform" : "platform " + facts.platform;
  const std::string note = "the environment variable " + name + " is not set on " + platform;
  if (auto same = variables.equivalent(name, facts.environment))
    return EnvironmentDifference{note, same->name + " holds " + same->meaning + " on " + platform +
                                           ": read that instead, or " +
                                           set_variable_words(name, facts.job_kind)};
  return EnvironmentDifference{note, "read it with os.environ.get(\"" + name + "\", default), or " +
                                         set_variable_words(name, facts.job_kind) +
                                         " (see `preflight platform show` for what " + platform +
                                         " exports)"};
}

}  // namespace preflight::diagnosis
