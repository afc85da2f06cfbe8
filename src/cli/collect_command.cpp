// `preflight collect PATH... [--json F] [--junit F] [--sarif F]`: the reports many runs wrote
// (a Slurm array's tasks, a Kubernetes Job's pods, `preflight batch`'s runs), merged into one
// summary and one set of CI files (docs/cli.md "preflight collect").
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/collect.hpp"
#include "report/batch_report.hpp"
#include "report/ci_reports.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

struct CollectArgs {
  std::vector<std::string> paths;
  std::string json, junit, sarif;
};

int collect(const CollectArgs& args) {
  auto policies = diagnosis::load_policies(diagnosis::shipped_rules_dir());
  if (!policies) return report_error(policies.error());
  const std::vector<fs::path> paths(args.paths.begin(), args.paths.end());
  auto collected = pipeline::collect_reports(paths, *policies);
  if (!collected) return report_error(collected.error());
  const auto& reports = collected->reports;
  report::print_batch_summary(reports, std::cout, report::use_color(STDOUT_FILENO));
  if (collected->skipped > 0)
    std::cerr << "preflight: " << collected->skipped
              << " JSON file(s) that are not Preflight reports left out\n";
  std::vector<report::Report> plain;
  plain.reserve(reports.size());
  for (const auto& one : reports) plain.push_back(one.report);
  const fs::path workspace = github_workspace();
  if (in_github_actions())
    for (const auto& one : plain) report::print_annotations(one, workspace, std::cout);
  if (!args.json.empty()) {
    const std::string text =
        report::batch_json(reports).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (auto written = report::write_report_file(args.json, text); !written)
      return report_error(written.error());
  }
  if (auto written = write_ci_files(plain, args.junit, args.sarif, workspace); !written)
    return report_error(written.error());
  return report::exit_status_of(report::merged_verdict(reports));
}

}  // namespace

Command collect_command() {
  return {"collect", "Merge the reports that many runs wrote into one summary and one set of CI files",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<CollectArgs>();
            app.add_option("PATH", args->paths,
                           "report.json files, or folders searched for them (links are not followed)")
                ->required();
            app.add_option("--json", args->json, "write the merged report (preflight.batch/v1) to FILE");
            app.add_option("--junit", args->junit, "write a JUnit XML test report, a suite per job, to FILE");
            app.add_option("--sarif", args->sarif, "write a SARIF 2.1.0 log of every job's findings to FILE");
            return [args] { return collect(*args); };
          }};
}

}  // namespace preflight::cli
