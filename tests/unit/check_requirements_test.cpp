// Requirement pins against the image's distributions.
#include <gtest/gtest.h>

#include <map>

#include "check/requirements.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

TEST(CheckRequirements, SpecifiersAsPipReadsThem) {
  EXPECT_TRUE(check::satisfies("1.13.1", ">=1.10,<2"));
  EXPECT_FALSE(check::satisfies("1.13.0a0+gitunknown", "==1.13.1"));
  EXPECT_TRUE(check::satisfies("1.13.1", "==1.13.*"));
  EXPECT_FALSE(check::satisfies("1.14.0", "==1.13.*"));
  EXPECT_TRUE(check::satisfies("1.4.5", "~=1.4.2"));
  EXPECT_FALSE(check::satisfies("1.5.0", "~=1.4.2"));
  EXPECT_TRUE(check::satisfies("2.0", "!=1.0"));
  EXPECT_TRUE(check::satisfies("2.0", "@ weird")) << "unreadable: taken as met";
}

// Each line checked against the pytorch image's real pip 23.0.1, offline (docs/static-checks.md
// "Requirements as pip sees them offline"): pip installs nothing for an installed version that
// meets the specifier, pre-releases included.
TEST(CheckRequirements, InstalledPreReleasesAsPipJudgesThem) {
  const std::string torch = "1.13.0a0+gitunknown";
  EXPECT_EQ(check::specifier_holds(torch, ">=1.12"), true);
  EXPECT_EQ(check::specifier_holds(torch, "==1.13.*"), true);
  EXPECT_EQ(check::specifier_holds(torch, "==1.13.0a0"), true) << "a public specifier ignores +local";
  EXPECT_EQ(check::specifier_holds(torch, "<=1.13.0a0"), true);
  EXPECT_EQ(check::specifier_holds(torch, ">=1.13.0.dev0"), true);
  EXPECT_EQ(check::specifier_holds(torch, "===1.13.0a0+gitunknown"), true);
  EXPECT_EQ(check::specifier_holds(torch, ">=1.13"), false) << "1.13.0a0 comes before 1.13";
  EXPECT_EQ(check::specifier_holds(torch, "~=1.13.0"), false);
  EXPECT_EQ(check::specifier_holds(torch, "<1.13"), false) << "<V takes none of V's own pre-releases";
  EXPECT_EQ(check::specifier_holds(torch, ">1.13.0a0"), false) << ">V takes no V+local";
  EXPECT_EQ(check::specifier_holds(torch, "!=1.13.0a0"), false);
  EXPECT_EQ(check::specifier_holds(torch, ">=2.5"), false);
  EXPECT_EQ(check::specifier_holds("0.14.1a0", ">=0.14"), true);
  EXPECT_EQ(check::specifier_holds("0.0.0", ">=1.0"), false);
}

TEST(CheckRequirements, VersionsInPep440Order) {
  EXPECT_LT(check::compare_versions("1.0.dev0", "1.0a1"), 0);
  EXPECT_LT(check::compare_versions("1.0a1", "1.0b2"), 0);
  EXPECT_LT(check::compare_versions("1.0rc1", "1.0"), 0);
  EXPECT_LT(check::compare_versions("1.0", "1.0.post1"), 0);
  EXPECT_LT(check::compare_versions("1.0.post1.dev1", "1.0.post1"), 0);
  EXPECT_LT(check::compare_versions("1.0", "1.0+local"), 0);
  EXPECT_LT(check::compare_versions("1.0+abc", "1.0+1"), 0) << "numeric local parts sort above words";
  EXPECT_LT(check::compare_versions("9.0", "1!0.1"), 0) << "epoch first";
  EXPECT_EQ(check::compare_versions("1.13", "1.13.0"), 0);
  EXPECT_EQ(check::compare_versions("1.0-1", "1.0.post1"), 0);
  EXPECT_EQ(check::compare_versions("1.0.ALPHA.2", "1.0a2"), 0);
  EXPECT_EQ(check::specifier_holds("1.0.post1", ">1.0"), false);
  EXPECT_EQ(check::specifier_holds("1.0.post1", ">1.0.post0"), true);
  EXPECT_EQ(check::specifier_holds("1.4.5", "~=1.4.2"), true);
  EXPECT_EQ(check::specifier_holds("2.0", "~=1.4"), false);
  EXPECT_EQ(check::specifier_holds("1.9", "~=1.4"), true);
  EXPECT_EQ(check::specifier_holds("not a version", ">=1"), std::nullopt);
}

