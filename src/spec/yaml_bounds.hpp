// What a YAML text must be before yaml-cpp loads it (docs/security.md "Bounded parsers"): one
// document, nested at most kMaxNesting deep, and of a bounded size with its aliases written
// out. yaml-cpp loads an alias as one more reference to its anchor's node, which is free, but
// every reader that walks, converts or prints the document writes it out again: 568 bytes of
// nested anchors stand for billions of nodes.
#pragma once

#include <yaml-cpp/mark.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "util/error.hpp"

namespace preflight::spec {

// The most values (scalars, lists, maps) and scalar bytes a document's aliases may add to it
// once written out: what the text holds is bounded by its size already (kMaxDefinitionBytes),
// and real job definitions repeat a few blocks at most.
inline constexpr std::uint64_t kMaxAliasedNodes = 100'000;
inline constexpr std::uint64_t kMaxAliasedBytes = std::uint64_t{4} << 20;

// Where `mark` is in `file`, 1-based (line and column 0 when yaml-cpp gives no place).
SourceLocation yaml_location(const std::filesystem::path& file, const YAML::Mark& mark);

// Ok when `text` (read from `file`) is one YAML document within those bounds; otherwise bad
// input at the place that crosses them: the second document, the level too deep, the alias
// that adds too much or names the node it is in, or the syntax error on the way.
// One pass over the parser's events, whatever the aliases stand for.
Status check_yaml_bounds(const std::string& text, const std::filesystem::path& file);

}  // namespace preflight::spec
