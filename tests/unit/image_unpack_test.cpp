// Unpacking docker-archive and OCI-layout images made here with libarchive: whiteouts,
// opaque folders, links, compressed layers, refusal of escaping entries, corrupt archives,
// and the warm cache.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "image/layer_unpacker.hpp"
#include "image/oci_writer.hpp"
#include "image/recipe.hpp"
#include "image/rootfs_cache.hpp"
#include "image/tool_run.hpp"
#include "image_fixtures.hpp"
#include "test_support.hpp"

namespace preflight::image {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

using namespace fixtures;  // make_tar, make_docker_archive and the file helpers

// An OCI image layout with the layers as given (compressed or not) under tag "v1".
fs::path make_oci_layout(const fs::path& dir, const std::vector<std::string>& layers,
                         const std::vector<std::string>& uncompressed) {
  auto blob = [&](const std::string& content, const std::string& media_type) {
    std::string hex = sha256_hex(content);
    write_file(dir / "blobs" / "sha256" / hex, content);
    return json{{"mediaType", media_type}, {"digest", "sha256:" + hex}, {"size", content.size()}};
  };
  json layer_descriptors = json::array();
  for (const auto& layer : layers)
    layer_descriptors.push_back(blob(layer, "application/vnd.oci.image.layer.v1.tar+gzip"));
  json manifest = {{"schemaVersion", 2},
                   {"config", blob(config_json(uncompressed), "application/vnd.oci.image.config.v1+json")},
                   {"layers", layer_descriptors}};
  json descriptor = blob(manifest.dump(), "application/vnd.oci.image.manifest.v1+json");
  descriptor["annotations"] = {{"org.opencontainers.image.ref.name", "v1"}};
  write_file(dir / "index.json", json{{"schemaVersion", 2}, {"manifests", {descriptor}}}.dump());
  write_file(dir / "oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  return dir;
}

class ImageUnpack : public ::testing::Test {
 protected:
  Result<UnpackedImage> resolve(const std::string& text) {
    auto ref = parse_image_ref(text, work_.path());
    if (!ref) return ref.error();
    ImageStore store(cache_.path(), work_.path() / "recipes");
    return store.resolve(*ref, nullptr);
  }
  // Nothing of a failed unpack may stay in the cache.
  void expect_cache_clean() {
    fs::path rootfs = cache_.path() / "rootfs";
    if (!fs::exists(rootfs)) return;
    EXPECT_TRUE(fs::is_empty(rootfs)) << fs::directory_iterator(rootfs)->path();
  }
  // Nothing of an unpack or a prune is left half done.
  void expect_no_temporaries() {
    std::error_code ec;
    for (fs::directory_iterator it(cache_.path() / "rootfs", ec), end; !ec && it != end; it.increment(ec))
      EXPECT_NE(it->path().filename().string().rfind(".tmp-", 0), 0u) << it->path();
  }
  testing::TempDir work_, cache_;
};

std::vector<std::string> two_layers_with_whiteouts(Compression first, Compression second) {
  std::string lower = make_tar({{"./", 'd'},
                                {"./etc/", 'd'},
                                {"./etc/keep.conf", 'f', "keep"},
                                {"./etc/gone.conf", 'f', "gone"},
                                {"./opaque/", 'd'},
                                {"./opaque/old", 'f', "old"},
                                {"./opaque/sub/", 'd'},
                                {"./opaque/sub/older", 'f', "older"},
                                {"./bin/", 'd'},
                                {"./bin/tool", 'f', "#!/bin/sh\n", 0755},
                                {"./bin/alias", 'h', "./bin/tool"},
                                {"./usr/", 'd'},
                                {"./usr/lib/", 'd'},
                                {"./lib", 'l', "usr/lib"}},
                               first);
  std::string upper = make_tar({{"etc/.wh.gone.conf", 'f'},
                                {"opaque/new", 'f', "new"},
                                {"opaque/.wh..wh..opq", 'f'},
                                {"lib/libnew.so", 'f', "elf"},
                                {"etc/added", 'f', "added", 0600}},
                               second);
  return {lower, upper};
}

TEST_F(ImageUnpack, OciLayoutAppliesWhiteoutsOpaqueDirsAndLinks) {
  auto layers = two_layers_with_whiteouts(Compression::Gzip, Compression::Zstd);
  auto plain = two_layers_with_whiteouts(Compression::None, Compression::None);
  make_oci_layout(work_.path() / "layout", layers, plain);
  auto image = resolve("oci:layout:v1");
  ASSERT_TRUE(image.ok()) << image.error().str();
  const fs::path& root = image->rootfs;

  EXPECT_EQ(read_file(root / "etc/keep.conf"), "keep");
  EXPECT_FALSE(fs::exists(root / "etc/gone.conf"));
  EXPECT_FALSE(fs::exists(root / "etc/.wh.gone.conf"));
  EXPECT_EQ(read_file(root / "opaque/new"), "new");
  EXPECT_FALSE(fs::exists(root / "opaque/old"));
  EXPECT_FALSE(fs::exists(root / "opaque/sub"));
  EXPECT_FALSE(fs::exists(root / "opaque/.wh..wh..opq"));
  // Written through an in-root symlink: lands at its target.
  EXPECT_TRUE(fs::is_symlink(root / "lib"));
  EXPECT_EQ(read_file(root / "usr/lib/libnew.so"), "elf");

  struct stat tool {
  }, alias{}, added{};
  ASSERT_EQ(::stat((root / "bin/tool").c_str(), &tool), 0);
  ASSERT_EQ(::stat((root / "bin/alias").c_str(), &alias), 0);
  EXPECT_EQ(tool.st_ino, alias.st_ino);
  EXPECT_EQ(tool.st_mode & 07777, 0755u);
  EXPECT_EQ(tool.st_mtime, 1700000000);
  ASSERT_EQ(::stat((root / "etc/added").c_str(), &added), 0);
  EXPECT_EQ(added.st_mode & 07777, 0600u);

  EXPECT_EQ(image->digest, "sha256:" + sha256_hex(config_json(plain)));
  EXPECT_EQ(image->config.user, "1000");
  EXPECT_EQ(image->config.working_dir, "/work");
  EXPECT_EQ(image->config.cmd, (std::vector<std::string>{"python", "main.py"}));
  EXPECT_EQ(image->config.env.size(), 2u);
}

TEST_F(ImageUnpack, OciLayoutUnknownTagListsTheTags) {
  auto plain = two_layers_with_whiteouts(Compression::None, Compression::None);
  make_oci_layout(work_.path() / "layout", plain, plain);
  auto image = resolve("oci:layout:v9");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  EXPECT_NE(image.error().message.find("v1"), std::string::npos) << image.error().message;
}

TEST_F(ImageUnpack, DockerArchiveWithUncompressedAndGzipLayers) {
  auto plain = two_layers_with_whiteouts(Compression::None, Compression::None);
  auto mixed = two_layers_with_whiteouts(Compression::None, Compression::Gzip);
  make_docker_archive(work_.path() / "app.tar", mixed);
  auto image = resolve("docker-archive:app.tar");
  ASSERT_TRUE(image.ok()) << image.error().str();
  EXPECT_EQ(read_file(image->rootfs / "etc/keep.conf"), "keep");
  EXPECT_FALSE(fs::exists(image->rootfs / "etc/gone.conf"));
  EXPECT_FALSE(fs::exists(image->rootfs / "opaque/old"));
  EXPECT_EQ(read_file(image->rootfs / "usr/lib/libnew.so"), "elf");
  EXPECT_EQ(image->config.env[0], "PATH=/usr/bin:/bin");
  EXPECT_EQ(image->rootfs, cache_.path() / "rootfs" / ("sha256-" + digest_hex(image->digest)) / "rootfs");
}

// Nothing set-user-ID or set-group-ID in the cache (docs/security.md "job's files → the host's
// users"): the job's noNewPrivileges makes such bits inert inside, and on the host they would
// give whoever reaches the cache the ids of its owner. A folder keeps its set-group-ID bit.
TEST_F(ImageUnpack, NoSetUserOrGroupIdFileIsUnpacked) {
  const std::string big(1 << 20, 'x');  // past the fast path's size, written by libarchive
  make_docker_archive(work_.path() / "suid.tar", {make_tar({{"bin", 'd'},
                                                            {"bin/rootsh", 'f', "#!/bin/sh\n", 04755},
                                                            {"bin/groupsh", 'f', big, 02755},
                                                            {"var/mail", 'd', "", 02775}})});
  auto image = resolve("docker-archive:suid.tar");
  ASSERT_TRUE(image.ok()) << image.error().str();
  EXPECT_EQ(fs::status(image->rootfs / "bin/rootsh").permissions(), static_cast<fs::perms>(0755));
  EXPECT_EQ(fs::status(image->rootfs / "bin/groupsh").permissions(), static_cast<fs::perms>(0755));
  struct stat mail {};
  ASSERT_EQ(::stat((image->rootfs / "var/mail").c_str(), &mail), 0);
  EXPECT_EQ(mail.st_mode & 07777, 02775u);
}

TEST_F(ImageUnpack, WarmResolveReturnsTheSameDigestWithoutUnpacking) {
  auto plain = two_layers_with_whiteouts(Compression::None, Compression::None);
  make_docker_archive(work_.path() / "app.tar", plain);
  auto first = resolve("docker-archive:app.tar");
  ASSERT_TRUE(first.ok()) << first.error().str();
  // A file the unpacker would never write: it survives only if nothing is unpacked again.
  write_file(first->rootfs / "sentinel", "still here");
  struct stat before {};
  ::stat(first->rootfs.c_str(), &before);

  auto second = resolve("docker-archive:" + (work_.path() / "app.tar").string());
  ASSERT_TRUE(second.ok()) << second.error().str();
  EXPECT_EQ(second->digest, first->digest);
  EXPECT_EQ(second->rootfs, first->rootfs);
  EXPECT_EQ(read_file(second->rootfs / "sentinel"), "still here");
  struct stat after {};
  ::stat(second->rootfs.c_str(), &after);
  EXPECT_EQ(before.st_ino, after.st_ino);
}

void expect_refused(const Result<UnpackedImage>& image, const std::string& archive, const std::string& layer,
                    const std::string& entry) {
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  const std::string& message = image.error().message;
  EXPECT_NE(message.find(archive), std::string::npos) << message;
  EXPECT_NE(message.find(layer), std::string::npos) << message;
  EXPECT_NE(message.find("\"" + entry + "\""), std::string::npos) << message;
  EXPECT_NE(message.find("outside the image root"), std::string::npos) << message;
}

TEST_F(ImageUnpack, RefusesDotDotEntry) {
  fs::path outside = work_.path() / "escaped";
  std::string layer =
      make_tar({{"etc/", 'd'}, {"etc/../../../../../../" + outside.relative_path().string(), 'f', "x"}});
  make_docker_archive(work_.path() / "evil.tar", {layer});
  auto image = resolve("docker-archive:evil.tar");
  expect_refused(image, "evil.tar", "layer 1", "etc/../../../../../../" + outside.relative_path().string());
  EXPECT_FALSE(fs::exists(outside));
  expect_cache_clean();
}

TEST_F(ImageUnpack, RefusesAbsoluteEntry) {
  fs::path outside = work_.path() / "absolute";
  std::string layer = make_tar({{"ok", 'f', "fine"}, {outside.string(), 'f', "x"}});
  make_oci_layout(work_.path() / "layout", {layer}, {layer});
  auto image = resolve("oci:layout");
  expect_refused(image, "layout", "layer 1", outside.string());
  EXPECT_FALSE(fs::exists(outside));
  expect_cache_clean();
}

TEST_F(ImageUnpack, RefusesWritingThroughASymlinkPlantedByAnEarlierLayer) {
  fs::path outside = work_.path() / "target";
  fs::create_directories(outside);
  std::string lower = make_tar(
      {{"usr/", 'd'}, {"usr/escape", 'l', "../../../../../../../../" + outside.relative_path().string()}});
  std::string upper = make_tar({{"usr/escape/pwned", 'f', "x"}});
  make_docker_archive(work_.path() / "evil.tar", {lower, upper});
  auto image = resolve("docker-archive:evil.tar");
  expect_refused(image, "evil.tar", "layer 2", "usr/escape/pwned");
  EXPECT_FALSE(fs::exists(outside / "pwned"));
  expect_cache_clean();
}

TEST_F(ImageUnpack, RefusesAbsoluteSymlinkParentAndHardLinkOut) {
  fs::path outside = work_.path() / "abs";
  fs::create_directories(outside);
  std::string abs = make_tar({{"data", 'l', outside.string()}, {"data/file", 'f', "x"}});
  make_docker_archive(work_.path() / "abs.tar", {abs});
  expect_refused(resolve("docker-archive:abs.tar"), "abs.tar", "layer 1", "data/file");
  EXPECT_FALSE(fs::exists(outside / "file"));

  std::string link = make_tar({{"passwd", 'h', "../../../etc/passwd"}});
  make_docker_archive(work_.path() / "link.tar", {link});
  expect_refused(resolve("docker-archive:link.tar"), "link.tar", "layer 1", "passwd");
  expect_cache_clean();
}

TEST_F(ImageUnpack, CorruptArchiveIsBadInputAndLeavesNothing) {
  std::string layer =
      make_tar({{"big", 'f', std::string(200000, 'a')}, {"after", 'f', "b"}}, Compression::Gzip);
  layer.resize(layer.size() / 2);  // truncated mid-stream
  make_oci_layout(work_.path() / "layout", {layer}, {layer});
  auto image = resolve("oci:layout");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  EXPECT_NE(image.error().message.find("layer 1"), std::string::npos) << image.error().message;
  EXPECT_NE(image.error().message.find("corrupt or truncated"), std::string::npos) << image.error().message;
  expect_cache_clean();

  write_file(work_.path() / "garbage.tar", "this is not a tar file at all");
  auto garbage = resolve("docker-archive:garbage.tar");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().exit_status(), 2);
  EXPECT_NE(garbage.error().message.find("garbage.tar"), std::string::npos) << garbage.error().message;
}

// A small archive that expands past the bound: the declared sizes are counted before a byte
// is written, and the unpack stops there with nothing left in the cache.
TEST_F(ImageUnpack, AnImagePastTheUnpackBoundIsRefusedAndLeavesNothing) {
  std::string layer = make_tar({{"weights.bin", 'f', std::string(3 << 20, '\0')}}, Compression::Gzip);
  EXPECT_LT(layer.size(), 20000u);
  make_docker_archive(work_.path() / "bomb.tar", {layer});
  ::setenv(kUnpackLimitVariable, "2Mi", 1);
  auto image = resolve("docker-archive:bomb.tar");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  EXPECT_NE(image.error().message.find("the image unpacks to more than 2.0 MiB of files"), std::string::npos)
      << image.error().message;
  EXPECT_NE(image.error().message.find("PREFLIGHT_IMAGE_LIMIT=2Gi"), std::string::npos)
      << image.error().message;
  expect_cache_clean();

  ::setenv(kUnpackLimitVariable, "lots", 1);
  auto malformed = resolve("docker-archive:bomb.tar");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().message,
            "PREFLIGHT_IMAGE_LIMIT: expected a size such as \"128Gi\", got \"lots\"");
  ::setenv(kUnpackLimitVariable, "4Mi", 1);
  EXPECT_TRUE(resolve("docker-archive:bomb.tar").ok());
  ::unsetenv(kUnpackLimitVariable);
}

