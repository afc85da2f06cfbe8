#include "pipeline/export_slurm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <system_error>

#include "util/text.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;

bool has_control(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == '\x7f'; });
}

// A path in a message: control characters written as escapes, then quoted for the shell.
std::string shown(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f')
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return quote_shell_word(out);
}

// The tasks' --output pattern in an #SBATCH line. sbatch reads the directive's value as a
// shell-like word, so it goes in double quotes with `"` escaped; in the pattern itself a
// literal '%' is "%%".
Result<std::string> sbatch_output(const fs::path& out) {
  const std::string dir = out.string();
  if (has_control(dir))
    return Error::bad_input(
        fmt::format("--out {}: an #SBATCH line cannot name a folder with a line break or another "
                    "control character; choose another folder",
                    shown(dir)));
  if (dir.find('\\') != std::string::npos)
    return Error::bad_input(
        fmt::format("--out {}: Slurm's --output turns off %A and %a in a path with a backslash, so "
                    "every task would write one log; choose a folder without one",
                    shown(dir)));
  std::string quoted = "\"";
  for (const char c : dir + "/logs/") {
    if (c == '"') quoted += '\\';
    quoted += c;
    if (c == '%') quoted += '%';
  }
  return quoted + "%A_%a.out\"";
}

std::string jobs_list(const std::vector<fs::path>& jobs) {
  std::string text;
  for (const fs::path& job : jobs) text += job.string() + "\n";
  return text;
}

std::string run_arguments(const SlurmExport& batch) {
  std::string args = R"("$PREFLIGHT" run "${job[0]}" -q --json "$REPORTS/$SLURM_ARRAY_TASK_ID.json")";
  if (!batch.platform.empty()) args += " --platform " + quote_shell_word(batch.platform);
  if (!batch.image.empty()) args += " --image " + quote_shell_word(batch.image);
  for (const std::string& arg : batch.read_args) args += " " + quote_shell_word(arg);
  for (const std::string& arg : batch.sandbox_args) args += " " + quote_shell_word(arg);
  return args;
}

std::string array_script(const SlurmExport& batch, const std::string& output) {
  const int count = static_cast<int>(batch.jobs.size());
  const int parallel = std::clamp(batch.parallel, 1, count);
  std::string text = fmt::format(
      "#!/bin/bash\n"
      "# Preflight's dry runs of {0} job(s) as a Slurm job array, written by `preflight export slurm`.\n"
      "#   submit:  sbatch {1}\n"
      "#   collect: {2} collect {3}\n"
      "# Task I runs `preflight run` on line I (from 0) of jobs.txt and writes reports/I.json; the\n"
      "# task's exit status, which Slurm records, is preflight's: 0 the job passes, 1 it is predicted\n"
      "# to fail, 2 bad input, 3 Preflight could not run it. Each task's output: logs/ARRAY_TASK.out.\n"
      "#SBATCH --job-name=preflight\n"
      "#SBATCH --array=0-{4}%{5}\n"
      "#SBATCH --output={6}\n"
      "\n"
      "PREFLIGHT={7}\n"
      "JOBS={8}\n"
      "REPORTS={9}\n"
      "export PREFLIGHT_DATA_DIR={10}\n",
      count, quote_shell_word((batch.out / "preflight-array.sbatch").string()),
      quote_shell_word(batch.preflight.string()), quote_shell_word((batch.out / "reports").string()),
      count - 1, parallel, output, quote_shell_word(batch.preflight.string()),
      quote_shell_word((batch.out / "jobs.txt").string()), quote_shell_word((batch.out / "reports").string()),
      quote_shell_word(batch.data_dir.string()));
  if (!batch.shared.empty())
    text +=
        "# The shared folder's cache: each image built and unpacked once for every task.\n"
        "export PREFLIGHT_CACHE=" +
        quote_shell_word((batch.shared / "cache").string()) + "\n";
  text +=
      "\n"
      "if [[ -z ${SLURM_ARRAY_TASK_ID:-} ]]; then\n"
      "  echo \"preflight-array.sbatch: submit it with sbatch, which gives each task SLURM_ARRAY_TASK_ID\" "
      ">&2\n"
      "  exit 2\n"
      "fi\n"
      "mapfile -t -s \"$SLURM_ARRAY_TASK_ID\" -n 1 job <\"$JOBS\"\n"
      "if [[ -z ${job[0]:-} ]]; then\n"
      "  echo \"preflight-array.sbatch: $JOBS has no line $SLURM_ARRAY_TASK_ID\" >&2\n"
      "  exit 2\n"
      "fi\n"
      "exec " +
      run_arguments(batch) + "\n";
  return text;
}

}  // namespace

Result<std::vector<ExportedFile>> export_slurm(const SlurmExport& batch) {
  if (batch.jobs.empty()) return Error::bad_input("no job to export");
  for (const fs::path& job : batch.jobs)
    if (job.string().find('\n') != std::string::npos)
      return Error::bad_input(fmt::format(
          "job {}: its path holds a line break, which jobs.txt (a job per line) cannot hold; rename it",
          shown(job.string())));
  auto output = sbatch_output(batch.out);
  if (!output) return std::move(output).error();
  return std::vector<ExportedFile>{{"jobs.txt", jobs_list(batch.jobs)},
                                   {"preflight-array.sbatch", array_script(batch, *output)}};
}

Status write_exported_files(const fs::path& out, const std::vector<ExportedFile>& files,
                            const std::vector<std::string>& folders) {
  std::error_code ec;
  for (const std::string& folder : folders) {
    fs::create_directories(out / folder, ec);
    if (ec)
      return Error::bad_input(fmt::format("cannot create {}: {}", (out / folder).string(), ec.message()));
  }
  for (const ExportedFile& file : files) {
    const fs::path target = out / file.name;
    const fs::path partial = out / ("." + file.name + ".partial");
    {
      std::ofstream stream(partial, std::ios::binary | std::ios::trunc);
      stream << file.text;
      if (!stream.flush()) {
        fs::remove(partial, ec);
        return Error::bad_input("cannot write " + target.string());
      }
    }
    if (file.text.starts_with("#!"))
      fs::permissions(partial, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add, ec);
    fs::rename(partial, target, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(partial, ignored);
      return Error::bad_input(fmt::format("cannot write {}: {}", target.string(), ec.message()));
    }
  }
  return Ok{};
}

}  // namespace preflight::pipeline
