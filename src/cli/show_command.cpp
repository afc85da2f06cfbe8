// `preflight show [RUN]`: the run folders the cache keeps, and one's report page
// (docs/cli.md "show").
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <boost/process.hpp>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "image/image_store.hpp"
#include "pipeline/run_files.hpp"
#include "report/report_reader.hpp"
#include "util/json_fields.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;

struct ShowArgs {
  std::string run;
  bool open = false;
};

struct KeptRun {
  fs::path dir;
  fs::file_time_type time;
};

// The run folders, newest first; those being made (hidden names) are left out.
std::vector<KeptRun> kept_runs(const fs::path& runs) {
  std::vector<KeptRun> found;
  std::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;
    if (name.starts_with(".") || !it->is_directory(ignored) || it->is_symlink(ignored)) continue;
    found.push_back({it->path(), it->last_write_time(ignored)});
  }
  std::sort(found.begin(), found.end(), [](const KeptRun& a, const KeptRun& b) { return a.time > b.time; });
  return found;
}

std::string summary_of(const fs::path& dir) {
  auto text = read_regular_file(dir / pipeline::kRunReportJson, report::kMaxReportBytes);
  if (!text) return "(no report.json: still running, stopped early, or made by an older Preflight)";
  const auto parsed = report::parse_report_json(*text, pipeline::kRunReportJson);
  if (!parsed) return "(" + parsed.error().str() + ")";
  const nlohmann::json& report = *parsed;
  const auto job = report.is_object() ? report.value("job", nlohmann::json::object()) : nlohmann::json();
  return fmt::format("{:<5} {} on {}, {:.1f} s", json_fields::text(report, "verdict"),
                     json_fields::text(job, "name"), json_fields::text(report, "platform"),
                     json_fields::number(report, "duration_s"));
}

int list(const fs::path& runs) {
  const auto found = kept_runs(runs);
  if (found.empty()) {
    std::cout << "no runs kept in " << runs.string() << " yet: preflight run JOB makes one\n";
    return 0;
  }
  std::cout << "runs kept in " << runs.string() << ", newest first:\n";
  for (const auto& run : found) {
    const auto since_epoch = std::chrono::file_clock::to_sys(run.time);
    std::cout << fmt::format("  {}  {:%Y-%m-%d %H:%M}  {}\n", run.dir.filename().string(),
                             std::chrono::floor<std::chrono::minutes>(since_epoch), summary_of(run.dir));
  }
  std::cout << "preflight show RUN prints the path of one's report page (--open opens it)\n";
  return 0;
}

// A run named by its folder's name, a unique beginning of it, or its path.
Result<fs::path> find_run(const fs::path& runs, const std::string& name) {
  std::error_code ec;
  if (name.find('/') != std::string::npos) {
    if (fs::is_directory(name, ec)) return fs::absolute(name);
    return Error::bad_input(name + ": no such run folder; preflight show lists the kept runs");
  }
  std::vector<fs::path> matches;
  for (const auto& run : kept_runs(runs)) {
    const std::string folder = run.dir.filename().string();
    if (folder == name) return run.dir;
    if (folder.starts_with(name)) matches.push_back(run.dir);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty())
    return Error::bad_input(
        fmt::format("no kept run is named {} in {}; preflight show lists them", name, runs.string()));
  return Error::bad_input(fmt::format("{} names {} runs (the newest is {}); give more of the name", name,
                                      matches.size(), matches.front().filename().string()));
}

int show(const ShowArgs& args) {
  const fs::path runs = image::default_cache_dir() / "runs";
  if (args.run.empty()) return list(runs);
  auto run = find_run(runs, args.run);
  if (!run) return report_error(run.error());
  const fs::path page = *run / pipeline::kRunReportHtml;
  std::error_code ec;
  if (!fs::is_regular_file(page, ec))
    return report_error(Error::bad_input(page.string() + ": the run has no report page (it did not end, or "
                                                         "an older Preflight made it); run the job again"));
  std::cout << page.string() << "\n";
  if (!args.open) return 0;
  const auto opener = bp::search_path("xdg-open");
  if (opener.empty())
    return report_error(Error::runtime("xdg-open is not installed: open " + page.string() + " in a browser"));
  try {
    return bp::system(opener, page.string(), bp::std_in < bp::null) == 0 ? 0 : 3;
  } catch (const bp::process_error& e) {
    return report_error(Error::runtime(std::string("xdg-open: ") + e.what()));
  }
}

}  // namespace

Command show_command() {
  return {"show", "List the kept runs, or print (and --open) the path of one run's report page",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<ShowArgs>();
            app.add_option("run", args->run, "a run's folder name (or its beginning, or its path)");
            app.add_flag("--open", args->open, "open the report page with xdg-open");
            return [args] { return show(*args); };
          }};
}

}  // namespace preflight::cli
