// The code scans kept between commands (check/scan_cache.hpp): a scan of the same code in the
// same image is taken from the cache without a container; any change to what the scan depends
// on (a file's bytes, the entry, the image, the scanner) runs the scanner again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "check/code_scan.hpp"
#include "check/image_python.hpp"
#include "check/scan_cache.hpp"
#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "sandbox/runtime.hpp"
#include "test_support.hpp"

namespace preflight::check {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Plays scan.py: for each file of the request, a "file" whose `cuda` is the length of its text
// and whose `main` says whether it holds "__main__", so that a result shows which bytes it read;
// the entry's arguments come back as its parser's options. It counts the scans it ran.
class FakeScanner final : public sandbox::ContainerRuntime {
 public:
  int runs = 0;
  std::string python_version = "3.13.1";

  Result<sandbox::ContainerExit> run(const plan::RunPlan& plan, const fs::path&,
                                     const sandbox::LineSink& on_line, std::size_t) override {
    ++runs;
    EXPECT_EQ(plan.files.size(), 1U);
    const json request = json::parse(plan.files.at(0).content);
    json out = {{"python", python_version}, {"files", json::array()}};
    for (const auto& file : request["files"]) {
      const std::string text = file["text"];
      out["files"].push_back({{"path", file["path"]},
                              {"cuda", text.size()},
                              {"main", text.find("__main__") != std::string::npos}});
    }
    if (request["entry"].is_object()) {
      json options = json::array();
      for (const auto& arg : request["entry"]["args"]) options.push_back({{"flags", {arg}}});
      out["argparse"] = {{"file", request["entry"]["script"]}, {"options", options}};
    }
    on_line(model::OutputLine::Stream::Stdout, out.dump());
    return sandbox::ContainerExit{};
  }
};

class CheckScanCache : public ::testing::Test {
 protected:
  testing::TempDir dir;
  std::optional<testing::ScopedEnv> cache_env;
  FakeScanner scanner;
  image::UnpackedImage image;

  fs::path cache_dir() const { return dir.path() / "cache"; }
  fs::path code() const { return dir.path() / "code"; }

  void SetUp() override {
    cache_env.emplace("PREFLIGHT_CACHE", cache_dir().c_str());  // the scanner's container folders
    image.ref = "pytorch";
    image.digest = "sha256:" + std::string(64, 'c');
    image.rootfs = in_cache(image.digest);
    dir.write("code/train.py", "import torch\nif __name__ == \"__main__\":\n    pass\n");
    dir.write("code/models/net.py", "import torch.nn as nn\n");
  }

  // An image root as the digest-keyed cache holds it, with a python3 on its PATH.
  fs::path in_cache(const std::string& digest) const {
    const fs::path root = image::RootfsCache(cache_dir()).entry_dir(digest) / image::cache_names::kRootfs;
    dir.write(fs::relative(root / "usr/bin/python3", dir.path()).string(), "");
    return root;
  }

  Result<CodeScan> scan(const image::UnpackedImage& of_image, const std::optional<EntryPoint>& entry) {
    auto python = ImagePython::find(of_image.rootfs, {}, scanner);
    EXPECT_TRUE(python);
    if (!python) return Error::runtime("no python");
    return scan_code(*python, code(), python_files(code()), entry,
                     ScanCache::of_image(of_image, cache_dir()));
  }
  Result<CodeScan> scan(const std::optional<EntryPoint>& entry = std::nullopt) { return scan(image, entry); }

