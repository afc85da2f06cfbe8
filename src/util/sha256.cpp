#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace preflight {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::update(const void* data, std::size_t size) { EVP_DigestUpdate(state_->ctx, data, size); }

void Sha256::update_field(std::string_view field) {
  update(std::to_string(field.size()) + ":");
  update(field);
}

std::string Sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, md.data(), &length);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(length) * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += kDigits[md[i] >> 4];
    out += kDigits[md[i] & 0xf];
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
