// `preflight cache verify`: the digest of an unpacked tree (what it covers, that it follows no
// link, its bounds), each name of the cache judged, and two unpacks of one image at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "image/tree_digest.hpp"
#include "image_fixtures.hpp"
#include "test_support.hpp"

namespace preflight::image {
namespace {
namespace fs = std::filesystem;
using namespace fixtures;  // NOLINT(google-build-using-namespace): the image test fixtures
using State = EntryCheck::State;

std::string digest_of(const fs::path& root, UnpackLimits limits = {}) {
  auto tree = tree_digest(root, limits);
  EXPECT_TRUE(tree.ok()) << tree.error().str();
  return tree ? tree->digest : "";
}

// Sets the modification time of `path` (not following a link) to a fixed second.
void set_time(const fs::path& path) {
  const struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
}

TEST(TreeDigest, CoversContentsModesAndLinksButFollowsNoLink) {
  testing::TempDir dir, outside;
  const fs::path root = dir.path() / "root";
  write_file(root / "etc/app.conf", "port=1");
  write_file(outside.path() / "secret", "a");
  fs::create_symlink(outside.path() / "secret", root / "etc/escape");
  fs::create_symlink("app.conf", root / "etc/alias");
  set_time(root / "etc/app.conf");
  const std::string first = digest_of(root);
  EXPECT_EQ(digest_of(root), first);
  auto counted = tree_digest(root, {});
  ASSERT_TRUE(counted.ok());
  EXPECT_EQ(counted->files, 4u);  // etc, app.conf and the two links
  EXPECT_EQ(counted->bytes, 6u);

  // What a link points at is not part of the tree: only where it points.
  write_file(outside.path() / "secret", "b");
  EXPECT_EQ(digest_of(root), first);

  // The same size and time with one byte changed.
  write_file(root / "etc/app.conf", "port=2");
  set_time(root / "etc/app.conf");
  const std::string changed = digest_of(root);
  EXPECT_NE(changed, first);
  fs::permissions(root / "etc/app.conf", fs::perms::owner_read);
  EXPECT_NE(digest_of(root), changed);
}

TEST(TreeDigest, IsBoundedInEntriesAndBytes) {
  testing::TempDir dir;
  write_file(dir.path() / "a", std::string(1000, 'x'));
  write_file(dir.path() / "b", "y");
  EXPECT_FALSE(tree_digest(dir.path(), {.max_bytes = 500, .max_entries = 10}).ok());
  auto few = tree_digest(dir.path(), {.max_bytes = 1 << 20, .max_entries = 1});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.error().message.find("more than 1 files"), std::string::npos) << few.error().message;
  EXPECT_TRUE(tree_digest(dir.path(), {.max_bytes = 1001, .max_entries = 2}).ok());
}

class CacheVerify : public ::testing::Test {
 protected:
  Result<UnpackedImage> resolve(const std::string& text) {
    auto ref = parse_image_ref(text, work_.path());
    if (!ref) return ref.error();
    return ImageStore(cache_.path(), work_.path() / "recipes").resolve(*ref, nullptr);
  }
  // An image of `files` small files and a few links, as a docker save archive.
  std::string make_image(const std::string& name, int files) {
    std::vector<Entry> entries = {{"usr/", 'd'}, {"usr/lib/", 'd'}, {"lib", 'l', "usr/lib"}};
    for (int i = 0; i < files; ++i)
      entries.push_back({"usr/lib/f" + std::to_string(i), 'f', name + std::string(200, char('a' + i % 26))});
    entries.push_back({"usr/lib/alias", 'h', "usr/lib/f0"});
    make_docker_archive(work_.path() / (name + ".tar"), {make_tar(entries)});
    return "docker-archive:" + name + ".tar";
  }
  const EntryCheck* find(const std::vector<EntryCheck>& checks, const std::string& name) {
    for (const auto& check : checks)
      if (check.name == name) return &check;
    ADD_FAILURE() << name << " was not checked";
    return nullptr;
  }
  testing::TempDir work_, cache_;
};

TEST_F(CacheVerify, AFreshUnpackVerifiesAndAChangedFileDoesNot) {
  auto image = resolve(make_image("app", 20));
  ASSERT_TRUE(image.ok()) << image.error().str();
  const std::string name = "sha256-" + digest_hex(image->digest);
  RootfsCache cache(cache_.path());
  auto checks = cache.verify();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, name);
  EXPECT_EQ(checks[0].state, State::Verified) << checks[0].detail;
  EXPECT_EQ(checks[0].files, 24u);  // usr, usr/lib, lib, 20 files and the hard link
  EXPECT_FALSE(checks[0].fails());

