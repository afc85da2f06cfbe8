// Where each line of the setup step or the command runs: the platform's working folder,
// followed through `cd`, `pushd`/`popd` and the variables the text assigns, with $HOME and the
// job's other variables taken from the plan's environment. Relative paths (in the shell text
// and in the Python code the command runs) are resolved against it; when it cannot be known
// (`cd $UNSET`, `cd $(...)`, `cd -`, a `cd` inside an if or a loop) it says why.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/run_plan.hpp"
#include "util/error.hpp"

namespace preflight::check {

struct WorkingFolder {
  std::optional<std::string> path;  // in the container; nullopt: cannot be known
  std::string why;  // "the folder philly starts the job in", "after `cd $HOME/work` in job.yaml:3"
};

class ShellState {
 public:
  explicit ShellState(const plan::RunPlan& plan);

  const WorkingFolder& folder() const { return folder_; }
  // Starts in `folder` instead of the platform's (a script run after the command's `cd`).
  void start_in(const WorkingFolder& folder);
  // $NAME, ${NAME}, ${NAME:-default} and a leading ~ expanded; nullopt when the word holds
  // something unknown (a variable nobody sets, $(...), backquotes).
  std::optional<std::string> expand(const std::string& word) const;
  // A path word, expanded, made absolute against the working folder; nullopt when unknown.
  std::optional<std::string> absolute(const std::string& word) const;
  // Runs one simple command (its words, quotes removed) at `where`: cd, pushd, popd,
  // NAME=value, export NAME=value, and the compound words (if, for, while...).
  void run(const std::vector<std::string>& words, const SourceLocation& where);

 private:
  void change_to(const std::optional<std::string>& target, const std::string& said,
                 const SourceLocation& where, const std::string& unknown_why);

  std::map<std::string, std::string> vars_;
  WorkingFolder folder_;
  std::vector<WorkingFolder> pushed_;
  int compound_depth_ = 0;  // inside if/for/while/case: a cd there may or may not run
};

// One simple command of a shell text: the line it is on (0-based), its text as written, its
// words and the assignments before them as bash reads them (check/shell_words.hpp; quotes
// removed, redirections left out), and whether each is certain (`certain[i]` for `words[i]`).
struct SimpleCommand {
  int line = 0;
  std::string raw;
  std::vector<std::string> words;
  std::vector<bool> certain;
};

// Calls `visit` for each simple command of `text` (split at ; & | && || and newlines, here-
// document bodies and comments left out) with the state before it runs, then runs it on `state`.
void walk_shell(const std::string& text, const SourceLocation& first_line, ShellState& state,
                const std::function<void(const SimpleCommand&, const ShellState&)>& visit);

// Whether a simple command runs Python (python..., torchrun, accelerate, deepspeed, a .py
// script).
bool runs_python(const std::vector<std::string>& words);

// The folder the command's Python runs in: the same for every Python program it starts, else
// unknown; the platform's working folder when it starts none.
WorkingFolder python_folder(const std::string& command, const SourceLocation& where,
                            const plan::RunPlan& plan);

// The folder each shell script of the code folder that `command` runs (`bash run.sh`,
// `./scripts/x.sh`) starts in, by the script's path relative to the code folder.
std::vector<std::pair<std::filesystem::path, WorkingFolder>> scripts_and_folders(const std::string& command,
                                                                                 const SourceLocation& where,
                                                                                 const plan::RunPlan& plan);

// A path in the container that lies in the read-only code mount, as a path relative to the
// code folder; nullopt elsewhere.
std::optional<std::filesystem::path> in_code_mount(const std::string& path, const plan::RunPlan& plan);

}  // namespace preflight::check
