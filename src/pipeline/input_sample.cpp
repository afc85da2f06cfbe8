#include "pipeline/input_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

// Line-oriented formats whose first records are a valid, smaller file of the same kind.
bool is_text_records(const fs::path& file) {
  static const std::vector<std::string> kinds = {".csv", ".tsv", ".txt",   ".jsonl", ".ndjson", ".tok",
                                                 ".src", ".tgt", ".vocab", ".lst",   ".list"};
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::find(kinds.begin(), kinds.end(), ext) != kinds.end();
}

// The input's size, counting no further than `limit`.
std::uintmax_t size_up_to(const fs::path& input, std::uintmax_t limit) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return fs::file_size(input, ec);
  std::uintmax_t total = 0;
  for (auto it = fs::recursive_directory_iterator(input, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_symlink(ec) && it->is_regular_file(ec)) total += it->file_size(ec);
    if (total > limit) break;
  }
  return total;
}

// Copies the first `lines` lines of `from`; `cut` says whether any were left out.
Status copy_first_lines(const fs::path& from, const fs::path& to, std::size_t lines, bool& cut) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  if (!in || !out) return Error::runtime("cannot sample " + from.string() + " into " + to.string());
  std::string line;
  for (std::size_t i = 0; i < lines && std::getline(in, line); ++i) {
    out << line;
    if (!in.eof()) out << '\n';  // a last line without a newline stays without one
  }
  cut = in.peek() != std::char_traits<char>::eof();
  return out ? Status(Ok{}) : Status(Error::runtime("writing the sample " + to.string() + " failed"));
}

class Sampler {
 public:
  Sampler(const fs::path& input, const fs::path& into, const SampleLimits& limits, InputSample& sample)
      : input_(input), into_(into), limits_(limits), sample_(sample) {}

  // One file: cut when it holds text records, else copied whole when small, else mounted. A
  // link stays a link, which the container resolves as it would in the whole input: followed
  // here, on the host, it would copy or mount whatever host file it names.
  Status file(const fs::path& original, const fs::path& relative) {
    const fs::path target = into_ / relative;
    ++sample_.files_kept;
    std::error_code link_ec;
    if (fs::is_symlink(original, link_ec)) {
      fs::copy_symlink(original, target, link_ec);
      if (link_ec)
        return Error::runtime(fmt::format("cannot sample {}: {}", original.string(), link_ec.message()));
      return Ok{};
    }
    if (is_text_records(original)) {
      bool cut = false;
      auto status = copy_first_lines(original, target, limits_.text_lines, cut);
      if (cut) ++sample_.files_cut;
      return status;
    }
    std::error_code ec;
    const auto bytes = fs::file_size(original, ec);
    if (!ec && bytes < limits_.copy_below) {
      fs::copy_file(original, target, ec);
      if (ec) return Error::runtime(fmt::format("cannot sample {}: {}", original.string(), ec.message()));
    } else {
      std::ofstream(target).flush();  // the mount point
      sample_.file_mounts.emplace_back(original, relative);
    }
    return Ok{};
  }

  // A folder: every sub-folder (the layout is kept) and its first files in name order.
  Status folder(const fs::path& relative) {
    std::error_code ec;
    fs::create_directories(into_ / relative, ec);
    if (ec)
      return Error::runtime(fmt::format("cannot create {}: {}", (into_ / relative).string(), ec.message()));
    std::vector<fs::path> files, folders;
    for (const auto& entry : fs::directory_iterator(input_ / relative, ec)) {
      std::error_code entry_ec;
      // A link is a file of the sample whatever it names (file() keeps it a link).
      const bool link = entry.is_symlink(entry_ec);
      if (!link && entry.is_directory(entry_ec))
        folders.push_back(entry.path().filename());
      else if (link || entry.is_regular_file(entry_ec))
        files.push_back(entry.path().filename());
    }
    if (ec)
      return Error::bad_input(
          fmt::format("cannot read input folder {}: {}", (input_ / relative).string(), ec.message()));
    std::sort(files.begin(), files.end());
    std::sort(folders.begin(), folders.end());
    const std::size_t kept = std::min(files.size(), limits_.files_per_folder);
    sample_.files_left_out += files.size() - kept;
    for (std::size_t i = 0; i < kept; ++i)
      if (auto status = file(input_ / relative / files[i], relative / files[i]); !status) return status;
    for (const auto& sub : folders)
      if (auto status = folder(relative / sub); !status) return status;
    return Ok{};
  }

 private:
  const fs::path& input_;
  const fs::path& into_;
  const SampleLimits& limits_;
  InputSample& sample_;
};

}  // namespace

Result<std::optional<InputSample>> sample_input(const fs::path& input, const fs::path& into,
                                                const SampleLimits& limits) {
  const auto bytes = size_up_to(input, limits.sample_above);
  if (bytes <= limits.sample_above) return std::optional<InputSample>();
  InputSample sample;
  sample.original_bytes = bytes;
  std::error_code ec;
  fs::remove_all(into, ec);
  if (fs::is_regular_file(input, ec)) {
    fs::create_directories(into, ec);
    sample.root = into / input.filename();
    Sampler sampler(input.parent_path(), into, limits, sample);
    if (auto status = sampler.file(input, input.filename()); !status) return std::move(status).error();
    return std::optional<InputSample>(std::move(sample));
  }
  sample.root = into;
  Sampler sampler(input, into, limits, sample);
  if (auto status = sampler.folder({}); !status) return std::move(status).error();
  return std::optional<InputSample>(std::move(sample));
}

std::string describe(const std::string& name, const InputSample& sample, const SampleLimits& limits) {
  std::string text = fmt::format("input \"{}\" (over {}) sampled: {} file{} kept, {} left out", name,
                                 human_size(limits.sample_above), sample.files_kept,
                                 sample.files_kept == 1 ? "" : "s", sample.files_left_out);
  if (sample.files_cut)
    text += fmt::format(", {} cut to their first {} records", sample.files_cut, limits.text_lines);
  if (!sample.file_mounts.empty()) text += fmt::format(", {} mounted as they are", sample.file_mounts.size());
  return text;
}

}  // namespace preflight::pipeline
