// The folders of src/ form layers (docs/architecture.md "Layers"): a file may include its own
// folder and the folders below it, never one above. This test reads every #include of src/.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace preflight {
namespace {

// Bottom to top. A new folder must be given its place here (and in the architecture doc).
constexpr std::array<std::string_view, 14> kLayers = {
    "util",    "harness",   "model", "spec",   "formats",  "image",    "plan",
    "sandbox", "diagnosis", "check", "report", "estimate", "pipeline", "cli"};

std::optional<std::size_t> layer_of(std::string_view folder) {
  for (std::size_t i = 0; i < kLayers.size(); ++i)
    if (kLayers[i] == folder) return i;
  return std::nullopt;
}

struct Include {
  std::filesystem::path file;  // relative to src/
  int line = 0;
  std::string target;  // as written: "model/finding.hpp"
};

std::vector<Include> project_includes(const std::filesystem::path& src) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::string text;
    int number = 0;
    while (std::getline(in, text)) {
      ++number;
      std::smatch match;
      if (std::regex_search(text, match, kInclude))
        found.push_back({std::filesystem::relative(entry.path(), src), number, match[1].str()});
    }
  }
  return found;
}

std::string first_folder(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.begin()->string() : std::string();
}

TEST(SrcLayering, EveryFolderHasALayer) {
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_dir() / "src")) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(layer_of(entry.path().filename().string()))
        << "src/" << entry.path().filename().string()
        << " has no place in kLayers (tests/unit/src_layering_test.cpp): add it where it belongs";
  }
}

TEST(SrcLayering, NoIncludePointsUp) {
  const auto src = testing::source_dir() / "src";
  const auto includes = project_includes(src);
  ASSERT_GT(includes.size(), 300u) << "the scan found too few includes to be reading src/";
  for (const Include& include : includes) {
    const std::string from = first_folder(include.file);
    const std::string to = first_folder(include.target);
    if (from.empty()) continue;  // main.cpp sits above every layer
    EXPECT_TRUE(std::filesystem::exists(src / include.target))
        << "src/" << include.file.string() << ":" << include.line << ": includes \"" << include.target
        << "\", which is not under src/";
    const auto from_layer = layer_of(from);
    const auto to_layer = layer_of(to);
    if (!from_layer || !to_layer) continue;  // EveryFolderHasALayer names the folder
    EXPECT_LE(*to_layer, *from_layer)
        << "src/" << include.file.string() << ":" << include.line << ": " << from << "/ includes \""
        << include.target << "\", a layer above it; move what "
        << "both need down (to model/, say) or pass it in";
  }
}

}  // namespace
}  // namespace preflight
