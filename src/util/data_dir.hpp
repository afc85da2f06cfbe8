// Where Preflight's data folders (policies/, images/, emulator/) are: $PREFLIGHT_DATA_DIR, else
// share/preflight beside an installed binary (/usr/bin/preflight reads /usr/share/preflight),
// else the source tree this binary was built from.
#pragma once

#include <filesystem>

#include "util/text.hpp"

namespace preflight {

// The source tree the binary was built from (CMake writes it into one generated source).
std::filesystem::path source_data_dir();

std::filesystem::path data_dir();

// Whether `file` is one of Preflight's own policies or image recipes, named inside
// data_dir()'s policies/ or images/ as the shipped loaders name them: files the user
// installed or chose, which no job, image or profile wrote. Lexical ("policies/../x" is not).
inline bool is_shipped(const std::filesystem::path& file) {
  const std::filesystem::path dir = data_dir();
  return relative_within(file, dir / "policies") || relative_within(file, dir / "images");
}

}  // namespace preflight
