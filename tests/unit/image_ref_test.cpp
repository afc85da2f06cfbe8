// Image references, recipes and the cache folder: pure parsing, no archives, no mmdebstrap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "image/image_store.hpp"
#include "image/recipe.hpp"
#include "image/tool_run.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::image {
namespace {

using Kind = ImageRef::Kind;
using testing::ScopedEnv;

TEST(ImageRef, BuiltinName) {
  auto ref = parse_image_ref("pytorch", "/jobs/a");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->kind, Kind::Builtin);
  EXPECT_EQ(ref->name, "pytorch");
  EXPECT_EQ(ref->text, "pytorch");
}

TEST(ImageRef, DockerArchiveRelativeToJobFolder) {
  auto ref = parse_image_ref("docker-archive:../images/app.tar", "/jobs/a");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->kind, Kind::DockerArchive);
  EXPECT_EQ(ref->path, "/jobs/images/app.tar");
}

TEST(ImageRef, OciLayoutWithAndWithoutTag) {
  auto tagged = parse_image_ref("oci:/srv/layouts/app:v2", "/jobs/a");
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(tagged->kind, Kind::OciLayout);
  EXPECT_EQ(tagged->path, "/srv/layouts/app");
  EXPECT_EQ(tagged->tag, "v2");

  auto plain = parse_image_ref("oci:layout", "/jobs/a");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->path, "/jobs/a/layout");
  EXPECT_EQ(plain->tag, "");

  // A colon in a folder name before the last '/' is part of the path, not a tag.
  auto colon_dir = parse_image_ref("oci:/srv/a:b/layout", "/");
  ASSERT_TRUE(colon_dir.ok());
  EXPECT_EQ(colon_dir->path, "/srv/a:b/layout");
  EXPECT_EQ(colon_dir->tag, "");
}

TEST(ImageRef, RootfsAndRegistry) {
  auto rootfs = parse_image_ref("rootfs:/var/lib/images/rootfs/", "/jobs/a");
  ASSERT_TRUE(rootfs.ok());
  EXPECT_EQ(rootfs->kind, Kind::Rootfs);
  EXPECT_EQ(rootfs->path, "/var/lib/images/rootfs/");

  auto registry = parse_image_ref("docker://pytorch/pytorch:2.1.0-runtime", "/jobs/a");
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ(registry->kind, Kind::Registry);
  EXPECT_EQ(registry->name, "pytorch/pytorch:2.1.0-runtime");
}

TEST(ImageRef, LocalStoresAndNamesTheyMayHave) {
  auto podman = parse_image_ref("containers-storage:team/train:latest", "/jobs/a");
  ASSERT_TRUE(podman.ok());
  EXPECT_EQ(podman->kind, Kind::LocalStore);
  EXPECT_EQ(podman->transport, "containers-storage");
  EXPECT_EQ(podman->name, "team/train:latest");
  auto docker = parse_image_ref("docker-daemon:nvcr.io/nvidia/pytorch:24.01-py3", "/jobs/a");
  ASSERT_TRUE(docker.ok());
  EXPECT_EQ(docker->kind, Kind::LocalStore);
  EXPECT_EQ(docker->transport, "docker-daemon");
  EXPECT_EQ(docker->name, "nvcr.io/nvidia/pytorch:24.01-py3");
  // A name with a registry, a path or a tag is looked up in the stores; a bare word stays a
  // built-in name.
  for (const char* text : {"ubuntu:22.04", "team/train", "registry.example.com:5000/team/digits:1.4",
                           "team/train@sha256:0123abcd"}) {
    auto named = parse_image_ref(text, "/jobs/a");
    ASSERT_TRUE(named.ok()) << text;
    EXPECT_EQ(named->kind, Kind::Named) << text;
    EXPECT_EQ(named->name, text);
  }
  auto missing = parse_image_ref("containers-storage:", "/jobs/a");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "image \"containers-storage:\": expected an image's name after containers-storage:, e.g. "
            "containers-storage:team/train:latest");
}

