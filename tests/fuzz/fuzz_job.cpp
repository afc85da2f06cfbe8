// libFuzzer target: job.yaml from a stranger (docs/security.md). Any bytes give a job or an
// exit-2 error with a location, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "spec/job_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = preflight::fuzz::write_input("job.yaml", data, size);
  auto job = preflight::spec::load_job(file);
  if (!job && job.error().exit_status() != 2) __builtin_trap();  // only bad input, exit 2
  return 0;
}
