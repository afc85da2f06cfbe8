// Start-up lint: the job's setup and command lines, and the shell scripts the command runs,
// read against the platform's user and network before anything starts: `sudo`, package
// managers that need root, `pip install` that needs root or an index, downloads.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/finding.hpp"
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
};

std::vector<report::Finding> lint_shell(const ShellText& shell, const ShellFacts& facts);

// The shell scripts of the code folder that `command` runs (`bash run.sh`, `./scripts/x.sh`).
std::vector<std::filesystem::path> scripts_run_by(const std::string& command,
                                                  const std::filesystem::path& code_dir);

}  // namespace preflight::check
