// Root on the host or root in a user namespace: told apart by the uid map.
#include <gtest/gtest.h>

#include "util/host_root.hpp"

namespace preflight {
namespace {

TEST(UtilHostRoot, TheHostsUidMapIsTheIdentityOverAllIds) {
  EXPECT_TRUE(is_identity_uid_map("         0          0 4294967295\n"));
}

TEST(UtilHostRoot, ARootlessRunsUidMapIsNot) {
  EXPECT_FALSE(is_identity_uid_map("         0       1001          1\n         1     100000      65536\n"));
  EXPECT_FALSE(is_identity_uid_map("         0          0 4294967295\n         1          1          1\n"));
  EXPECT_FALSE(is_identity_uid_map("         0     100000      65536\n"));
  EXPECT_FALSE(is_identity_uid_map(""));
}

}  // namespace
}  // namespace preflight
