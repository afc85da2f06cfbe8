// Sealed folders: which folders of an image's root a job's user other than root can change
// nothing in, their record, and that the cache records them and verifies the record.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "image/sealed_folders.hpp"
#include "image_fixtures.hpp"
#include "test_support.hpp"

namespace preflight::image {
namespace {
namespace fs = std::filesystem;
using namespace fixtures;  // NOLINT(google-build-using-namespace): the image test fixtures

std::vector<std::string> paths_of(const std::vector<SealedFolder>& folders) {
  std::vector<std::string> paths;
  for (const auto& folder : folders) paths.push_back(folder.path);
  return paths;
}

std::vector<SealedFolder> sealed_in(const fs::path& root) {
  auto folders = sealed_folders(root, 1000);
  EXPECT_TRUE(folders.ok()) << folders.error().str();
  return folders ? *folders : std::vector<SealedFolder>{};
}

TEST(SealedFolders, AreRootsFoldersThatNoOtherUserCanWriteAnythingIn) {
  if (::geteuid() != 0) GTEST_SKIP() << "an image's files belong to root only when root unpacks them";
  testing::TempDir dir;
  const fs::path root = dir.path() / "root";
  write_file(root / "usr/lib/python3/torch/__init__.py", "");
  write_file(root / "usr/bin/python3", "");
  write_file(root / "usr/local/lib/site.py", "");
  write_file(root / "etc/passwd", "");
  write_file(root / "etc/ssl/cert.pem", "");
  write_file(root / "opt/app/run.sh", "");
  write_file(root / "var/log/app.log", "");
  write_file(root / "srv/data/x", "");
  fs::create_directories(root / "tmp");
  fs::create_symlink("usr/lib", root / "lib");
  fs::create_symlink("/tmp", root / "usr/lib/scratch");  // a link's target is not its folder's
  // Debian's /usr/local: setgid and group-writable by staff.
  ASSERT_EQ(::chmod((root / "usr/local/lib").c_str(), 02775), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((root / "tmp").c_str(), 01777), 0);
  ASSERT_EQ(::chown((root / "opt/app/run.sh").c_str(), 1000, 1000), 0);  // the image's own user's
  ASSERT_EQ(::chmod((root / "var/log/app.log").c_str(), 0666), 0);
  ASSERT_EQ(::mknod((root / "srv/data/null").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);

  const auto folders = sealed_in(root);
  ASSERT_EQ(paths_of(folders), (std::vector<std::string>{"etc", "etc/ssl", "usr/bin", "usr/lib"}))
      << format_sealed(folders);
  // Every entry below a folder counts: usr/lib has python3, python3/torch, __init__.py, the link.
  EXPECT_EQ(folders[3], (SealedFolder{"usr/lib", 4}));
  EXPECT_EQ(folders[0], (SealedFolder{"etc", 3}));
}

TEST(SealedFolders, AnyWriteBitForOthersUnsealsEveryFolderAboveIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "an image's files belong to root only when root unpacks them";
  testing::TempDir dir;
  const fs::path root = dir.path() / "root";
  write_file(root / "usr/share/doc/a/b/c/deep.txt", "");
  ASSERT_EQ(paths_of(sealed_in(root)), (std::vector<std::string>{"usr", "usr/share"}));
  ASSERT_EQ(::chmod((root / "usr/share/doc/a/b/c/deep.txt").c_str(), 0620), 0);
  EXPECT_TRUE(sealed_in(root).empty());
  ASSERT_EQ(::chmod((root / "usr/share/doc/a/b/c/deep.txt").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((root / "usr/share/doc/a").c_str(), 0757), 0);
  EXPECT_TRUE(sealed_in(root).empty());
}

TEST(SealedFolders, AWalkPastItsBoundIsAnError) {
  testing::TempDir dir;
  for (int i = 0; i < 5; ++i) write_file(dir.path() / "usr" / std::to_string(i), "");
  EXPECT_TRUE(sealed_folders(dir.path(), 6).ok());
  EXPECT_FALSE(sealed_folders(dir.path(), 5).ok());
}

TEST(SealedFolders, TheRecordReadsBackAndAMalformedOneIsNone) {
  const std::vector<SealedFolder> folders{{"usr", 39295}, {"usr/lib", 22397}, {"etc", 0}};
  EXPECT_EQ(format_sealed(folders), "39295 usr\n22397 usr/lib\n0 etc\n");
  EXPECT_EQ(parse_sealed(format_sealed(folders)), folders);
  EXPECT_EQ(parse_sealed(""), std::vector<SealedFolder>{});
  for (const char* bad : {"12 ../etc\n", "12 usr/lib/python3\n", "12 /usr\n", "12 usr/\n", "12 ./usr\n",
                          "12\n", "12x usr\n", "-1 usr\n", " usr\n", "12 usr//lib\n"})
    EXPECT_EQ(parse_sealed(bad), std::nullopt) << bad;
}

class SealedRecord : public ::testing::Test {
 protected:
  Result<UnpackedImage> resolve(const std::string& archive, const std::vector<Entry>& entries) {
    make_docker_archive(work_.path() / archive, {make_tar(entries)});
    auto ref = parse_image_ref("docker-archive:" + archive, work_.path());
    if (!ref) return ref.error();
    return ImageStore(cache_.path(), work_.path() / "recipes").resolve(*ref, nullptr);
  }
  testing::TempDir work_, cache_;
};

TEST_F(SealedRecord, AnUnpackRecordsItsFoldersAndAnOlderEntryGetsThemAtItsNextUse) {
  if (::geteuid() != 0) GTEST_SKIP() << "an image's files belong to root only when root unpacks them";
  const std::vector<Entry> entries{{"usr/", 'd'},
                                   {"usr/lib/", 'd'},
                                   {"usr/lib/m.py", 'f', "x"},
                                   {"usr/local/", 'd', {}, 02775},
                                   {"lib", 'l', "usr/lib"}};
  auto image = resolve("app.tar", entries);
  ASSERT_TRUE(image.ok()) << image.error().str();
  EXPECT_EQ(paths_of(image->sealed), std::vector<std::string>{"usr/lib"});
  const fs::path record = cache_.path() / "rootfs" / ("sha256-" + digest_hex(image->digest)) / "sealed";
  EXPECT_EQ(read_file(record), "1 usr/lib\n");

  fs::remove(record);  // an entry unpacked before the record was kept
  auto again = resolve("app.tar", entries);
  ASSERT_TRUE(again.ok()) << again.error().str();
  EXPECT_EQ(again->sealed, image->sealed);
  EXPECT_EQ(read_file(record), "1 usr/lib\n");

  // A malformed record binds nothing; one that lies is corrupt to `cache verify`.
  write_file(record, "1 ../../host\n");
  again = resolve("app.tar", entries);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->sealed.empty());
  write_file(record, "1 usr/lib\n3 usr\n");
  const auto checks = RootfsCache(cache_.path()).verify();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].state, EntryCheck::State::Corrupt);
  EXPECT_NE(checks[0].detail.find("sealed folders does not match"), std::string::npos) << checks[0].detail;
  write_file(record, "1 usr/lib\n");
  EXPECT_EQ(RootfsCache(cache_.path()).verify()[0].state, EntryCheck::State::Verified);
}

}  // namespace
}  // namespace preflight::image
