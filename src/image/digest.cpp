#include "image/digest.hpp"

namespace preflight::image {

std::string digest_hex(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.substr(0, kPrefix.size()) != kPrefix) return {};
  std::string_view hex = digest.substr(kPrefix.size());
  if (hex.size() != 64) return {};
  for (char c : hex) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!ok) return {};
  }
  return std::string(hex);
}

}  // namespace preflight::image
