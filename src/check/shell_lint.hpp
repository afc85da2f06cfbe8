// Start-up lint: the job's setup and command lines, and the shell scripts the command runs,
// read against the platform's user and network before anything starts: `sudo`, package
// managers that need root, `pip install` that needs root or an index, downloads.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/module_index.hpp"
#include "model/finding.hpp"
#include "plan/run_plan.hpp"
#include "util/error.hpp"

namespace preflight::check {

struct ShellText {
  std::string text;
  SourceLocation where;  // of its first line: job.yaml's setup/command, or a script's line 1
  std::string stage;     // "setup" for the setup step, "init" for the command
};

struct ShellFacts {
  std::string platform;
  std::string user;  // "job (uid 1000)"
  bool root = false;
  bool network = false;
  std::optional<std::string> pip_version;  // the image's pip, when it has one
  // For `pip install` without network: the image's distributions (pip offline installs
  // nothing they already satisfy), the plan (each line's working folder) and a file of the
  // container as Preflight knows it (the uploaded code, the image), by its path there.
  const ModuleIndex* index = nullptr;
  const plan::RunPlan* plan = nullptr;
  std::function<std::optional<std::string>(const std::string&)> read;
};

std::vector<model::Finding> lint_shell(const ShellText& shell, const ShellFacts& facts);

// The requirements files that `pip install -r FILE` lines of `shell` install from the code
// folder, relative to it (their pins are then the setup step's to check).
std::vector<std::filesystem::path> requirement_files_installed(const ShellText& shell,
                                                               const plan::RunPlan& plan);

// The shell scripts of the code folder that `command` runs (`bash run.sh`, `./scripts/x.sh`).
std::vector<std::filesystem::path> scripts_run_by(const std::string& command,
                                                  const std::filesystem::path& code_dir);

}  // namespace preflight::check
