// The command line: one file per subcommand, each contributing a Command to the table in
// commands.cpp. A command declares its options on its CLI11 subcommand and returns the action
// that runs once parsing succeeded; the action returns the process's exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::cli {

using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;
  std::function<Action(CLI::App&)> define;
};

Command run_command();
Command platforms_command();
Command platform_command();
Command image_command();
Command explain_command();

// Runs the command line; returns the exit status (docs/errors.md).
int main_with_args(int argc, char** argv);

// Prints "preflight: error: FILE:LINE:COL: message" and returns the error's exit status.
int report_error(const Error& error);

}  // namespace preflight::cli
