#include "pipeline/check_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include "check/code_findings.hpp"
#include "check/code_scan.hpp"
#include "check/image_python.hpp"
#include "check/module_index.hpp"
#include "check/requirements.hpp"
#include "check/scan_cache.hpp"
#include "check/shell_lint.hpp"
#include "pipeline/job_report.hpp"
#include "pipeline/predictions.hpp"
#include "plan/run_plan.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

bool runs_python(const std::string& text) {
  return text.find("python") != std::string::npos || text.find(".py") != std::string::npos;
}

model::Finding no_python(const JobContext& context) {
  auto f = check::static_finding("image-without-python", model::Severity::Error, "", 0);
  f.prediction = model::Prediction::None;
  f.message = fmt::format("the job runs Python, but image {} has no python3 or python on its PATH",
                          context.image_text);
  f.hint =
      "Choose an image with Python (--image, or the job's own image), or install it in the image's recipe.";
  f.location = context.job.command_where;
  return f;
}

// Configuration files of the code folder (YAML, JSON, INI, TOML); job files (job.yaml: their
// paths are this machine's by design) are skipped.
std::vector<fs::path> config_files(const fs::path& code_dir, const fs::path& job_file) {
  static const std::set<std::string> kinds = {".yaml", ".yml", ".json", ".cfg", ".ini", ".toml", ".conf"};
  return check::code_files(code_dir, [&](const fs::path& file) {
    return kinds.count(file.extension().string()) && file != job_file && file.filename() != "job.yaml";
  });
}

// job.yaml is named relative to the code folder when it lies in it, as code files are. A block
// scalar (`setup: |`) is marked at its indicator: its text starts on the next line.
SourceLocation in_code_folder(const JobContext& context, SourceLocation where) {
  std::istringstream lines(read_file(where.file).value_or(""));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (number != where.line) continue;
    const std::string rest =
        trim(line.substr(std::min<std::size_t>(line.size(), std::max(where.column - 1, 0))));
    if (!rest.empty() && (rest[0] == '|' || rest[0] == '>')) ++where.line;
    break;
  }
  if (is_under(where.file.string(), context.job.code_dir.string()))
    where.file = where.file.lexically_relative(context.job.code_dir);
  return where;
}

// A file of the container as Preflight knows it before the job runs: the uploaded code's, or
// the image's; nullopt in the job's writable folders, or where nothing is.
std::optional<std::string> container_file(const JobContext& context, const plan::RunPlan& plan,
                                          const std::string& path) {
  if (auto code = check::in_code_mount(path, plan)) return read_code_file(context.job.code_dir, *code);
  for (const auto& mount : plan.mounts)
    if (path == mount.destination || is_under(path, mount.destination)) return std::nullopt;
  for (const auto& dir : plan.user_dirs)
    if (path == dir.path || is_under(path, dir.path)) return std::nullopt;
  if (auto in_image = check::resolve_in_root(context.image.rootfs, path)) return read_file(*in_image);
  return std::nullopt;
}

// The setup and command lines, and the shell scripts the command runs.
void lint_start_up(const JobContext& context, const plan::RunPlan& plan,
                   const std::optional<check::ModuleIndex>& index, std::vector<model::Finding>& findings) {
  check::ShellFacts facts;
  facts.platform = context.profile.name;
  facts.user = plan.facts.user;
  facts.root = context.profile.user.uid == 0;
  facts.network = context.profile.network;
  if (index) {
    if (const auto* pip = index->distribution("pip")) facts.pip_version = pip->version;
    facts.index = &*index;
  }
  facts.plan = &plan;
  facts.read = [&](const std::string& path) { return container_file(context, plan, path); };
  auto in_code = [&](const SourceLocation& where) { return in_code_folder(context, where); };
  // Each text with the folder it starts in: a script the command runs starts where it is run.
  std::vector<std::pair<check::ShellText, std::optional<check::WorkingFolder>>> texts;
  if (!plan.setup.empty()) texts.push_back({{plan.setup, in_code(context.job.setup_where), "setup"}, {}});
  const auto command_where = in_code(context.job.command_where);
  texts.push_back({{plan.command, command_where, "init"}, {}});
  for (const auto& [script, folder] : check::scripts_and_folders(plan.command, command_where, plan))
    if (auto text = read_code_file(context.job.code_dir, script))
      texts.push_back({{*text, {script, 1, 0}, "init"}, folder});
  for (const auto& [text, start] : texts) {
    auto lint = check::lint_shell(text, facts);
    findings.insert(findings.end(), lint.begin(), lint.end());
    auto env = check::shell_env_findings(text, plan);
    findings.insert(findings.end(), env.begin(), env.end());
    auto paths =
        check::text_path_findings(text.text, text.where, text.stage, plan, context.image.rootfs, true, start);
    findings.insert(findings.end(), paths.begin(), paths.end());
  }
  for (const auto& config : config_files(context.job.code_dir, context.job.file)) {
    auto text = read_code_file(context.job.code_dir, config);
    if (!text) continue;
    auto paths = check::text_path_findings(*text, {config, 1, 0}, "", plan, context.image.rootfs, false);
    // An error only in a file the job is told to read; another file of the folder may be unused.
    const bool named = plan.command.find(config.generic_string()) != std::string::npos ||
                       plan.setup.find(config.generic_string()) != std::string::npos;
    for (auto& f : paths)
      if (!named) f.severity = model::Severity::Warning;
    findings.insert(findings.end(), paths.begin(), paths.end());
  }
}

