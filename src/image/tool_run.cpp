#include "image/tool_run.hpp"

#include <linux/close_range.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <deque>

namespace preflight::image {
namespace bp = boost::process;

namespace {
constexpr std::size_t kTailLines = 15;
}

std::string find_program(const std::string& program) {
  auto found = bp::search_path(program);
  return found.empty() ? std::string() : found.string();
}

Result<ToolRun> run_tool(const std::string& program_path, const std::vector<std::string>& args,
                         const std::string& progress_prefix, const ProgressSink& progress) {
  ToolRun run;
  std::deque<std::string> tail;
  try {
    bp::ipstream output;
    // The child stays in our process group so that Ctrl-C at the terminal stops it too.
    // Only the three standard descriptors reach the tool: whatever else Preflight inherited
    // (a test runner's, a shell's) is closed at exec. mmdebstrap's apt hooks write to a
    // descriptor of the lowest free number through dash, which reads ">&11" as an error.
    bp::child child(
        program_path, bp::args(args), bp::std_in<bp::null, (bp::std_out & bp::std_err)> output,
        bp::extend::on_exec_setup = [](auto&) { ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC); });
    std::string line;
    while (std::getline(output, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      if (progress) progress(progress_prefix + line);
      tail.push_back(line);
      if (tail.size() > kTailLines) tail.pop_front();
    }
    child.wait();
    run.exit_code = child.exit_code();
  } catch (const bp::process_error& e) {
    return Error::runtime(program_path + ": cannot run: " + e.what());
  }
  for (const auto& line : tail) run.tail += "  " + line + "\n";
  return run;
}

}  // namespace preflight::image
