#include <gtest/gtest.h>

#include "pipeline/run_room.hpp"

namespace preflight::pipeline {
namespace {

constexpr std::uint64_t GiB = 1ull << 30;

TEST(RoomWanted, NothingWithinTheBoundAndAboveTheFloor) {
  EXPECT_EQ(room_wanted({10 * GiB, 20 * GiB, 50 * GiB, 100 * GiB, 5 * GiB}), 0u);
}

TEST(RoomWanted, KeptRunsCountAgainstTheCachesBound) {
  // The images alone fit; with the runs kept beside them the cache is 4 GiB over.
  EXPECT_EQ(room_wanted({14 * GiB, 40 * GiB, 50 * GiB, 100 * GiB, 5 * GiB}), 4 * GiB);
}

TEST(RoomWanted, ADiskBelowItsFloorWantsWhatItIsShortOfTheMoreOfTheTwo) {
  EXPECT_EQ(room_wanted({GiB, GiB, 50 * GiB, 3 * GiB, 5 * GiB}), 2 * GiB);
  EXPECT_EQ(room_wanted({14 * GiB, 40 * GiB, 50 * GiB, 4 * GiB, 5 * GiB}), 4 * GiB);
}

}  // namespace
}  // namespace preflight::pipeline
