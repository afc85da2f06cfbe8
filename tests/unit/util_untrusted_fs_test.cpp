#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "test_support.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A tree standing for an image's root, and a folder beside it standing for the host.
struct RootAndHost {
  TempDir dir;
  fs::path root = dir.path() / "root";
  fs::path host = dir.path() / "host";
  RootAndHost() {
    fs::create_directories(root / "etc");
    fs::create_directories(host / "home");
  }
  UniqueFd open_root() const { return open_folder(root).value(); }
};

TEST(OpenBelow, AnAbsoluteLinkResolvesInTheRootNotOnTheHost) {
  RootAndHost t;
  t.dir.write("host/secret", "host\n");
  t.dir.write("root" + t.host.string() + "/secret", "image\n");
  fs::create_symlink(t.host / "secret", t.root / "etc" / "link");
  auto fd = open_below(t.open_root().get(), "/etc/link", O_RDONLY, Links::InRoot);
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_EQ(*read_regular(fd->get(), 100, "link"), "image\n");
}

TEST(OpenBelow, DotDotStopsAtTheRoot) {
  RootAndHost t;
  t.dir.write("host/secret", "host\n");
  fs::create_symlink("../../../../../../../.." + t.host.string() + "/secret", t.root / "etc" / "link");
  auto fd = open_below(t.open_root().get(), "/etc/link", O_RDONLY, Links::InRoot);
  EXPECT_FALSE(fd);  // it would be root/<host>/secret, which the image does not have
  EXPECT_FALSE(open_below(t.open_root().get(), "../host/secret", O_RDONLY, Links::None));
}

TEST(OpenBelow, NoLinkAtAllInAJobsFolder) {
  RootAndHost t;
  t.dir.write("root/real", "x");
  fs::create_symlink("real", t.root / "link");
  auto fd = open_below(t.open_root().get(), "link", O_RDONLY, Links::None);
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message.find("symbolic link"), std::string::npos) << fd.error().message;
}

TEST(MakeFolderInRoot, MakesMissingFoldersAndGivesThemToTheUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown needs root";
  RootAndHost t;
  ASSERT_TRUE(make_folder_in_root(t.open_root().get(), "/home/job/work", 1000, 1000, false));
  struct stat st {};
  ASSERT_EQ(::stat((t.root / "home/job/work").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(MakeFolderInRoot, FollowsAnImagesLinkInsideItsRootOnly) {
  RootAndHost t;
  fs::create_directories(t.root / t.host.relative_path() / "home");
  fs::create_directories(t.root / "home");
  fs::create_symlink(t.host / "home", t.root / "home" / "job");
  const auto owner = ::geteuid();
  ASSERT_TRUE(make_folder_in_root(t.open_root().get(), "/home/job", 1000, 1000, true));
  struct stat host {};
  ASSERT_EQ(::stat((t.host / "home").c_str(), &host), 0);
  EXPECT_EQ(host.st_uid, owner);  // the host's folder is untouched
  if (owner == 0) {
    struct stat image {};
    ASSERT_EQ(::stat((t.root / t.host.relative_path() / "home").c_str(), &image), 0);
    EXPECT_EQ(image.st_uid, 1000u);  // the image's copy is the user's
  }
}

TEST(MakeFolderInRoot, ALinkToNothingIsAnErrorNamingThePath) {
  RootAndHost t;
  fs::create_directories(t.root / "home");
  fs::create_symlink(t.host / "home", t.root / "home" / "job");
  auto made = make_folder_in_root(t.open_root().get(), "/home/job", 1000, 1000, true);
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().message.find("/home/job"), std::string::npos) << made.error().message;
  EXPECT_TRUE(fs::is_empty(t.host / "home"));
}

TEST(ReadJobFile, RefusesLinksFifosAndDevicesAndBoundsTheSize) {
  TempDir dir;
  dir.write("events.jsonl", "{}\n");
  EXPECT_EQ(*read_job_file(dir.path(), "events.jsonl", 100), "{}\n");
  EXPECT_FALSE(read_job_file(dir.path(), "events.jsonl", 2));  // larger than the bound

  fs::create_symlink("/dev/zero", dir.path() / "zero");
  EXPECT_FALSE(read_job_file(dir.path(), "zero", 1 << 20));
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  auto fifo = read_job_file(dir.path(), "fifo", 1 << 20);  // returns at once: nobody writes it
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);
}

TEST(ReadCodeFile, ALinkOfTheJobsCodeNeverReadsAHostFile) {
  TempDir dir;
  const fs::path secret = dir.write("host/secret", "TOPSECRET\n");
  dir.write("code/lib/util.py", "x = 1\n");
  const fs::path code = dir.path() / "code";
  fs::create_symlink(secret, code / "train.py");               // absolute, out of the folder
  fs::create_symlink("../host/secret", code / "config.yaml");  // relative, out of the folder
  fs::create_symlink("lib/util.py", code / "util.py");         // inside: followed
  EXPECT_EQ(read_code_file(code, "util.py").value_or(""), "x = 1\n");
  EXPECT_EQ(read_code_file(code, "train.py"), std::nullopt);
  EXPECT_EQ(read_code_file(code, "config.yaml"), std::nullopt);
  EXPECT_EQ(read_code_file(code, "../host/secret"), std::nullopt);
  EXPECT_EQ(read_code_file(code, "lib/util.py", 3), std::nullopt);  // past its bound
}

TEST(ReadFile, OnlyRegularFiles) {
  EXPECT_FALSE(read_file("/dev/zero"));
  EXPECT_FALSE(read_file("/"));
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_file(dir.path() / "fifo"));
  EXPECT_EQ(read_file(dir.write("a.txt", "text")).value_or(""), "text");
}

