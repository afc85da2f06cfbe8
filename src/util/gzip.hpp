// gzip streams (RFC 1952) through zlib: the run's trace is kept compressed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace preflight {

// `data` as one gzip member, at zlib's default level.
std::string gzip(std::string_view data);

// The data of a gzip stream of at most `max_bytes` once inflated; an error for a corrupt
// stream or a longer one.
Result<std::string> gunzip(std::string_view stream, std::size_t max_bytes);

}  // namespace preflight
