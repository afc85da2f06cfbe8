// The files that run a batch of dry runs as a Slurm job array (docs/cli.md "preflight export
// slurm", docs/scale-out.md): the list of jobs and the sbatch script whose task I runs
// `preflight run` on the list's line I. Pure: the text of each file from its inputs, the same
// bytes for the same inputs; write_exported_files() puts them on disk.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::pipeline {

// One file an export writes, `name` relative to the export's folder.
struct ExportedFile {
  std::string name;
  std::string text;
};

// What one Slurm export is made of. Every path is absolute.
struct SlurmExport {
  std::vector<std::filesystem::path> jobs;  // in array order: task I runs jobs[I]
  std::filesystem::path out;                // the export's folder (jobs.txt, logs/, reports/)
  std::filesystem::path preflight;          // the binary each task runs
  std::filesystem::path data_dir;           // its policies/, images/, emulator/ (PREFLIGHT_DATA_DIR)
  std::filesystem::path shared;             // when not empty, the tasks' cache is shared/cache
  std::string platform, image;              // each run's --platform and --image, when not empty
  std::vector<std::string> read_args;       // and its --as, --code and --map, paths absolute
  std::vector<std::string> sandbox_args;    // and --network, --seccomp NAME, the user's
  int parallel = 4;                         // tasks at once (the array's %P), clamped to the jobs
};

// How many tasks of the array run at once when --parallel is not given.
inline constexpr int kDefaultSlurmParallel = 4;

// The folders below `out` the tasks write into: created before the array is submitted, since
// Slurm does not create the folder of a task's --output.
inline const std::vector<std::string> kSlurmExportFolders = {"logs", "reports"};

// `jobs.txt` (one job file per line; the array index is the line number from 0) and
// `preflight-array.sbatch`. Bad input: no job; a job file whose path holds a line break
// (named); an export folder that an #SBATCH line cannot name (a line break or another control
// character, or a backslash, which turns off Slurm's %A and %a in --output).
Result<std::vector<ExportedFile>> export_slurm(const SlurmExport& batch);

// Writes each file below `out` (created with `folders`), each through a temporary file renamed
// over its name. The script is made executable.
Status write_exported_files(const std::filesystem::path& out, const std::vector<ExportedFile>& files,
                            const std::vector<std::string>& folders);

}  // namespace preflight::pipeline