  std::size_t kept_scans() const {
    std::size_t files = 0;
    std::error_code ec;
    for (fs::directory_iterator it(cache_dir() / "scans", ec), end; !ec && it != end; it.increment(ec))
      files += it->is_regular_file() && it->path().extension() == ".json";
    return files;
  }
};

int cuda_of(const CodeScan& scan, const std::string& path) {
  for (const auto& file : scan.files)
    if (file.path == path) return file.cuda_line;
  return -1;
}

TEST_F(CheckScanCache, TheSameCodeInTheSameImageIsScannedOnce) {
  auto first = scan();
  ASSERT_TRUE(first) << first.error().message;
  auto second = scan();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(scanner.runs, 1);
  EXPECT_EQ(second->python_version, "3.13.1");
  ASSERT_EQ(second->files.size(), 2U);
  EXPECT_EQ(cuda_of(*second, "train.py"), cuda_of(*first, "train.py"));
  EXPECT_TRUE(second->files[1].main_guard);  // models/net.py, then train.py
  EXPECT_EQ(kept_scans(), 1U);
}

TEST_F(CheckScanCache, AFileChangedInPlaceIsScannedAgainEvenWithItsSizeAndTimeKept) {
  ASSERT_TRUE(scan());
  const fs::path train = code() / "train.py";
  const auto written = fs::last_write_time(train);
  const auto size = fs::file_size(train);
  dir.write("code/train.py", "import torch\nif __name__ == \"__MAIN__\":\n    pass\n");  // same length
  fs::last_write_time(train, written);
  ASSERT_EQ(fs::file_size(train), size);
  auto again = scan();
  ASSERT_TRUE(again);
  EXPECT_EQ(scanner.runs, 2);
  EXPECT_FALSE(again->files[1].main_guard);  // what the file says now
}

TEST_F(CheckScanCache, AFileAddedOrRemovedIsScannedAgain) {
  ASSERT_TRUE(scan());
  dir.write("code/data.py", "DATA = '/data'\n");
  auto added = scan();
  ASSERT_TRUE(added);
  EXPECT_EQ(scanner.runs, 2);
  EXPECT_EQ(added->files.size(), 3U);
  fs::remove(code() / "data.py");
  fs::remove(code() / "models/net.py");
  auto removed = scan();
  ASSERT_TRUE(removed);
  EXPECT_EQ(scanner.runs, 3);
  EXPECT_EQ(removed->files.size(), 1U);
}

TEST_F(CheckScanCache, AnotherEntryOrArgumentIsScannedAgain) {
  ASSERT_TRUE(scan(EntryPoint{"train.py", {"--epochs"}, 1}));
  ASSERT_TRUE(scan(EntryPoint{"train.py", {"--epochs"}, 1}));
  EXPECT_EQ(scanner.runs, 1);
  auto other_args = scan(EntryPoint{"train.py", {"--lr"}, 1});
  ASSERT_TRUE(other_args);
  EXPECT_EQ(scanner.runs, 2);
  ASSERT_TRUE(other_args->argparse);
  EXPECT_EQ(other_args->argparse->options.at(0).flags, std::vector<std::string>{"--lr"});
  ASSERT_TRUE(scan(EntryPoint{"models/net.py", {"--lr"}, 1}));
  ASSERT_TRUE(scan(std::nullopt));
  EXPECT_EQ(scanner.runs, 4);
}

TEST_F(CheckScanCache, AnotherImageIsScannedAgain) {
  ASSERT_TRUE(scan());
  image::UnpackedImage other = image;
  other.digest = "sha256:" + std::string(64, 'd');
  other.rootfs = in_cache(other.digest);
  scanner.python_version = "3.12.0";
  auto in_other = scan(other, std::nullopt);
  ASSERT_TRUE(in_other);
  EXPECT_EQ(scanner.runs, 2);
  EXPECT_EQ(in_other->python_version, "3.12.0");
}

TEST_F(CheckScanCache, ARootfsFolderIsScannedEveryTime) {
  // A rootfs: folder's digest names the folder, not its files: its interpreter can change.
  image::UnpackedImage folder = image;
  folder.rootfs = dir.path() / "my-root";
  dir.write("my-root/usr/bin/python3", "");
  EXPECT_FALSE(ScanCache::of_image(folder, cache_dir()));
  ASSERT_TRUE(scan(folder, std::nullopt));
  ASSERT_TRUE(scan(folder, std::nullopt));
  EXPECT_EQ(scanner.runs, 2);
  EXPECT_EQ(kept_scans(), 0U);
}

TEST_F(CheckScanCache, TheKeyCoversTheScannerTheInterpreterAndTheImage) {
  const ScanCache cache(cache_dir() / "scans", image.digest);
  const std::string key = cache.key("program", "/usr/bin/python3", "{}");
  EXPECT_EQ(key, cache.key("program", "/usr/bin/python3", "{}"));
  EXPECT_NE(key, cache.key("program 2", "/usr/bin/python3", "{}"));
  EXPECT_NE(key, cache.key("program", "/usr/bin/python", "{}"));
  EXPECT_NE(key, cache.key("program", "/usr/bin/python3", "{ }"));
  EXPECT_NE(key, ScanCache(cache_dir() / "scans", "sha256:" + std::string(64, 'd'))
                     .key("program", "/usr/bin/python3", "{}"));
  // Fields are delimited: moving bytes from one to the next is another key.
  EXPECT_NE(cache.key("ab", "c", "{}"), cache.key("a", "bc", "{}"));
}

TEST_F(CheckScanCache, AKeptScanThatIsALinkOrGarbageIsScannedAgain) {
  ASSERT_TRUE(scan());
  fs::path kept;
  for (const auto& entry : fs::directory_iterator(cache_dir() / "scans")) kept = entry.path();
  // A link to another scan's output (here a copy of this one's, elsewhere) is not followed.
  fs::copy_file(kept, dir.path() / "elsewhere.json");
  fs::remove(kept);
  fs::create_symlink(dir.path() / "elsewhere.json", kept);
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 2);
  ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(kept)));  // replaced by the scan made
  dir.write(fs::relative(kept, dir.path()).string(), "{\"files\": [");
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 3);
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 3);
}

