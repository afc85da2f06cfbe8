#include <iostream>
#include <memory>

#include "cli/command.hpp"

namespace preflight::cli {

namespace {

struct ConvertArgs : ReadArgs {
  std::string file;
};

int convert(const ConvertArgs& args) {
  auto options = read_options(args);
  if (!options) return report_error(options.error());
  auto kind = formats::detect_kind(args.file, *options);
  if (!kind) return report_error(kind.error());
  if (*kind == formats::JobKind::JobYaml)
    return report_error(Error::bad_input(
        "this is a job.yaml already (give --as KIND for another platform's job file)", {args.file, 0, 0}));
  // Read as a run reads it: what the job.yaml holds must load.
  auto read = formats::read_job_file(args.file, *options);
  if (!read) return report_error(read.error());
  std::cout << read->translation->text();
  return 0;
}

}  // namespace

Command convert_command() {
  return {
      "convert",
      "Print the job.yaml that stands for another platform's job file (a PyTorchJob or TrainJob, a Vertex "
      "AI custom job, a SageMaker estimator, a Slurm batch script)",
      [](CLI::App& app) -> Action {
        auto args = std::make_shared<ConvertArgs>();
        app.add_option("file", args->file, "the job file")->required();
        add_read_options(app, *args);
        return [args] { return convert(*args); };
      }};
}

}  // namespace preflight::cli
