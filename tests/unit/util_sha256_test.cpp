// SHA-256 against the standard's known answers (FIPS 180-2, appendix B), whole and streamed.
#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"
#include "util/sha256.hpp"

namespace preflight {
namespace {

TEST(Sha256, GivesTheStandardsDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, StreamedInPiecesIsTheSameDigest) {
  // A million 'a's in pieces that cross the 64-byte blocks at every offset.
  Sha256 sha;
  const std::string piece(997, 'a');
  std::size_t fed = 0;
  while (fed + piece.size() <= 1000000) {
    sha.update(piece);
    fed += piece.size();
  }
  sha.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(sha.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, DigestsAFile) {
  testing::TempDir dir;
  dir.write("data", "abc");
  auto hex = sha256_file_hex(dir.path() / "data");
  ASSERT_TRUE(hex) << hex.error().str();
  EXPECT_EQ(*hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_FALSE(sha256_file_hex(dir.path() / "missing"));
}

}  // namespace
}  // namespace preflight
