// Where Preflight's data folders (policies/, images/, emulator/) are: $PREFLIGHT_DATA_DIR,
// else the source tree this binary was built from.
#pragma once

#include <cstdlib>
#include <filesystem>

#include "util/text.hpp"

namespace preflight {

inline std::filesystem::path data_dir() {
  if (const char* dir = std::getenv("PREFLIGHT_DATA_DIR"); dir && *dir) return dir;
  return PREFLIGHT_SOURCE_DATA_DIR;
}

// Whether `file` is one of Preflight's own policies or image recipes, named inside
// data_dir()'s policies/ or images/ as the shipped loaders name them: files the user
// installed or chose, which no job, image or profile wrote. Lexical ("policies/../x" is not).
inline bool is_shipped(const std::filesystem::path& file) {
  const std::filesystem::path dir = data_dir();
  return relative_within(file, dir / "policies") || relative_within(file, dir / "images");
}

}  // namespace preflight
