// Findings that need no container (docs/static-checks.md): the job's code as the image's
// Python reads it, set against the image's modules, the environment the platform gives the
// job and the file system it will see. Phase "static"; each names the file and line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/code_scan.hpp"
#include "check/module_index.hpp"
#include "check/shell_lint.hpp"
#include "check/working_folder.hpp"
#include "diagnosis/policies.hpp"
#include "model/finding.hpp"
#include "plan/run_plan.hpp"

namespace preflight::check {

struct StaticContext {
  const plan::RunPlan& plan;                  // the environment, mounts and user the job gets
  const std::filesystem::path& image_rootfs;  // for paths that exist in the image
  const std::optional<ModuleIndex>& index;    // nullopt: the image has no Python
  const std::optional<EntryPoint>& entry;     // the command's Python script, if any
  bool setup_installs = false;                // the setup step runs pip install
  SourceLocation command_where;               // job.yaml's command, for argument findings
  WorkingFolder code_folder;                  // where the job's Python runs; empty why: the plan's
  const diagnosis::Policies& policies;        // the rules and the platforms' equivalent variables
  // Every Python script of the code folder the command and setup run (python_scripts); the
  // checks read these and the job's modules they import. The entry script counts without it.
  std::vector<std::string> scripts = {};
};

std::vector<model::Finding> code_findings(const CodeScan& scan, const StaticContext& context);

// A finding of the static phase, located at file:line, a prediction until the dry run settles
// it. What the rule is (its category, root cause, ...) is policies/rules/checks.yaml's, filled
// in by diagnosis::CheckRules::complete.
model::Finding static_finding(const char* rule, model::Severity severity, const std::string& file, int line);

// Path-like words of a setup line, the command, a script it runs or a configuration file of the
// code folder, where the platform will not have them (as for path literals in code).
// `relative_paths`: a shell text, whose ../ paths count from the working folder of their line
// (followed through `cd` from `start`, else from the platform's); false for a configuration
// file, whose relative paths may be relative to anything. `stage` "setup" for the setup step;
// otherwise a path's stage follows the option or key it is given with (check/stages.hpp).
std::vector<model::Finding> text_path_findings(const std::string& text, const SourceLocation& first_line,
                                               const std::string& stage, const plan::RunPlan& plan,
                                               const std::filesystem::path& image_rootfs, bool relative_paths,
                                               const std::optional<WorkingFolder>& start = std::nullopt);

// `$NAME` in a setup line, the command or a script the command runs, where the platform does
// not set NAME: a warning (the shell expands it to nothing).
std::vector<model::Finding> shell_env_findings(const ShellText& shell, const plan::RunPlan& plan);

// The command's entry script: `python [-u ...] train.py ARGS` or `python -m pkg ARGS`, found
// as a file of the code folder; nullopt for anything else.
std::optional<EntryPoint> entry_point(const std::string& command, const std::filesystem::path& code_dir);

// The same, the script found from the working folder it is started in (after the command's
// `cd`, with its variables expanded) as the platform would run it.
std::optional<EntryPoint> entry_point(const std::string& command, const std::filesystem::path& code_dir,
                                      const plan::RunPlan& plan, const SourceLocation& where);

// Every Python script of the code folder a shell text runs, found as entry_point finds the first
// (`python X.py`, `python -m pkg`, torchrun/accelerate/deepspeed X.py), and the `.py` files of
// the code folder its Python command lines name (a configuration script: `python train.py
// config/small.py`), relative to the code folder. `start`: the folder a script's text starts in.
std::vector<std::string> python_scripts(const std::string& text, const std::filesystem::path& code_dir,
                                        const plan::RunPlan& plan, const SourceLocation& where,
                                        const std::optional<WorkingFolder>& start = std::nullopt);

}  // namespace preflight::check