  // A file of the image written after its unpack, as a job writing into the lower layer would.
  write_file(image->rootfs / "usr/lib/f3", "changed");
  checks = cache.verify();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].state, State::Corrupt);
  EXPECT_NE(checks[0].detail.find("changed since they were unpacked"), std::string::npos) << checks[0].detail;
  EXPECT_TRUE(checks[0].fails());

  // Without a recorded tree digest (an older Preflight's entry), only the config is checked.
  fs::remove(cache_.path() / "rootfs" / name / "tree");
  checks = cache.verify();
  EXPECT_EQ(checks[0].state, State::Unchecked);
  EXPECT_FALSE(checks[0].fails());

  write_file(cache_.path() / "rootfs" / name / "config.json", "{}");
  checks = cache.verify();
  EXPECT_EQ(checks[0].state, State::Corrupt);
  EXPECT_NE(checks[0].detail.find("does not match its digest"), std::string::npos) << checks[0].detail;
}

TEST_F(CacheVerify, NamesWhatTheCacheDoesNotMakeAndWhatIsHalfMade) {
  auto image = resolve(make_image("app", 3));
  ASSERT_TRUE(image.ok()) << image.error().str();
  const fs::path rootfs = cache_.path() / "rootfs";
  const std::string hex = digest_hex(image->digest);
  write_file(rootfs / "notes.txt", "mine");
  fs::create_symlink(rootfs / ("sha256-" + hex), rootfs / ("sha256-" + std::string(64, 'a')));
  fs::create_directories(rootfs / "sha256-short");
  // An entry whose completion marker is gone, and one whose marker names another image.
  fs::create_directories(rootfs / ("sha256-" + std::string(64, 'b')) / "rootfs");
  fs::create_directories(rootfs / ("sha256-" + std::string(64, 'c')) / "rootfs");
  write_file(rootfs / ("sha256-" + std::string(64, 'c')) / "complete", image->digest + "\n");
  // Temporary folders of an unpack going on (this process) and of one whose process is gone.
  fs::create_directories(rootfs / (".tmp-" + hex.substr(0, 12) + "-" + std::to_string(::getpid())));
  fs::create_directories(rootfs / (".tmp-" + hex.substr(0, 12) + "-999999999"));

  const auto checks = RootfsCache(cache_.path()).verify();
  EXPECT_EQ(checks.size(), 8u);
  auto state = [&](const std::string& name) {
    const EntryCheck* check = find(checks, name);
    return check ? check->state : State::Verified;
  };
  EXPECT_EQ(state("sha256-" + hex), State::Verified);
  EXPECT_EQ(state("notes.txt"), State::Foreign);
  EXPECT_EQ(state("sha256-" + std::string(64, 'a')), State::Foreign);  // a link, never followed
  EXPECT_EQ(state("sha256-short"), State::Foreign);
  EXPECT_EQ(state("sha256-" + std::string(64, 'b')), State::Incomplete);
  EXPECT_EQ(state("sha256-" + std::string(64, 'c')), State::Corrupt);
  EXPECT_EQ(state(".tmp-" + hex.substr(0, 12) + "-" + std::to_string(::getpid())), State::InProgress);
  EXPECT_EQ(state(".tmp-" + hex.substr(0, 12) + "-999999999"), State::Incomplete);

  // A prune takes away what a gone process left half made.
  RootfsCache(cache_.path()).prune(0);
  EXPECT_FALSE(fs::exists(rootfs / (".tmp-" + hex.substr(0, 12) + "-999999999")));
}

