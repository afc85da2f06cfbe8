// SHA-256 digests in the "sha256:<hex>" form OCI uses (the digest itself: util/sha256.hpp).
#pragma once

#include <string>
#include <string_view>

#include "util/sha256.hpp"

namespace preflight::image {

// "sha256:<64 hex>" → "<64 hex>"; empty when the digest is not a well-formed sha256 digest.
std::string digest_hex(std::string_view digest);

}  // namespace preflight::image
