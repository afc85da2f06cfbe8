#include <unistd.h>

#include <iostream>

#include "cli/command.hpp"
#include "sandbox/user_namespace.hpp"

namespace preflight::cli {

int report_error(const Error& error) {
  std::cerr << "preflight: error: " << error.str() << "\n";
  return error.exit_status();
}

std::optional<int> enter_user_namespace() {
  auto entered = sandbox::enter_user_namespace();
  if (!entered) return report_error(entered.error());
  return *entered;
}

void add_job_options(CLI::App& app, JobOptions& options) {
  app.add_option("job", options.job, "the job file")->capture_default_str();
  app.add_option("--platform", options.platform, "platform profile: a shipped name or a file");
  app.add_option("--image", options.image,
                 "image: built-in name, docker-archive:PATH, oci:PATH[:TAG], rootfs:PATH");
  app.add_option("--json", options.json, "write report.json v1 to FILE");
}

int finish_report(const Result<report::Report>& result, const std::string& json_file) {
  if (!result) return report_error(result.error());
  report::print_summary(*result, std::cout, report::use_color(STDOUT_FILENO));
  if (!json_file.empty())
    if (auto written = report::write_json(*result, json_file); !written) return report_error(written.error());
  return report::exit_status_of(result->verdict);
}

int main_with_args(int argc, char** argv) {
  CLI::App app{"Preflight: run a deep-learning job as its platform would, before you submit it."};
  app.set_version_flag("--version", std::string("preflight ") + PREFLIGHT_VERSION);
  app.require_subcommand(1);
  const std::vector<Command> table = {run_command(),      check_command(), platforms_command(),
                                      platform_command(), image_command(), explain_command(),
                                      init_command()};
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& command : table) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    actions.emplace_back(sub, command.define(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {
    return app.exit(done);
  } catch (const CLI::ParseError& e) {
    std::cerr << "preflight: error: " << e.what() << "\n"
              << "Run 'preflight --help' for usage.\n";
    return 2;
  }
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return 2;
}

}  // namespace preflight::cli
