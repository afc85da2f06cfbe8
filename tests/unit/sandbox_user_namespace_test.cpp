// The user namespace of a rootless run: which subordinate ids a user has and how they are mapped.
#include <gtest/gtest.h>

#include "sandbox/user_namespace.hpp"

namespace preflight::sandbox {
namespace {

TEST(SandboxUserNamespace, FindsTheUsersFirstRangeByNameOrId) {
  const char* subuid =
      "alice:100000:65536\n# a comment\nbob:165536:65536\n1002:231072:70000\nbob:300000:10\n";
  auto bob = subordinate_range(subuid, "bob", 1001);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->first, 165536u);
  EXPECT_EQ(bob->count, 65536u);
  auto by_id = subordinate_range(subuid, "carol", 1002);
  ASSERT_TRUE(by_id);
  EXPECT_EQ(by_id->first, 231072u);
  EXPECT_EQ(by_id->count, 70000u);
}

TEST(SandboxUserNamespace, NoRangeForAnotherUserOrAMalformedLine) {
  EXPECT_FALSE(subordinate_range("alice:100000:65536\n", "bob", 1001));
  EXPECT_FALSE(subordinate_range("bob:100000\nbob:x:65536\nbob:100000:65536x\n", "bob", 1001));
  EXPECT_FALSE(subordinate_range("", "bob", 1001));
}

TEST(SandboxUserNamespace, UserIsRootInsideAndSubordinateIdsFollow) {
  // The cached image belongs to the user: inside it is root's, and the platform's uid 1000 is
  // one of the subordinate ids, so it cannot write the image's folders.
  EXPECT_EQ(id_map_arguments(4242, 1001, {100000, 65536}),
            (std::vector<std::string>{"4242", "0", "1001", "1", "1", "100000", "65536"}));
}

}  // namespace
}  // namespace preflight::sandbox
