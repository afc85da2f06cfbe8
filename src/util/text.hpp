// Small text helpers shared across modules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace preflight {

// `text` without leading and trailing spaces and tabs.
inline std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

// The whole content of a file, byte for byte; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Whether the path `file` lies in the folder `dir` (a container path like /job/code).
bool is_under(const std::string& file, const std::string& dir);

// `path` relative to the folder `dir` ("." for the folder itself) when it lies in it; both
// absolute host paths. nullopt when it lies elsewhere.
std::optional<std::filesystem::path> relative_within(const std::filesystem::path& path,
                                                     const std::filesystem::path& dir);

// "2.0 KiB", "1.5 GiB", "312 B": binary units, one decimal.
std::string human_size(std::uintmax_t bytes);

// A word as /bin/sh reads it back: plain when it holds only letters, digits, the characters
// "_./:=@%+,-" and those of `also_plain`, else single-quoted.
std::string shell_word(const std::string& word, std::string_view also_plain = "");

}  // namespace preflight
