// SHA-256 digests in lowercase hex, over strings, files and streams (OpenSSL's).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace preflight {

// Incremental SHA-256: feed bytes, then take the lowercase hex digest once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // `field` with its length first ("5:hello"), so that no two lists of fields hash the same
  // bytes: a cache key over several texts.
  void update_field(std::string_view field);
  std::string hex();  // finishes the digest

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string sha256_hex(std::string_view text);
Result<std::string> sha256_file_hex(const std::filesystem::path& file);

}  // namespace preflight
