#include "util/sha256.hpp"

// OpenSSL's own SHA-256 (its assembly, SHA extensions where the CPU has them) through the
// digest's direct interface, which OpenSSL 3 marks deprecated: EVP's first digest in a process
// sets up OpenSSL's providers and reads its configuration, 0.8 ms measured, and its cleanup
// runs at exit, in every Preflight command that hashes anything.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace preflight {

struct Sha256::State {
  SHA256_CTX ctx{};
};

Sha256::Sha256() : state_(std::make_unique<State>()) { SHA256_Init(&state_->ctx); }

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { SHA256_Update(&state_->ctx, data, size); }

void Sha256::update_field(std::string_view field) {
  update(std::to_string(field.size()) + ":");
  update(field);
}

std::string Sha256::hex() {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> md{};
  SHA256_Final(md.data(), &state_->ctx);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(md.size() * 2);
  for (const unsigned char byte : md) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view text) {
  Sha256 sha;
  sha.update(text);
  return sha.hex();
}

Result<std::string> sha256_file_hex(const std::filesystem::path& file) {
  std::FILE* in = std::fopen(file.c_str(), "rb");
  if (in == nullptr) {
    return Error::runtime(file.string() + ": cannot read the file to digest it");
  }
  Sha256 sha;
  std::vector<char> buffer(1 << 20);
  std::size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), in)) > 0) sha.update(buffer.data(), got);
  bool failed = std::ferror(in) != 0;
  std::fclose(in);
  if (failed) return Error::runtime(file.string() + ": read error while digesting the file");
  return sha.hex();
}

}  // namespace preflight