TEST_F(ImageUnpack, TooManyEntriesAreRefused) {
  std::vector<Entry> entries;
  for (int i = 0; i < 5; ++i) entries.push_back({"f" + std::to_string(i), 'f', "x"});
  write_file(work_.path() / "layer.tar", make_tar(entries));
  fs::create_directories(work_.path() / "root");
  LayerUnpacker unpacker(work_.path() / "root", UnpackLimits{1 << 20, 4});
  Status status = unpacker.apply({work_.path() / "layer.tar", "", "layer 1"});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("more than 4 files, folders and links"), std::string::npos)
      << status.error().message;
}

// The cache stays under its bound by removing the least recently used images no one holds;
// an image in use is never removed, by the bound or by a prune.
TEST_F(ImageUnpack, TheCacheDropsUnusedImagesLeastRecentlyUsedFirstAndNeverOneInUse) {
  const std::string big(300000, 'a');
  for (const char* name : {"one", "two", "three"})
    make_docker_archive(work_.path() / (std::string(name) + ".tar"), {make_tar({{name, 'f', big + name}})});
  RootfsCache cache(cache_.path());
  ::setenv(kCacheLimitVariable, "700Ki", 1);  // room for two of them
  auto one = resolve("docker-archive:one.tar");
  ASSERT_TRUE(one.ok()) << one.error().str();
  const std::string one_digest = one->digest;
  auto two = resolve("docker-archive:two.tar");
  ASSERT_TRUE(two.ok()) << two.error().str();
  one = Error::runtime("released");  // no longer in use
  auto entries = cache.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].digest, one_digest);  // least recently used first
  EXPECT_EQ(entries[0].bytes, big.size() + 3);
  EXPECT_FALSE(entries[0].in_use);
  EXPECT_TRUE(entries[1].in_use);
  // Listing is not a use: an entry from before lock files stays without one.
  fs::remove(entries[0].dir / "lock");
  EXPECT_EQ(cache.entries()[0].digest, one_digest);
  EXPECT_FALSE(fs::exists(entries[0].dir / "lock"));

  auto three = resolve("docker-archive:three.tar");  // over the bound: "one" goes, "two" is held
  ASSERT_TRUE(three.ok()) << three.error().str();
  EXPECT_FALSE(cache.contains(one_digest));
  EXPECT_TRUE(cache.contains(two->digest));
  EXPECT_TRUE(fs::exists(two->rootfs / "two"));

  // A prune to nothing keeps what is held; once let go, it goes.
  EXPECT_TRUE(cache.prune(0).empty());
  two = Error::runtime("released");
  const auto removed = cache.prune(0);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_TRUE(cache.contains(three->digest));
  EXPECT_EQ(cache.entries().size(), 1u);

  ::setenv(kCacheLimitVariable, "a lot", 1);
  EXPECT_FALSE(resolve("docker-archive:one.tar").ok());
  ::unsetenv(kCacheLimitVariable);
  expect_no_temporaries();
}