TEST(CheckRequirements, MarkersInTheImagesPython) {
  check::MarkerEnvironment env;
  env.python_full_version = "3.11.2";
  EXPECT_EQ(check::marker_holds("python_version < \"3.8\"", env), false);
  EXPECT_EQ(check::marker_holds("python_version >= '3.8' and sys_platform == 'linux'", env), true);
  EXPECT_EQ(check::marker_holds(
                "(os_name == 'nt' or platform_system == \"Linux\") and python_full_version != '3.11.1'", env),
            true);
  EXPECT_EQ(check::marker_holds("sys_platform == 'win32' or python_version == '3.11'", env), true);
  EXPECT_EQ(check::marker_holds("'linux' in sys_platform", env), true);
  EXPECT_EQ(check::marker_holds("extra == 'socks'", env), false);
  env.extra = "socks";
  EXPECT_EQ(check::marker_holds("extra == 'socks'", env), true);
  EXPECT_EQ(check::marker_holds("platform_release >= '5'", env), std::nullopt) << "the host's kernel";
  EXPECT_EQ(check::marker_holds("python_version <", env), std::nullopt);
}

TEST(CheckRequirements, RequirementLinesAsPipReadsThem) {
  auto r = check::parse_requirement("Pillow[avif] (>=9.0, <11) ; python_version >= \"3.8\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "Pillow");
  EXPECT_EQ(r->extras, std::vector<std::string>{"avif"});
  EXPECT_EQ(r->specifier, ">=9.0, <11");
  EXPECT_EQ(r->marker, "python_version >= \"3.8\"");
  auto hashed = check::parse_requirement("numpy==1.24.2 --hash=sha256:abc");
  ASSERT_TRUE(hashed);
  EXPECT_EQ(hashed->specifier, "==1.24.2");
  EXPECT_TRUE(check::parse_requirement("./vendor/tinymetrics")->local);
  EXPECT_TRUE(check::parse_requirement("wheels/x-0.1-py3-none-any.whl")->local);
  EXPECT_TRUE(check::parse_requirement("git+https://github.com/a/b@v1#egg=b")->remote);
  auto at = check::parse_requirement("b @ https://example.org/b-1.0.tar.gz");
  ASSERT_TRUE(at);
  EXPECT_TRUE(at->remote);
  EXPECT_EQ(at->name, "b");
  EXPECT_FALSE(check::parse_requirement("torch >= "));
}

TEST(CheckRequirements, FilesWithIncludesContinuationsAndOptions) {
  std::map<std::string, std::string> files = {
      {"/c/requirements.txt",
       "# training\n--index-url https://pypi.org/simple\n-r requirements/base.txt\n-c constraints.txt\n"
       "torch>=1.12 \\\n    --hash=sha256:abc\n-e .\nwandb  # logging\n${EXTRA_PACKAGE}\n"},
      {"/c/requirements/base.txt", "numpy>=1.20\n-rmissing.txt\n"}};
  auto read = check::read_requirements("/c/requirements.txt", [&](const std::string& path) {
    auto it = files.find(path);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  std::vector<std::string> got;
  for (const auto& r : read.requirements)
    got.push_back(r.text + " @" + r.where.file.generic_string() + ":" + std::to_string(r.where.line));
  EXPECT_EQ(got, (std::vector<std::string>{"numpy>=1.20 @/c/requirements/base.txt:1",
                                           "torch>=1.12 @/c/requirements.txt:5", ". @/c/requirements.txt:7",
                                           "wandb @/c/requirements.txt:8"}));
  EXPECT_EQ(read.unreadable,
            (std::vector<std::string>{"/c/requirements/missing.txt", "/c/requirements.txt:9"}));
  EXPECT_FALSE(read.no_index);
}

TEST(CheckRequirements, UnmetAsPipOfflineWouldFindThem) {
  auto index = check::parse_module_index(
      R"({"python": "3.11.2", "modules": [], "distributions": [
          {"name": "torch", "version": "1.13.0a0+gitunknown", "requires": ["typing-extensions"]},
          {"name": "typing_extensions", "version": "4.4.0"},
          {"name": "requests", "version": "2.28.1",
           "requires": ["idna<4,>=2.5", "PySocks!=1.5.7,>=1.5.6; extra == \"socks\""]},
          {"name": "idna", "version": "3.3"},
          {"name": "broken", "version": "1.0", "requires": ["absent>=1"]}]})",
      "test");
  ASSERT_TRUE(index.ok()) << index.error().str();
  auto unmet = [&](std::vector<std::string> lines, bool no_deps = false) {
    std::vector<check::Requirement> wanted;
    for (const auto& line : lines) wanted.push_back(*check::parse_requirement(line));
    std::vector<std::string> out;
    for (const auto& u : check::unmet_requirements(wanted, *index, no_deps))
      out.push_back(u.requirement.text + ": " + u.problem);
    return out;
  };
  EXPECT_TRUE(
      unmet({"torch>=1.12", "Typing-Extensions>=4", "requests", "dataclasses; python_version < '3.7'"})
          .empty());
  EXPECT_EQ(unmet({"torch>=2.5"}),
            std::vector<std::string>{"torch>=2.5: the image has torch 1.13.0a0+gitunknown"});
  EXPECT_EQ(unmet({"wandb"}), std::vector<std::string>{"wandb: the image has no distribution wandb"});
  EXPECT_EQ(
      unmet({"requests[socks]"}),
      std::vector<std::string>{
          "requests[socks]: which needs PySocks!=1.5.7,>=1.5.6; extra == \"socks\", and the image has no "
          "distribution PySocks"})
      << "pip installs an extra's dependencies";
  EXPECT_EQ(unmet({"broken"}).size(), 1u) << "a dependency the image lacks is downloaded too";
  EXPECT_TRUE(unmet({"broken"}, true).empty()) << "--no-deps";
}

