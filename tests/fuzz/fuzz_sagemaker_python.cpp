// libFuzzer target: the Python that builds a SageMaker estimator, from a stranger's repository
// (docs/security.md "Fuzzing"), read as far as literals go and never run. Any bytes give a job
// or an exit-2 error, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>

#include "formats/job_formats.hpp"
#include "fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = preflight::fuzz::write_input("estimator.py", data, size);
  auto job = preflight::formats::load_any_job(file, {});
  if (!job && job.error().exit_status() != 2) __builtin_trap();  // only bad input, exit 2
  return 0;
}
