#include <gtest/gtest.h>

#include "util/gzip.hpp"

namespace preflight {
namespace {

TEST(UtilGzip, RoundTrips) {
  std::string data;
  for (int i = 0; i < 100000; ++i) data += "event " + std::to_string(i) + "\n";
  const std::string packed = gzip(data);
  ASSERT_GE(packed.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x8b);
  EXPECT_LT(packed.size(), data.size() / 4);
  auto unpacked = gunzip(packed, data.size());
  ASSERT_TRUE(unpacked) << unpacked.error().str();
  EXPECT_EQ(*unpacked, data);
}

TEST(UtilGzip, RefusesCorruptTruncatedAndOverlongStreams) {
  const std::string packed = gzip(std::string(1 << 20, 'a'));
  EXPECT_FALSE(gunzip("plain text", 1000));
  EXPECT_FALSE(gunzip(packed.substr(0, packed.size() / 2), 2 << 20));
  EXPECT_FALSE(gunzip(packed, 1000));  // a bomb stops at its bound
  EXPECT_TRUE(gunzip(gzip(""), 0));
}

}  // namespace
}  // namespace preflight
