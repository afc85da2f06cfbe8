// The bounds on what a stranger's file may make Preflight read (docs/security.md "Bounded
// parsers"): a job file, a platform profile, another platform's job definition or a report.json
// from another run. Every reader of them checks these before it builds anything.
#pragma once

#include <cstddef>

namespace preflight {

// The most a job file, a profile or another platform's job definition may weigh: real ones
// are a few kilobytes, and every reader's work and memory grows with the file.
inline constexpr std::size_t kMaxDefinitionBytes = std::size_t{1} << 20;

// The deepest nesting any reader accepts: of YAML lists and maps, of JSON arrays and objects,
// of a SageMaker estimator's Python brackets. The readers and nlohmann::json recurse once per
// level, and a file of 100,000 levels overflowed the stack; real ones nest a dozen deep.
inline constexpr int kMaxNesting = 64;

}  // namespace preflight
