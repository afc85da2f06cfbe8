// The units users write in job.yaml, profiles and Preflight's environment variables, as
// Kubernetes, Docker and Go write them (docs/formats.md "Sizes and durations").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "util/error.hpp"

namespace preflight {

// Parses a size such as "16Gi", "64Mi", "512M", "1G" or a plain byte count.
Result<std::uint64_t> parse_size(const std::string& text);
// Parses a duration such as "10m", "90s", "1h30m", "500ms".
Result<std::chrono::milliseconds> parse_duration(const std::string& text);
// A whole number of seconds as parse_duration reads it back, largest units first: "1d12h",
// "2h30m", "90s" → "1m30s".
std::string duration_text(std::chrono::seconds duration);

}  // namespace preflight
