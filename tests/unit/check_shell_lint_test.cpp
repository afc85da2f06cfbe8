// Start-up lint: setup and command lines against the platform's user and network.
#include <gtest/gtest.h>

#include "check/shell_lint.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

check::ShellFacts philly(const char* pip = "23.0.1") {
  check::ShellFacts facts;
  facts.platform = "philly";
  facts.user = "job (uid 1000)";
  if (pip) facts.pip_version = pip;
  return facts;
}

std::vector<std::pair<std::string, int>> rules_and_lines(const std::string& text,
                                                         const check::ShellFacts& facts) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& f : check::lint_shell({text, {"job.yaml", 4, 0}, "setup"}, facts)) {
    EXPECT_EQ(f.phase, report::Phase::Static);
    EXPECT_EQ(f.stage, "setup");
    out.emplace_back(f.rule, f.location.line);
  }
  return out;
}

using Lines = std::vector<std::pair<std::string, int>>;

TEST(CheckShellLint, SudoAndSystemPackagesNeedRoot) {
  EXPECT_EQ(rules_and_lines(
                "sudo apt-get install -y libsndfile1\n# comment\nexport X=1 && sudo -H pip install --user x",
                philly()),
            (Lines{{"sudo-on-platform", 4},
                   {"system-package-install", 4},
                   {"sudo-on-platform", 6},
                   {"pip-needs-network", 6}}));
}

TEST(CheckShellLint, PipNeedsTheNetworkUnlessItInstallsLocalFiles) {
  EXPECT_EQ(rules_and_lines("pip install --user -r requirements.txt", philly()),
            (Lines{{"pip-needs-network", 4}}));
  EXPECT_EQ(rules_and_lines("python -m pip install --user tinymetrics==0.2", philly()),
            (Lines{{"pip-needs-network", 4}}));
  EXPECT_TRUE(
      rules_and_lines("pip install --user --no-index --find-links wheels/ -r requirements.txt", philly())
          .empty());
  EXPECT_TRUE(
      rules_and_lines("pip install --user ./vendor/tinymetrics-0.2-py3-none-any.whl -e .", philly()).empty());
  auto online = philly();
  online.network = true;
  EXPECT_TRUE(rules_and_lines("pip install --user torchmetrics", online).empty());
}

TEST(CheckShellLint, PipIntoSitePackagesNeedsRootOnlyWithoutTheUserFallback) {
  auto online = philly();
  online.network = true;
  EXPECT_TRUE(rules_and_lines("pip install x", online).empty()) << "pip 23 falls back to --user";
  EXPECT_EQ(rules_and_lines("pip install --no-user x", online), (Lines{{"pip-system-install", 4}}));
  auto old_pip = philly("9.0.1");
  old_pip.network = true;
  EXPECT_EQ(rules_and_lines("pip3 install x", old_pip), (Lines{{"pip-system-install", 4}}));
  EXPECT_EQ(rules_and_lines("pip install x", philly(nullptr)), (Lines{{"pip-not-in-image", 4}}));
}

TEST(CheckShellLint, DownloadsNeedTheNetwork) {
  EXPECT_EQ(
      rules_and_lines("wget -q https://x/data.tar.gz && tar xf data.tar.gz\ngit clone https://github.com/a/b",
                      philly()),
      (Lines{{"download-needs-network", 4}, {"download-needs-network", 5}}));
  EXPECT_TRUE(rules_and_lines("tar xf data.tar.gz; git status", philly()).empty());
}

TEST(CheckShellLint, ScriptsTheCommandRuns) {
  testing::TempDir dir;
  dir.write("scripts/start.sh", "python train.py\n");
  auto scripts = check::scripts_run_by("bash scripts/start.sh --fast && sh missing.sh", dir.path());
  ASSERT_EQ(scripts.size(), 1u);
  EXPECT_EQ(scripts[0], "scripts/start.sh");
}

}  // namespace
}  // namespace preflight
