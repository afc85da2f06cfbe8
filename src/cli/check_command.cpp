#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/check_job.hpp"
#include "sandbox/container.hpp"

namespace preflight::cli {
namespace {

int check(const JobOptions& args) {
  if (auto exit_status = enter_user_namespace())
    return *exit_status;  // the image's python runs in a container
  pipeline::JobChoices choices;
  choices.job_file = args.job;
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  choices.read = std::move(*read);
  if (!args.platform.empty()) choices.platform = args.platform;
  if (!args.image.empty()) choices.image = args.image;
  auto progress = [](const std::string& line) { std::cerr << "preflight: " << line << "\n"; };
  sandbox::Runc runc;
  return finish_report(pipeline::check_job(choices, progress, runc, args.strict), args);
}

}  // namespace

Command check_command() {
  return {"check", "Check the job without running it: its code against the image and the platform",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<JobOptions>();
            add_job_options(app, *args);
            return [args] { return check(*args); };
          }};
}

}  // namespace preflight::cli
