// The command's arguments against the entry script's argparse definitions, as argparse would
// read them: unknown options, values int()/float() or choices refuse, missing values, required
// options and positionals. Each problem is an Illegal Argument at job.yaml's command.
#pragma once

#include <vector>

#include "check/code_scan.hpp"
#include "model/finding.hpp"

namespace preflight::check {

void check_arguments(const ArgParser& parser, const EntryPoint& entry, const SourceLocation& command_where,
                     std::vector<model::Finding>& out);

}  // namespace preflight::check