TEST(ImageRef, UnknownSchemeIsBadInputListingTheForms) {
  for (const char* text : {"", "docker://", "oci:", "Torch!", "team//train", "/srv/image",
                           "team/train:", "docker-daemon:Bad Name"}) {
    auto ref = parse_image_ref(text, "/jobs/a");
    ASSERT_FALSE(ref.ok()) << text;
    EXPECT_EQ(ref.error().exit_status(), 2) << text;
  }
  auto ref = parse_image_ref("Torch!", "/jobs/a");
  EXPECT_NE(ref.error().message.find("docker-archive:PATH"), std::string::npos) << ref.error().message;
  EXPECT_NE(ref.error().message.find("oci:PATH[:TAG]"), std::string::npos);
  EXPECT_NE(ref.error().message.find("rootfs:PATH"), std::string::npos);
  EXPECT_NE(ref.error().message.find("docker://REF"), std::string::npos);
}

TEST(ImageCache, DefaultCacheDirFollowsEnvironment) {
  {
    ScopedEnv cache("PREFLIGHT_CACHE", "/var/cache/pf");
    EXPECT_EQ(default_cache_dir(), "/var/cache/pf");
  }
  ScopedEnv cache("PREFLIGHT_CACHE", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), "/xdg/preflight");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/dev");
  EXPECT_EQ(default_cache_dir(), "/home/dev/.cache/preflight");
}

TEST(ImageRecipe, BuiltinRecipesLoadAndListed) {
  ImageStore store("/nonexistent-cache", testing::source_dir() / "images");
  auto names = store.builtin_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "pytorch"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "python"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "pytorch-1.13"), names.end());
  auto old = load_recipe(testing::source_dir() / "images" / "pytorch-1.13.yaml");
  ASSERT_TRUE(old.ok()) << old.error().str();
  EXPECT_EQ(old->suite, "bookworm");

  auto recipe = load_recipe(testing::source_dir() / "images" / "pytorch.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.error().str();
  EXPECT_EQ(recipe->suite, "trixie");
  EXPECT_NE(std::find(recipe->packages.begin(), recipe->packages.end(), "python3-torch"),
            recipe->packages.end());
  EXPECT_NE(std::find(recipe->packages.begin(), recipe->packages.end(), "python-is-python3"),
            recipe->packages.end());

  auto args = mmdebstrap_arguments(*recipe, "/tmp/out.tar");
  std::string joined;
  for (const auto& a : args) joined += a + "\n";
  EXPECT_NE(joined.find("--format=tar\n"), std::string::npos);
  EXPECT_NE(joined.find("EXTERNALLY-MANAGED"), std::string::npos);
  EXPECT_NE(joined.find("--include=python3,"), std::string::npos);
  EXPECT_EQ(args[args.size() - 2], "trixie");
  EXPECT_EQ(args.back(), "/tmp/out.tar");
}

TEST(ImageRecipe, UnknownKeyAndUnsafeRemoveAreBadInputWithLine) {
  testing::TempDir dir;
  auto file = dir.write("bad.yaml", "suite: bookworm\npackges: [python3]\n");
  auto recipe = load_recipe(file);
  ASSERT_FALSE(recipe.ok());
  EXPECT_EQ(recipe.error().exit_status(), 2);
  EXPECT_EQ(recipe.error().where.line, 2);
  EXPECT_NE(recipe.error().message.find("packges"), std::string::npos);

  auto unsafe = load_recipe(dir.write("unsafe.yaml", "suite: bookworm\nremove: ['/tmp; rm -rf /']\n"));
  ASSERT_FALSE(unsafe.ok());
  EXPECT_EQ(unsafe.error().where.line, 2);
}

// The edit hook, run by sh as mmdebstrap runs it ($1 the root), on a folder of this test's.
int run_edit_hooks(const ImageRecipe& recipe, const testing::TempDir& dir,
                   const std::filesystem::path& root) {
  int status = 0;
  for (const auto& arg : mmdebstrap_arguments(recipe, "/tmp/out.tar")) {
    const std::string prefix = "--customize-hook=";
    if (arg.rfind(prefix, 0) != 0 || arg.find("sed -i") == std::string::npos) continue;
    auto hook = dir.write("hook.sh", arg.substr(prefix.size()));
    status = std::system(("sh " + hook.string() + " " + root.string() + " 2>/dev/null").c_str());
    if (status != 0) return status;
  }
  return status;
}

