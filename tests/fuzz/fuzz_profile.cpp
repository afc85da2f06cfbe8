// libFuzzer target: a platform profile named by a job (docs/security.md). Any bytes give a
// profile or an exit-2 error, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "spec/platform_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = preflight::fuzz::write_input("profile.yaml", data, size);
  auto profile = preflight::spec::load_platform(file.string(), preflight::spec::shipped_platforms_dir());
  if (!profile && profile.error().exit_status() != 2) __builtin_trap();
  return 0;
}
