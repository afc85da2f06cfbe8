#include "check/import_reach.hpp"

#include <fmt/format.h>

#include <deque>
#include <filesystem>
#include <sstream>

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

std::string module_of(const fs::path& file) {
  std::string dotted;
  for (const auto& part : file.parent_path()) dotted += part.string() + ".";
  const std::string stem = file.stem().string();
  if (stem == "__init__") return dotted.empty() ? dotted : dotted.substr(0, dotted.size() - 1);
  return dotted + stem;
}

std::vector<std::string> dotted_parts(const std::string& dotted) {
  std::vector<std::string> parts;
  std::istringstream in(dotted);
  for (std::string part; std::getline(in, part, '.');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// One walk from the scripts through the files they import.
class ImportWalk {
 public:
  ImportWalk(const CodeScan& scan, const std::vector<std::string>& scripts)
      : modules_(local_modules(scan, scripts)) {
    for (const auto& file : scan.files) by_path_[file.path] = &file;
    for (const auto& script : scripts) {
      const std::string path = fs::path(script).lexically_normal().generic_string();
      if (!by_path_.count(path)) continue;
      reach_.scripts.insert(path);
      pending_.push_back(path);
    }
    if (reach_.scripts.empty())
      reach_.open_why = "the command runs no Python script of the code folder that Preflight could find";
  }

  CodeReach run() {
    while (!pending_.empty()) {
      const std::string path = pending_.front();
      pending_.pop_front();
      if (!reach_.files.insert(path).second) continue;
      const ScannedFile& file = *by_path_.at(path);
      for (const auto& use : file.imports)
        if (reach_.runs(path, use)) follow(path, use);
      for (const auto& dynamic : file.dynamic) follow(path, dynamic);
    }
    return std::move(reach_);
  }

 private:
  void reach_file(const fs::path& file) {
    const std::string path = file.lexically_normal().generic_string();
    if (by_path_.count(path)) pending_.push_back(path);
  }

  // `import a.b.c` runs a/__init__.py, a/b/__init__.py and a/b/c.py; `from a.b import c` may
  // take the module a/b/c.py too.
  void follow_absolute(const std::string& dotted, const std::vector<std::string>& names) {
    std::string prefix;
    for (const auto& part : dotted_parts(dotted)) {
      prefix += (prefix.empty() ? "" : ".") + part;
      if (auto it = modules_.find(prefix); it != modules_.end()) reach_file(it->second);
    }
    for (const auto& name : names)
      if (auto it = modules_.find(dotted + "." + name); it != modules_.end()) reach_file(it->second);
  }

  // `from ..pkg.mod import x` in a/b/f.py: a/pkg/__init__.py, a/pkg/mod.py and a/pkg/mod/x.py,
  // whatever folder Python was started in.
  void follow_relative(const std::string& from, const ImportUse& use) {
    fs::path base = fs::path(from).parent_path();
    for (int up = 1; up < use.level; ++up) {
      if (base.empty()) return;  // beyond the code folder's top: Python refuses it
      base = base.parent_path();
    }
    auto reach_module = [&](const fs::path& stem) {
      reach_file(fs::path(stem.generic_string() + ".py"));
      reach_file(stem / "__init__.py");
    };
    fs::path at = base;
    reach_file(at / "__init__.py");
    for (const auto& part : dotted_parts(use.module)) reach_module(at /= part);
    for (const auto& name : use.names) reach_module(at / name);
  }

  void follow(const std::string& from, const ImportUse& use) {
    if (use.level > 0)
      follow_relative(from, use);
    else
      follow_absolute(use.module, use.names);
  }

  void follow(const std::string& from, const DynamicImport& dynamic) {
    if (!dynamic.file.empty()) {  // exec(open("F").read()): F from the folder Python runs in
      reach_file(dynamic.file);
      reach_file(fs::path(from).parent_path() / dynamic.file);
      for (const auto& script : reach_.scripts) reach_file(fs::path(script).parent_path() / dynamic.file);
      return;
    }
    if (dynamic.exact && !dynamic.module.empty() && dynamic.module[0] != '.')
      return follow_absolute(dynamic.module, {});
    // A name built at run time: every module it may start with ("models." + name).
    const std::string& start = dynamic.module;
    if (start.empty() || start[0] == '.') {
      if (reach_.open_why.empty())
        reach_.open_why = fmt::format("{}:{} imports a module named at run time", from, dynamic.line);
      return;
    }
    if (const auto dot = start.rfind('.'); dot != std::string::npos)
      follow_absolute(start.substr(0, dot), {});
    for (auto it = modules_.lower_bound(start); it != modules_.end() && it->first.rfind(start, 0) == 0; ++it)
      reach_file(it->second);
  }

  std::map<std::string, std::string> modules_;
  std::map<std::string, const ScannedFile*> by_path_;
  std::deque<std::string> pending_;
  CodeReach reach_;
};

}  // namespace

std::map<std::string, std::string> local_modules(const CodeScan& scan,
                                                 const std::vector<std::string>& scripts) {
  std::map<std::string, std::string> modules;
  std::set<fs::path> folders;
  for (const auto& script : scripts)
    if (auto folder = fs::path(script).lexically_normal().parent_path(); !folder.empty())
      folders.insert(folder);
  for (const auto& file : scan.files) {
    const fs::path path(file.path);
    modules.emplace(module_of(path), file.path);
    for (const auto& folder : folders) {
      auto relative = path.lexically_relative(folder);
      if (!relative.empty() && *relative.begin() != "..") modules.emplace(module_of(relative), file.path);
    }
  }
  modules.erase("");  // the code folder's own __init__.py is no module of its own name
  return modules;
}

CodeReach code_reach(const CodeScan& scan, const std::vector<std::string>& scripts) {
  return ImportWalk(scan, scripts).run();
}

}  // namespace preflight::check