TEST(ImageRecipe, AnEditReplacesItsTextLiterallyAndStopsTheBuildWhereTheTextIsMissing) {
  testing::TempDir dir;
  const std::string line = "Requires-Dist: sympy==1.13.1; python_version >= \"3.9\"";
  auto metadata = dir.write("root/usr/lib/torch-2.6.egg-info/PKG-INFO",
                            "Name: torch\n" + line + "\nRequires-Dist: sympy==1x13x1 & more\\n\n");
  auto recipe =
      load_recipe(dir.write("r.yaml",
                            "suite: trixie\nedit:\n"
                            "  - path: /usr/lib/torch-*.egg-info/PKG-INFO\n"
                            "    replace: 'Requires-Dist: sympy==1.13.1; python_version >= \"3.9\"'\n"
                            "    with: 'Requires-Dist: sympy>=1.13.1 & /\\; python_version >= \"3.9\"'\n"));
  ASSERT_TRUE(recipe.ok()) << recipe.error().str();
  ASSERT_EQ(recipe->edit.size(), 1U);
  ASSERT_EQ(run_edit_hooks(*recipe, dir, dir.path() / "root"), 0);
  // The text as written, and only it: '.' is no wildcard, and '&', '/', '\\' are kept.
  EXPECT_EQ(*read_file(metadata),
            "Name: torch\nRequires-Dist: sympy>=1.13.1 & /\\; python_version >= \"3.9\"\n"
            "Requires-Dist: sympy==1x13x1 & more\\n\n");
  // Applied again, the text is gone: the build stops rather than go on with the image unedited.
  EXPECT_NE(run_edit_hooks(*recipe, dir, dir.path() / "root"), 0);

  for (const char* bad :
       {"edit: [{path: /usr/lib/x, replace: \"it's\", with: y}]\n",
        "edit: [{path: relative/x, replace: a, with: b}]\n",
        "edit: [{path: /usr/lib/x, replace: '', with: b}]\n", "edit: [{path: /usr/lib/x, replace: a}]\n",
        "edit: [{path: /usr/lib/x, replace: a, with: b, mode: c}]\n"}) {
    auto refused = load_recipe(dir.write("bad.yaml", std::string("suite: trixie\n") + bad));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().exit_status(), 2) << bad;
    EXPECT_EQ(refused.error().where.line, 2) << bad;
  }
}

TEST(ImageRecipe, ABuildToolGetsOnlyTheStandardDescriptors) {
  // A descriptor Preflight inherited without close-on-exec (a test runner's, a shell's) would
  // push mmdebstrap's hook descriptor past 9, which dash cannot redirect to.
  const int inherited = ::dup2(2, 9);
  ASSERT_EQ(inherited, 9);
  auto run = run_tool("/bin/sh", {"-c", "ls /proc/$$/fd"}, "", nullptr);
  ::close(inherited);
  ASSERT_TRUE(run.ok()) << run.error().str();
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_EQ(run->tail, "  0\n  1\n  2\n");
}

TEST(ImageRecipe, HashChangesWithTheRecipe) {
  testing::TempDir dir;
  auto a = load_recipe(dir.write("a.yaml", "suite: bookworm\npackages: [python3]\n"));
  auto b = load_recipe(dir.write("b.yaml", "suite: bookworm\npackages: [python3, python3-pip]\n"));
  auto a2 = load_recipe(dir.write("c.yaml", "suite: bookworm\npackages: [python3]\n"));
  ASSERT_TRUE(a.ok() && b.ok() && a2.ok());
  EXPECT_NE(a->hash, b->hash);
  EXPECT_EQ(a->hash, a2->hash);
}

TEST(ImageStoreBuild, UnknownBuiltinNamesTheKnownOnes) {
  testing::TempDir cache;
  ImageStore store(cache.path(), testing::source_dir() / "images");
  auto ref = parse_image_ref("tensorflow", "/");
  ASSERT_TRUE(ref.ok());
  auto image = store.resolve(*ref, nullptr);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().exit_status(), 2);
  EXPECT_NE(image.error().message.find("pytorch"), std::string::npos) << image.error().message;
}

}  // namespace
}  // namespace preflight::image