TEST_F(ImageUnpack, MissingArchiveIsBadInput) {
  auto image = resolve("docker-archive:nope.tar");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  EXPECT_NE(image.error().message.find("nope.tar"), std::string::npos);
}

TEST_F(ImageUnpack, RootfsFolderIsUsedInPlaceWithAStableIdentity) {
  write_file(work_.path() / "root/bin/sh", "");
  auto first = resolve("rootfs:root");
  ASSERT_TRUE(first.ok()) << first.error().str();
  EXPECT_EQ(first->rootfs, fs::canonical(work_.path() / "root"));
  EXPECT_EQ(digest_hex(first->digest).size(), 64u);
  auto second = resolve("rootfs:" + (work_.path() / "root").string());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->digest, second->digest);
  EXPECT_FALSE(fs::exists(cache_.path() / "rootfs"));
}

TEST_F(ImageUnpack, BuiltinImageWithAnUpToDateBuildIsNotRebuilt) {
  // A recipe and a layout built "from it" (no mmdebstrap in unit tests): the recorded recipe
  // hash matches, so resolve uses the layout as it is.
  auto recipe_file = work_.write("recipes/tiny.yaml", "suite: bookworm\npackages: [python3]\n");
  auto recipe = load_recipe(recipe_file);
  ASSERT_TRUE(recipe.ok());
  write_file(work_.path() / "rootfs.tar", make_tar({{"bin/", 'd'}, {"bin/python3", 'f', "py", 0755}}));
  OciLayoutSpec spec;
  spec.config.env = {"PATH=/usr/bin:/bin"};
  spec.annotations[kRecipeHashAnnotation] = recipe->hash;
  auto digest = write_oci_layout(cache_.path() / "images" / "tiny", work_.path() / "rootfs.tar", spec);
  ASSERT_TRUE(digest.ok()) << digest.error().str();

  auto image = resolve("tiny");
  ASSERT_TRUE(image.ok()) << image.error().str();
  EXPECT_EQ(image->digest, *digest);
  EXPECT_EQ(read_file(image->rootfs / "bin/python3"), "py");
  EXPECT_EQ(image->config.env, spec.config.env);
}

TEST_F(ImageUnpack, WithoutSkopeoARegistryIsARuntimeErrorAndAStoreBadInput) {
  // A PATH without skopeo, whether or not this machine has it.
  testing::ScopedEnv path("PATH", work_.path().c_str());
  ASSERT_TRUE(find_program("skopeo").empty());
  auto image = resolve("docker://busybox:latest");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 3);
  EXPECT_NE(image.error().message.find("skopeo"), std::string::npos);
  for (const char* store : {"containers-storage:team/train:1", "team/train:1"}) {
    auto stored = resolve(store);
    ASSERT_FALSE(stored.ok()) << store;
    EXPECT_EQ(stored.error().exit_status(), 2) << store;
    EXPECT_NE(stored.error().message.find("needs skopeo, which is not installed"), std::string::npos)
        << stored.error().message;
  }
}

}  // namespace
}  // namespace preflight::image
