// Runs an image tool (mmdebstrap, skopeo) from an argument vector, never a shell string,
// forwarding its output line by line as progress and keeping the tail for error messages.
#pragma once

#include <string>
#include <vector>

#include "image/image_store.hpp"
#include "util/error.hpp"

namespace preflight::image {

struct ToolRun {
  int exit_code = -1;
  std::string tail;  // the last lines of its output
};

// Empty when `program` is not on PATH.
std::string find_program(const std::string& program);

// Runtime error only when the program cannot be started; a non-zero exit is in the result.
Result<ToolRun> run_tool(const std::string& program_path, const std::vector<std::string>& args,
                         const std::string& progress_prefix, const ProgressSink& progress);

}  // namespace preflight::image
