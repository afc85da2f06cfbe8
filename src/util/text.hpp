// Small text helpers shared across modules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight {

// `text` without leading and trailing spaces and tabs: a view into the same characters, and a
// copy for callers that keep it beyond the text's life.
inline std::string_view trim_view(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}
inline std::string trim(std::string_view text) { return std::string(trim_view(text)); }

// The most read_file reads: more than any source, spec or record file Preflight reads whole.
inline constexpr std::size_t kMaxReadBytes = 64u << 20;

// The whole content of a regular file of at most kMaxReadBytes, byte for byte; nullopt when
// it cannot be opened or read, or is something else (a FIFO, a device, a folder, larger).
std::optional<std::string> read_file(const std::filesystem::path& path);

// Whether `path` is absolute and normalised, as a path from a job file or a profile must be
// before anything acts on it: no "." or ".." component, no empty one ("a//b"), no trailing
// "/" (but "/" itself), no NUL.
bool is_normal_absolute_path(std::string_view path);

// Whether the path `file` lies in the folder `dir` (a container path like /job/code).
bool is_under(const std::string& file, const std::string& dir);

// `path` relative to the folder `dir` ("." for the folder itself) when it lies in it; both
// absolute host paths. nullopt when it lies elsewhere.
std::optional<std::filesystem::path> relative_within(const std::filesystem::path& path,
                                                     const std::filesystem::path& dir);

// `text` cut to at most `max_bytes` bytes at a character boundary (it must be valid UTF-8).
std::string cut_utf8(std::string text, std::size_t max_bytes);

// "2.0 KiB", "1.5 GiB", "312 B": binary units, one decimal.
std::string human_size(std::uintmax_t bytes);
// "40 µs", "0.4 ms", "120 ms", "1.9 s", "12 s", "25 min", "3.5 h"; "?" when not finite.
std::string human_duration(double seconds);

// A word as /bin/sh reads it back: plain when it holds only letters, digits, the characters
// "_./:=@%+,-" and those of `also_plain`, else single-quoted.
std::string quote_shell_word(const std::string& word, std::string_view also_plain = "");
// `words`, each as quote_shell_word() gives it, separated by spaces: a command line.
std::string quote_shell_words(const std::vector<std::string>& words);

// `text` as a terminal shows it without being driven by it: terminal escape sequences (a
// colour, a title, a cursor move: ESC [ ... and ESC ] ... BEL) are dropped, and every other
// control character but tab and line feed (C0, DEL, C1) becomes U+FFFD. For text a job wrote,
// such as an exception's message, before any report shows it.
std::string plain_text(std::string_view text);

// The length of the well-formed UTF-8 sequence at `at`, or 0: a stray continuation byte,
// a sequence cut short, an overlong form, a surrogate or a code point past U+10FFFF is not.
std::size_t utf8_char_length(std::string_view text, std::size_t at);

}  // namespace preflight
