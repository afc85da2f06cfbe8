// Sampling of large inputs for the dry run: a copy of the input's layout in the run folder
// with a few files per folder and the first records of text files; files that cannot be cut
// (binary, large) are mounted as they are, read-only. The original is only read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::pipeline {

struct SampleLimits {
  std::uintmax_t sample_above = 1ull << 30;  // inputs smaller than this are mounted whole
  std::size_t files_per_folder = 16;
  std::size_t text_lines = 1000;            // first records kept of a text file
  std::uintmax_t copy_below = 16ull << 20;  // smaller files are copied whole
};

struct InputSample {
  std::filesystem::path root;  // the sample, in the run folder: mounted in place of the input
  // Files too large to copy and not cut, mounted read-only over their place in the sample.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> file_mounts;  // original, relative
  std::uintmax_t original_bytes = 0;  // at least this much (counting stops past the limit)
  std::size_t files_kept = 0;
  std::size_t files_left_out = 0;
  std::size_t files_cut = 0;  // text files cut to their first records
};

// Samples `input` (a folder or a file) into `into` when it is larger than the limit;
// nullopt when it is small enough to mount as it is.
Result<std::optional<InputSample>> sample_input(const std::filesystem::path& input,
                                                const std::filesystem::path& into,
                                                const SampleLimits& limits);

// "input data (at least 3.2 GiB) sampled: 48 files kept, 9,950 left out, 2 cut to 1000 records"
std::string describe(const std::string& name, const InputSample& sample, const SampleLimits& limits);

}  // namespace preflight::pipeline