// Every Python script of the code folder the job runs, which the code checks start from: those
// its command and setup run, and those the shell scripts of the code folder they run start.
std::vector<std::string> job_scripts(const JobContext& context, const plan::RunPlan& plan,
                                     const SourceLocation& command_where) {
  std::vector<std::string> scripts;
  auto add = [&](const std::vector<std::string>& found) {
    for (const auto& script : found)
      if (std::find(scripts.begin(), scripts.end(), script) == scripts.end()) scripts.push_back(script);
  };
  std::vector<std::pair<const std::string*, SourceLocation>> texts = {{&plan.command, command_where}};
  if (!plan.setup.empty()) texts.emplace_back(&plan.setup, in_code_folder(context, context.job.setup_where));
  for (const auto& [text, where] : texts) {
    add(check::python_scripts(*text, context.job.code_dir, plan, where));
    for (const auto& [script, folder] : check::scripts_and_folders(*text, where, plan))
      if (auto body = read_code_file(context.job.code_dir, script))
        add(check::python_scripts(*body, context.job.code_dir, plan, {script, 1, 0}, folder));
  }
  return scripts;
}

}  // namespace

Result<std::vector<model::Finding>> static_findings(const JobContext& context,
                                                    sandbox::ContainerRuntime& runtime) {
  // The job as the platform lays it out: its environment, mounts, user and working folder.
  plan::PlanContext plan_context;
  plan_context.job_id = context.job.name + "-check";
  plan_context.harness = false;
  auto plan = plan::make_plan(context.job, context.profile, context.image.config, plan_context);
  if (!plan) return std::move(plan).error();

  std::vector<model::Finding> findings;
  auto python = check::ImagePython::find(context.image.rootfs, context.image.config.env, runtime);
  std::optional<check::ModuleIndex> index;
  if (python) {
    auto loaded = check::load_module_index(context.image, image::default_cache_dir(), runtime);
    if (!loaded) return std::move(loaded).error();
    index = std::move(*loaded);
  }
  lint_start_up(context, *plan, index, findings);
  if (!python) {
    if (runs_python(plan->command) || runs_python(plan->setup)) findings.push_back(no_python(context));
    context.policies.checks.complete(findings);
    return findings;
  }
  const auto command_where = in_code_folder(context, context.job.command_where);
  const auto entry = check::entry_point(plan->command, context.job.code_dir, *plan, command_where);
  auto scan = check::scan_code(*python, context.job.code_dir, check::python_files(context.job.code_dir),
                               entry, check::ScanCache::of_image(context.image, image::default_cache_dir()));
  if (!scan) return std::move(scan).error();
  const bool setup_installs =
      plan->setup.find("pip") != std::string::npos && plan->setup.find("install") != std::string::npos;
  check::StaticContext checks{*plan,
                              context.image.rootfs,
                              index,
                              entry,
                              setup_installs,
                              command_where,
                              check::python_folder(plan->command, command_where, *plan),
                              context.policies,
                              job_scripts(context, *plan, command_where)};
  auto code = check::code_findings(*scan, checks);
  findings.insert(findings.end(), code.begin(), code.end());
  if (index) {
    const auto installed = check::requirement_files_installed(
        {plan->setup, in_code_folder(context, context.job.setup_where), "setup"}, *plan);
    auto pins = check::requirement_findings(context.job.code_dir, *index, installed);
    findings.insert(findings.end(), pins.begin(), pins.end());
  }
  // Classified before the dry run compares them with its own (pipeline/predictions.cpp).
  context.policies.checks.complete(findings);
  return findings;
}

Result<report::Report> check_job(const JobChoices& choices, const image::ProgressSink& progress,
                                 sandbox::ContainerRuntime& runtime, bool strict) {
  const auto started = Clock::now();
  auto context = load_job_context(choices, progress);
  if (!context) return std::move(context).error();
  auto findings = static_findings(*context, runtime);
  if (!findings) return std::move(findings).error();
  leave_unverified(*findings, strict);
  auto report = job_report(*context, std::move(*findings));
  report.dry_run = false;
  report.duration_s = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

}  // namespace preflight::pipeline
