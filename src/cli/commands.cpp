#include <iostream>

#include "cli/command.hpp"

namespace preflight::cli {

int report_error(const Error& error) {
  std::cerr << "preflight: error: " << error.str() << "\n";
  return error.exit_status();
}

int main_with_args(int argc, char** argv) {
  CLI::App app{"Preflight: run a deep-learning job as its platform would, before you submit it."};
  app.set_version_flag("--version", std::string("preflight ") + PREFLIGHT_VERSION);
  app.require_subcommand(1);
  const std::vector<Command> table = {run_command(), platforms_command(), platform_command(), image_command(),
                                      explain_command()};
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