TEST_F(CheckScanCache, OnlyAScanThisUserKeptAndNoOneElseCanWriteIsTaken) {
  // In a cache shared between users, another one's entry could stand for code it never scanned.
  ASSERT_TRUE(scan());
  fs::path kept;
  for (const auto& entry : fs::directory_iterator(cache_dir() / "scans")) kept = entry.path();
  EXPECT_EQ(fs::status(kept).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(kept, fs::perms::group_write, fs::perm_options::add);
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 2);  // and replaced by the user's own
  EXPECT_EQ(fs::status(kept).permissions() & fs::perms::group_write, fs::perms::none);
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(kept.c_str(), 4242, 4242), 0);
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 3);
  ASSERT_TRUE(scan());
  EXPECT_EQ(scanner.runs, 3);
}

TEST_F(CheckScanCache, TheLeastRecentlyUsedScansGoPastTheBound) {
  const ScanCache cache(cache_dir() / "scans", image.digest, /*kept_scans=*/2);
  const std::string first = cache.key("p", "i", "1"), second = cache.key("p", "i", "2"),
                    third = cache.key("p", "i", "3");
  cache.store(first, "{}");
  cache.store(second, "{}");
  // The first is used after the second was made: the second is then the least recently used.
  const auto past = fs::file_time_type::clock::now() - std::chrono::minutes(10);
  fs::last_write_time(cache.dir() / (first + ".json"), past);
  fs::last_write_time(cache.dir() / (second + ".json"), past - std::chrono::minutes(1));
  EXPECT_TRUE(cache.find(first));
  cache.store(third, "{}");
  EXPECT_TRUE(cache.find(first));
  EXPECT_FALSE(cache.find(second));
  EXPECT_TRUE(cache.find(third));
  EXPECT_EQ(kept_scans(), 2U);
  EXPECT_FALSE(cache.find("../../etc/passwd"));  // not a key: never a path
}

}  // namespace
}  // namespace preflight::check
