// Where Preflight's data folders (policies/, images/, emulator/) are: $PREFLIGHT_DATA_DIR,
// else the source tree this binary was built from.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace preflight {

inline std::filesystem::path data_dir() {
  if (const char* dir = std::getenv("PREFLIGHT_DATA_DIR"); dir && *dir) return dir;
  return PREFLIGHT_SOURCE_DATA_DIR;
}

}  // namespace preflight