// `cache verify IMAGE...`: an image found by its digest or its start, or by what a job names,
// and only its entry read.
TEST_F(CacheVerify, ChecksOnlyTheImagesNamedFoundByDigestOrReference) {
  auto app = resolve(make_image("app", 3));
  auto other = resolve(make_image("other", 4));
  ASSERT_TRUE(app.ok() && other.ok());
  RootfsCache cache(cache_.path());
  const std::string app_name = "sha256-" + digest_hex(app->digest);
  write_file(other->rootfs / "usr/lib/f1", "changed");  // would fail, were it checked

  auto found = cache.find_entry(app->digest.substr(0, 7 + 12));
  ASSERT_TRUE(found.ok()) << found.error().str();
  EXPECT_EQ(*found, app_name);
  const auto checks = cache.verify({*found});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, app_name);
  EXPECT_EQ(checks[0].state, State::Verified) << checks[0].detail;
  EXPECT_EQ(cache.verify().size(), 2u);

  // What a job names reads its digest without unpacking; a rootfs: folder is never cached.
  const ImageStore store(cache_.path(), work_.path() / "recipes");
  auto ref = parse_image_ref(make_image("app", 3), work_.path());
  ASSERT_TRUE(ref.ok());
  auto digest = store.digest_here(*ref);
  ASSERT_TRUE(digest.ok()) << digest.error().str();
  EXPECT_EQ(*digest, app->digest);
  EXPECT_FALSE(store.digest_here(*parse_image_ref("rootfs:/srv/root", work_.path())).ok());
  auto unbuilt = store.digest_here(*parse_image_ref("pytorch", work_.path()));
  ASSERT_FALSE(unbuilt.ok());
  EXPECT_NE(unbuilt.error().message.find("no built-in image \"pytorch\""), std::string::npos)
      << unbuilt.error().message;

  // Too short, not hex, not there, and a start two entries share.
  for (const std::string bad :
       {"sha256:0123", "sha256:0123456789AB", "0123456789abcdef", "sha256:000000000000"})
    EXPECT_EQ(cache.find_entry(bad).error().kind, ErrorKind::BadInput) << bad;
  fs::create_directories(cache_.path() / "rootfs" / (app_name.substr(0, 7 + 12) + std::string(52, '0')));
  auto shared = cache.find_entry(app->digest.substr(0, 7 + 12));
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.error().message.find("2 unpacked images begin with this digest"), std::string::npos)
      << shared.error().message;
}

// Two unpacks of one image at once in one process (two threads using the core library): each must
// unpack into a folder of its own. Both get the image, whole, and nothing half made stays.
TEST_F(CacheVerify, TwoUnpacksOfOneImageAtOnceInOneProcessBothSucceed) {
  const std::string ref = make_image("big", 3000);
  for (int round = 0; round < 3; ++round) {
    Result<UnpackedImage> first = Error::runtime("not run"), second = Error::runtime("not run");
    std::thread other([&] { second = resolve(ref); });
    first = resolve(ref);
    other.join();
    ASSERT_TRUE(first.ok()) << first.error().str();
    ASSERT_TRUE(second.ok()) << second.error().str();
    EXPECT_EQ(read_file(first->rootfs / "usr/lib/f2999"), "big" + std::string(200, char('a' + 2999 % 26)));
    const auto checks = RootfsCache(cache_.path()).verify();
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].state, State::Verified) << checks[0].name << ": " << checks[0].detail;
    first = second = Error::runtime("released");
    RootfsCache(cache_.path()).prune(0);
  }
}

}  // namespace
}  // namespace preflight::image