TEST(CheckRequirements, PinsTheImageContradictsAreWarningsAtTheirLine) {
  testing::TempDir dir;
  dir.write("requirements.txt",
            "# training\ntorch==2.1.0\nnumpy>=1.20  # fine\nwandb==0.16\nPyYAML[libyaml]<6 ; python_version "
            ">= \"3.8\"\n");
  auto index = check::parse_module_index(
      R"({"python": "3.11.2", "modules": [], "distributions": [{"name": "torch", "version": "1.13.0a0+gitunknown"},
          {"name": "numpy", "version": "1.24.2"}, {"name": "PyYAML", "version": "6.0"}]})",
      "test");
  ASSERT_TRUE(index.ok());
  auto findings = testing::completed(check::requirement_findings(dir.path(), *index));
  ASSERT_EQ(findings.size(), 2u) << "wandb is not in the image: the import check speaks for it";
  EXPECT_EQ(findings[0].category, "Library Not Found");
  EXPECT_EQ(findings[0].severity, model::Severity::Warning);
  EXPECT_EQ(findings[0].location.str(), "requirements.txt:2");
  EXPECT_EQ(findings[0].stage, "init") << "the job starts with the image's version";
  EXPECT_NE(findings[0].message.find("asks for torch==2.1.0, and the image has torch 1.13.0a0+gitunknown"),
            std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[1].location.line, 5);
  EXPECT_TRUE(check::requirement_findings(dir.path(), *index, {"requirements.txt"}).empty())
      << "a file the setup step installs is the setup step's to check";
}

}  // namespace
}  // namespace preflight
