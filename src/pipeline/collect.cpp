#include "pipeline/collect.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <utility>

#include "pipeline/job_report.hpp"
#include "report/report_reader.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Adds the report in `dir`/`name` to `batch`; false when it is JSON but not a report and the
// user did not name it (`given`: anything but a report is then an error).
Result<bool> read_one(const fs::path& dir, const std::string& name, bool given,
                      const diagnosis::Policies& policies, report::Batch& batch) {
  const fs::path file = dir / name;
  auto text = read_job_file(dir, name, report::kMaxReportBytes);
  if (!text) return Error::bad_input("cannot read the report " + file.string() + ": " + text.error().message);
  auto parsed = report::parse_report_json(*text, file.string());
  if (!parsed) return std::move(parsed).error();
  json root = std::move(*parsed);
  if (!given && !report::is_report(root)) return false;
  auto report = report::report_from_json(root, file.string());
  if (!report) return std::move(report).error();
  describe_categories(*report, policies);
  batch.add(file, std::move(*report), std::move(root));
  return true;
}

}  // namespace

Status read_report(const fs::path& file, const diagnosis::Policies& policies, report::Batch& batch) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  auto read = read_one(dir, file.filename().string(), true, policies, batch);
  if (!read) return std::move(read).error();
  return Ok{};
}

Result<Collected> collect_reports(const std::vector<fs::path>& paths, const diagnosis::Policies& policies) {
  Collected collected;
  for (const fs::path& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      return Error::bad_input(path.string() +
                              " does not exist: give the folders the runs wrote their reports in");
    if (S_ISREG(st.st_mode)) {
      const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
      if (auto read = read_report(path, policies, collected.batch); !read) return read.error();
      continue;
    }
    if (!S_ISDIR(st.st_mode))
      return Error::bad_input(path.string() + " is neither a report file nor a folder");
    std::vector<std::string> names;
    const bool whole =
        walk_job_tree(path, kMaxCollectEntries, [&](const std::string& relative, const struct stat& entry) {
          if (S_ISREG(entry.st_mode) && relative.size() > 5 && relative.ends_with(".json"))
            names.push_back(relative);
        });
    if (!whole)
      return Error::bad_input(path.string() + " could not be read whole: more than " +
                              std::to_string(kMaxCollectEntries) + " entries or " +
                              std::to_string(kMaxWalkDepth) + " levels, or it cannot be opened");
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      auto read = read_one(path, name, false, policies, collected.batch);
      if (!read) return read.error();
      if (!*read) ++collected.skipped;
    }
  }
  if (collected.batch.reports.empty())
    return Error::bad_input("no Preflight report (report.json, schema " + std::string(report::kReportSchema) +
                            ") in the paths given");
  return collected;
}

}  // namespace preflight::pipeline
