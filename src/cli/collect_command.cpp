// `preflight collect PATH... [--json F] [--junit F] [--sarif F]`: the reports many runs wrote
// (a Slurm array's tasks, a Kubernetes Job's pods, `preflight batch`'s runs), merged into one
// summary and one set of CI files (docs/cli.md "preflight collect").
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/collect.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

struct CollectArgs {
  std::vector<std::string> paths;
  BatchOutputs outputs;
};

int collect(const CollectArgs& args) {
  auto policies = diagnosis::load_policies(diagnosis::shipped_rules_dir());
  if (!policies) return report_error(policies.error());
  const std::vector<fs::path> paths(args.paths.begin(), args.paths.end());
  auto collected = pipeline::collect_reports(paths, *policies);
  if (!collected) return report_error(collected.error());
  if (collected->skipped > 0)
    std::cerr << "preflight: " << collected->skipped
              << " JSON file(s) that are not Preflight reports left out\n";
  return finish_batch(collected->batch, args.outputs);
}

}  // namespace

Command collect_command() {
  return {"collect", "Merge the reports that many runs wrote into one summary and one set of CI files",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<CollectArgs>();
            app.add_option("PATH", args->paths,
                           "report.json files, or folders searched for them (links are not followed)")
                ->required();
            add_batch_outputs(app, args->outputs);
            return [args] { return collect(*args); };
          }};
}

}  // namespace preflight::cli
