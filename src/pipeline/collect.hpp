// The report.json files other runs wrote, read back (docs/cli.md "preflight collect"): the
// tasks of a Slurm array or a Kubernetes Job write them on a shared folder, `preflight batch`
// has its runs write them in its own. report/batch_report.hpp merges them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "diagnosis/policies.hpp"
#include "report/batch_report.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

struct Collected {
  report::Batch batch;      // in the order of the paths, each folder's files sorted
  std::size_t skipped = 0;  // JSON files that are not Preflight reports
};

// The most entries a folder given to collect may hold: the walk stops there (an error).
inline constexpr std::uint64_t kMaxCollectEntries = 1'000'000;

// Adds the report in `file` to `batch`: opened without following a link, read with
// report::kMaxReportBytes as its bound, its categories described by `policies`. Bad input,
// naming the file: a file that cannot be read, is not JSON (a run that died while writing it),
// or is not a report the reader accepts.
Status read_report(const std::filesystem::path& file, const diagnosis::Policies& policies,
                   report::Batch& batch);

// Every report.json v1 in `paths`. A file given is read as a report. A folder is walked
// without following links, and each `*.json` regular file in it that is a Preflight report is
// read (other JSON is counted in `skipped`), each as read_report reads it.
// Bad input, naming the file: a path that is neither a file nor a folder, a `.json` file that
// does not parse (a task that died while writing it), a report the reader refuses, a folder
// past the walk's bounds, and no report at all.
Result<Collected> collect_reports(const std::vector<std::filesystem::path>& paths,
                                  const diagnosis::Policies& policies);

}  // namespace preflight::pipeline
