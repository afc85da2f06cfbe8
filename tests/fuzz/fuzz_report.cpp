// libFuzzer target: a report.json another run wrote, as `preflight collect` and `show` read it
// (docs/security.md "Fuzzing"). Any bytes give a report or an exit-2 error, never a crash, a
// hang or a leak; a report read is written back as report.json.
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/report.hpp"
#include "report/report_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto root = preflight::report::parse_report_json(text, "report.json");
  if (!root) {
    if (root.error().exit_status() != 2) __builtin_trap();
    return 0;
  }
  auto report = preflight::report::report_from_json(*root, "report.json");
  if (!report && report.error().exit_status() != 2) __builtin_trap();
  if (report) static_cast<void>(preflight::report::to_json(*report).dump());
  return 0;
}