TEST(NormalAbsolutePath, RefusesDotsEmptyPartsAndRelativePaths) {
  for (const char* good : {"/", "/a", "/home/job", "/a.b/..c"})
    EXPECT_TRUE(is_normal_absolute_path(good)) << good;
  for (const char* bad : {"", "a", "/a/", "//a", "/a//b", "/./a", "/a/..", "/../../tmp/x", "/a/../b"})
    EXPECT_FALSE(is_normal_absolute_path(bad)) << bad;
  EXPECT_FALSE(is_normal_absolute_path(std::string("/a\0b", 4)));
}

TEST(WalkJobTree, VisitsEveryEntryOnceWithoutFollowingALinkOut) {
  RootAndHost t;
  t.dir.write("host/home/secret", "host\n");
  t.dir.write("root/etc/a/b.txt", "b");
  fs::create_directory_symlink(t.host / "home", t.root / "etc" / "out");
  std::vector<std::string> seen;
  EXPECT_TRUE(walk_job_tree(
      t.root, 100, [&](const std::string& relative, const struct stat&) { seen.push_back(relative); }));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"etc", "etc/a", "etc/a/b.txt", "etc/out"}));
}

TEST(WalkJobTree, StopsAtItsBoundsAndSaysSo) {
  RootAndHost t;
  for (int i = 0; i < 10; ++i) t.dir.write("root/many/" + std::to_string(i), "");
  std::size_t visited = 0;
  EXPECT_FALSE(walk_job_tree(t.root, 5, [&](const std::string&, const struct stat&) { ++visited; }));
  EXPECT_EQ(visited, 5u);

  fs::path deep = t.host;
  for (int i = 0; i < kMaxWalkDepth + 5; ++i) deep /= "d";
  fs::create_directories(deep);
  int deepest = 0;
  EXPECT_FALSE(walk_job_tree(t.host, 1000000, [&](const std::string& relative, const struct stat&) {
    deepest = std::max<int>(deepest, static_cast<int>(std::count(relative.begin(), relative.end(), '/')) + 1);
  }));
  EXPECT_EQ(deepest, kMaxWalkDepth);
  EXPECT_FALSE(walk_job_tree(t.dir.path() / "missing", 10, [](const std::string&, const struct stat&) {}));
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

TEST(DisarmJobTree, ClearsSetIdBitsAndRemovesFifosAndSocketsWithoutFollowingALink) {
  RootAndHost t;
  t.dir.write("root/out/shell", "#!/bin/sh\n");
  t.dir.write("root/out/deep/sticky", "");
  t.dir.write("host/home/tool", "");
  ::chmod((t.root / "out/shell").c_str(), 06755);
  ::chmod((t.root / "out/deep/sticky").c_str(), 01644);
  ::chmod((t.root / "out/deep").c_str(), 02775);
  ::chmod((t.host / "home/tool").c_str(), 04755);  // the host's own, named by a link below
  fs::create_symlink(t.host / "home/tool", t.root / "out/tool");
  ASSERT_EQ(::mkfifo((t.root / "out/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mknodat(AT_FDCWD, (t.root / "out/socket").c_str(), S_IFSOCK | 0644, 0), 0);

  const Disarmed disarmed = disarm_job_tree(t.root, 100);
  EXPECT_TRUE(disarmed.whole);
  EXPECT_EQ(disarmed.modes, 3u);
  EXPECT_EQ(disarmed.removed, 2u);
  EXPECT_EQ(mode_of(t.root / "out/shell") & 07777, 0755u);
  EXPECT_EQ(mode_of(t.root / "out/deep/sticky") & 07777, 0644u);
  EXPECT_EQ(mode_of(t.root / "out/deep") & 07777, 0775u);
  EXPECT_EQ(mode_of(t.host / "home/tool") & 07777, 04755u);  // not followed
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root / "out/fifo")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root / "out/socket")));
  EXPECT_TRUE(fs::is_symlink(t.root / "out/tool"));
}

TEST(DisarmJobTree, RemovesDeviceNodes) {
  RootAndHost t;
  if (::mknod((t.root / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs CAP_MKNOD";
  EXPECT_EQ(disarm_job_tree(t.root, 100).removed, 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(t.root / "null")));
}

TEST(DisarmJobTree, SaysWhenItsBoundLeftEntriesUnlookedAt) {
  RootAndHost t;
  for (int i = 0; i < 10; ++i) t.dir.write("root/many/" + std::to_string(i), "");
  EXPECT_FALSE(disarm_job_tree(t.root, 5).whole);
  EXPECT_TRUE(disarm_job_tree(t.root, 100).whole);
}

}  // namespace
}  // namespace preflight
