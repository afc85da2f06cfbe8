// Which of an image's sealed folders a run binds over its overlay root, and the binds themselves:
// never for a job run as root, never where the runtime or Preflight mounts, makes or enters
// something (as the image's links lead), and undone when the run ends.
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sandbox/sealed_binds.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace {
namespace fs = std::filesystem;

class SealedBindChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("root/usr/lib/python3/dist-packages/torch/__init__.py", "");
    dir_.write("root/usr/bin/python3", "");
    dir_.write("root/usr/src/README", "");
    dir_.write("root/etc/hosts", "");
    fs::create_directories(root() / "opt");
    fs::create_symlink("usr/lib", root() / "lib");
    fs::create_symlink("/usr/lib/data", root() / "data");  // dangling: the runtime would make it
    plan_.process.uid = 1000;
    plan_.image_sealed = {{"etc", 2000},     {"opt", 5},        {"usr", 9000},
                          {"usr/bin", 1500}, {"usr/lib", 7000}, {"usr/src", 10}};
  }
  fs::path root() const { return dir_.path() / "root"; }
  std::vector<std::string> choose(std::vector<std::string> extra) const {
    std::vector<std::string> touched{"/proc", "/dev", "/dev/pts", "/dev/shm", "/sys", "/workspace"};
    touched.insert(touched.end(), extra.begin(), extra.end());
    return sealed_folders_to_bind(plan_, root(), touched);
  }
  using Folders = std::vector<std::string>;

  testing::TempDir dir_;
  plan::RunPlan plan_;
};

TEST_F(SealedBindChoice, BindsTheLargeFoldersNothingTouchesAndLeavesAFoldersChildrenToIt) {
  EXPECT_EQ(choose({}), (Folders{"etc", "usr"}));
}

TEST_F(SealedBindChoice, NeverForAJobRunAsRoot) {
  plan_.process.uid = 0;
  EXPECT_TRUE(choose({}).empty());
}

TEST_F(SealedBindChoice, AFolderWhereSomethingIsMountedOrMadeStaysInTheOverlayAndItsOtherChildrenAreBound) {
  EXPECT_EQ(choose({"/usr/src/app"}), (Folders{"etc", "usr/bin", "usr/lib"}));
  EXPECT_EQ(choose({"/usr"}), (Folders{"etc"}));
  EXPECT_EQ(choose({"/etc/hosts"}), (Folders{"usr"}));  // a file mounted over the image's own
}

TEST_F(SealedBindChoice, APlaceIsResolvedAsTheImagesLinksLead) {
  // /lib is usr/lib: a mount there makes its folder in usr/lib.
  EXPECT_EQ(choose({"/lib/python3/extra"}), (Folders{"etc", "usr/bin"}));
  EXPECT_EQ(choose({"/lib/python3/not-yet/made"}), (Folders{"etc", "usr/bin"}));
}

TEST_F(SealedBindChoice, APlaceThatCannotBeToldKeepsEverythingInTheOverlay) {
  EXPECT_TRUE(choose({"/data/x"}).empty());  // through a dangling link
  EXPECT_TRUE(choose({"/"}).empty());
  EXPECT_TRUE(choose({"/opt/../usr/x"}).empty());
  fs::create_symlink("/../../../../etc", root() / "escape");  // resolved in the root: its /etc
  EXPECT_EQ(choose({"/escape/x"}), (Folders{"usr"}));
}

TEST(SealedBindPlaces, AreTheConfigsMountsItsWorkingFolderAndTheUsersFolders) {
  plan::RunPlan plan;
  plan.user_dirs = {{"/home/job", true}, {"/scratch", false}};
  const nlohmann::json config = {
      {"process", {{"cwd", "/workspace"}}},
      {"mounts",
       {{{"destination", "/proc"}}, {{"destination", "/workspace"}}, {{"destination", "/etc/hosts"}}}}};
  EXPECT_EQ(places_touched(config, plan), (std::vector<std::string>{"/proc", "/workspace", "/etc/hosts",
                                                                    "/workspace", "/home/job", "/scratch"}));
}

// The options of the mount at `path`, from this process's mount table.
std::string mount_options(const fs::path& path) {
  const auto table = read_file("/proc/self/mountinfo");
  if (!table) return "";
  std::string options;
  std::size_t at = 0;
  while (at < table->size()) {
    const std::string line = table->substr(at, table->find('\n', at) - at);
    at += line.size() + 1;
    const std::size_t point = line.find(' ', line.find(' ', line.find(' ', line.find(' ') + 1) + 1) + 1);
    const std::size_t end = line.find(' ', point + 1);
    if (line.substr(point + 1, end - point - 1) == path.string())
      options = line.substr(end + 1, line.find(' ', end + 1) - end - 1);
  }
  return options;
}

TEST(SealedBinds, BindTheImagesFolderNosuidAndNodevUntilTheyGo) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  testing::TempDir dir;
  dir.write("image/usr/lib/m.py", "image's");
  dir.write("image/etc/x", "");
  fs::create_directories(dir.path() / "root/usr");
  fs::create_directories(dir.path() / "root/elsewhere");
  fs::create_symlink("elsewhere", dir.path() / "root/etc");  // never bound through a link
  {
    SealedBinds binds;
    EXPECT_EQ(binds.mount(dir.path() / "image", dir.path() / "root", {"usr", "etc", "opt"}),
              std::vector<std::string>{"usr"});
    EXPECT_EQ(read_file(dir.path() / "root/usr/lib/m.py"), "image's");
    const std::string options = mount_options(dir.path() / "root/usr");
    EXPECT_NE(options.find("rw"), std::string::npos) << options;
    EXPECT_NE(options.find("nosuid"), std::string::npos) << options;
    EXPECT_NE(options.find("nodev"), std::string::npos) << options;
    EXPECT_TRUE(fs::is_empty(dir.path() / "root/elsewhere"));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "root/usr/lib"));
  EXPECT_EQ(mount_options(dir.path() / "root/usr"), "");
}

}  // namespace
}  // namespace preflight::sandbox
