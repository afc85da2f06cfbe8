// The command line: one file per subcommand, each contributing a Command to the table in
// commands.cpp. A command declares its options on its CLI11 subcommand and returns the action
// that runs once parsing succeeded; the action returns the process's exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/job_formats.hpp"
#include "report/batch_report.hpp"
#include "report/report.hpp"
#include "spec/seccomp_policy.hpp"
#include "util/error.hpp"

namespace preflight::cli {

using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;
  std::function<Action(CLI::App&)> define;
};

Command run_command();
Command check_command();
Command platforms_command();
Command platform_command();
Command image_command();
Command cache_command();
Command explain_command();
Command init_command();
Command completion_command();
Command show_command();
Command estimate_command();
Command collect_command();
Command batch_command();
Command export_command();
Command convert_command();

// Runs the command line; returns the exit status (docs/errors.md).
int main_with_args(int argc, char** argv);

// Prints "preflight: error: FILE:LINE:COL: message" and returns the error's exit status.
int report_error(const Error& error);

// Commands that run containers call this first, while the process has a single thread:
// without root, it moves the rest of the command into Preflight's user namespace
// (docs/rootless.md). A value is the exit status to return at once (the namespace's parent
// process, or an error's).
std::optional<int> enter_user_namespace();

// How a job file is read (docs/formats.md "Other platforms' job files"): --as KIND when its
// content does not say, --code DIR for a definition that names no code, --map CLOUD=LOCAL, and
// what it may name on the host (--allow, --allow-registry, with $PREFLIGHT_ALLOW and
// $PREFLIGHT_ALLOW_REGISTRY).
struct ReadArgs {
  std::string as, code;
  std::vector<std::string> maps;
  // --allow FOLDER and --allow-registry HOST: what the job file may name beyond its folder
  // tree (docs/security.md "Host paths and registries").
  std::vector<std::string> allow, allow_registries;
};
void add_read_options(CLI::App& app, ReadArgs& args);
Result<formats::ReadOptions> read_options(const ReadArgs& args);
// The same options as arguments of `preflight run` in another process (batch, export), their
// paths absolute so that it reads the jobs alike from any folder.
std::vector<std::string> read_arguments(const formats::ReadOptions& options);

// What every command about one job takes: the job file, how to read it, --platform, --image
// and the report files (--json, --junit, --sarif, --html; `run` adds --trace).
struct JobOptions : ReadArgs {
  std::string job = "job.yaml";
  std::string platform, image, json, junit, sarif, html, trace;
  bool strict = false;  // predictions the dry run did not refute fail the gate
};
void add_job_options(CLI::App& app, JobOptions& options);

// The end of a command about a job: the summary on stdout (and GitHub Actions annotations
// when GITHUB_ACTIONS=true), the report files the options ask for, and the exit status of
// the verdict (or of the error).
int finish_report(const Result<report::Report>& result, const JobOptions& options);

// What every command about many jobs takes: the merged report files.
struct BatchOutputs {
  std::string json, junit, sarif;
};
void add_batch_outputs(CLI::App& app, BatchOutputs& outputs);

// The end of a command about many jobs: the summary on stdout (and GitHub Actions annotations),
// the merged report files the options ask for, and the exit status of them all.
int finish_batch(const report::Batch& batch, const BatchOutputs& outputs);

// Whether the command runs in GitHub Actions (GITHUB_ACTIONS=true), and then the repository
// (GITHUB_WORKSPACE) that CI paths are relative to; empty elsewhere.
bool in_github_actions();
std::filesystem::path github_workspace();

// The JUnit XML and SARIF files (each when its name is not empty) of one report or many.
Status write_ci_files(std::span<const report::Report> reports, const std::string& junit,
                      const std::string& sarif, const std::filesystem::path& workspace);

// How the user lowers the sandbox's floor for a run (docs/security.md "The sandbox floor"):
// --network and --seccomp NAME, on run and on the commands that pass them on to it.
struct SandboxArgs {
  bool network = false;
  std::string seccomp;
};
void add_sandbox_options(CLI::App& app, SandboxArgs& args);
// --seccomp's shipped policy, loaded (an unknown name is bad usage); none when not given.
Result<std::optional<spec::SeccompPolicy>> sandbox_seccomp(const SandboxArgs& args);
// The same options as arguments of `preflight run` in another process (batch, export slurm).
std::vector<std::string> sandbox_arguments(const SandboxArgs& args);

}  // namespace preflight::cli
