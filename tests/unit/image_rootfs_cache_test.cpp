// The cache of unpacked images under runs that start together: an image they all find
// missing is unpacked once, by one of them, and the others use that copy.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "image_fixtures.hpp"
#include "test_support.hpp"

namespace preflight::image {
namespace {
namespace fs = std::filesystem;
using namespace fixtures;

// The turn a build of a built-in image (build-NAME) or an unpack (unpack-HEX) takes: a second
// taker waits, says so, and gets its turn when the first lets go.
TEST(CacheTurn, ASecondTakerWaitsAndSaysSoUntilTheFirstLetsGo) {
  testing::TempDir cache;
  const fs::path file = cache.path() / "locks" / "build-pytorch";
  auto first = take_turn(file, "waiting", nullptr);
  ASSERT_TRUE(first.ok()) << first.error().str();
  std::atomic<bool> said{false}, taken{false};
  std::thread second([&] {
    auto turn = take_turn(file, "waiting for another Preflight's build", [&](const std::string& line) {
      said = line == "waiting for another Preflight's build";
    });
    taken = turn.ok();
  });
  for (int i = 0; i < 200 && !said; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(said);
  EXPECT_FALSE(taken);
  *first = UniqueFd();
  second.join();
  EXPECT_TRUE(taken);
}

TEST(RootfsCache, RunsThatFindAnImageMissingAtOnceUnpackItOnce) {
  testing::TempDir work, cache;
  // Big enough that the first unpack is still going when the others look for the image.
  std::vector<Entry> files{{"./", 'd'}};
  for (int i = 0; i < 64; ++i)
    files.emplace_back("./file" + std::to_string(i), 'f', std::string(256 << 10, 'x'));
  make_docker_archive(work.path() / "app.tar", {make_tar(files)});

  constexpr int kRuns = 8;
  std::atomic<int> unpacks{0}, waited{0}, started{0};
  std::vector<std::optional<Result<UnpackedImage>>> images(kRuns);
  const auto ref = parse_image_ref("docker-archive:app.tar", work.path());
  ASSERT_TRUE(ref);
  std::vector<std::thread> runs;
  for (int i = 0; i < kRuns; ++i) {
    runs.emplace_back([&, i] {
      ImageStore store(cache.path(), work.path() / "recipes");
      ++started;
      while (started < kRuns) std::this_thread::yield();  // all look for the image together
      images[i] = store.resolve(*ref, [&](const std::string& line) {
        if (line.starts_with("unpacking image")) ++unpacks;
        if (line.starts_with("waiting for another Preflight's unpack")) ++waited;
      });
    });
  }
  for (auto& run : runs) run.join();

  EXPECT_EQ(unpacks, 1);
  EXPECT_GE(waited, 1);  // at least one found the unpack going on, not yet done
  for (const auto& image : images) {
    ASSERT_TRUE(image && *image) << (image ? (*image).error().str() : "not resolved");
    EXPECT_EQ((*image)->rootfs, (*images[0])->rootfs);
  }
  // One image's worth in the cache, nothing of other unpacks aside.
  std::size_t names = 0;
  for (const auto& entry : fs::directory_iterator(cache.path() / "rootfs")) {
    EXPECT_TRUE(entry.path().filename().string().starts_with("sha256-")) << entry.path();
    ++names;
  }
  EXPECT_EQ(names, 1u);
}

}  // namespace
}  // namespace preflight::image
