// Start-up lint: setup and command lines against the platform's user and network.
#include <gtest/gtest.h>

#include <map>

#include "check/shell_lint.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

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
    EXPECT_EQ(f.phase, model::Phase::Static);
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

// philly's plan for a job whose code folder holds requirement files, and the pytorch image's
// distributions (as `preflight image inspect pytorch` lists them, in part).
struct OfflinePip {
  testing::TempDir dir;
  plan::RunPlan plan;
  check::ModuleIndex index;
  check::ShellFacts facts = philly();

  OfflinePip() {
    dir.write("code/requirements.txt", "-r requirements/base.txt\ntorch>=1.12\n");
    dir.write("code/requirements/base.txt", "numpy>=1.20,<2\nPillow>=9.0\n");
    dir.write("code/requirements-next.txt", "numpy>=1.20\ntorch>=2.5  # torch.compile\n");
    auto job = *spec::load_job(dir.write("code/job.yaml", "command: python train.py\n"));
    auto profile = *spec::load_platform("philly", testing::source_dir() / "policies" / "platforms");
    plan = *plan::make_plan(job, profile, {},
                            {dir.path() / "run", "/src/emulator", "job-1", {}, {}, false, {}, {}, {}, {}});
    index = *check::parse_module_index(
        R"({"python": "3.11.2", "modules": [], "distributions": [
            {"name": "torch", "version": "1.13.0a0+gitunknown"}, {"name": "numpy", "version": "1.24.2"},
            {"name": "Pillow", "version": "9.4.0"}, {"name": "pip", "version": "23.0.1"}]})",
        "test");
    facts.index = &index;
    facts.plan = &plan;
    const auto code = dir.path() / "code";
    facts.read = [code](const std::string& path) -> std::optional<std::string> {
      if (path.rfind("/philly/code/", 0) != 0) return std::nullopt;
      return preflight::read_file(code / path.substr(13));
    };
  }

  std::vector<model::Finding> lint(const std::string& text) const {
    return testing::completed(check::lint_shell({text, {"job.yaml", 4, 0}, "setup"}, facts));
  }
};

TEST(CheckShellLint, PipOfflineInstallsNothingTheImageAlreadySatisfies) {
  OfflinePip pip;
  EXPECT_TRUE(pip.lint("pip install --user -r requirements.txt").empty())
      << "torch 1.13.0a0 meets torch>=1.12 for an installed distribution";
  EXPECT_TRUE(pip.lint("pip install 'numpy>=1.20' Pillow").empty());
  EXPECT_TRUE(pip.lint("cd requirements && pip install --user -r base.txt").empty()) << "-r from the cd";
  auto findings = pip.lint("pip install --user -r requirements-next.txt");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "pip-needs-network");
  EXPECT_EQ(findings[0].category, "Library Not Found");
  EXPECT_EQ(findings[0].stage, "setup");
  EXPECT_EQ(findings[0].location.str(), "job.yaml:4");
  EXPECT_NE(findings[0].message.find(
                "needs torch>=2.5 (requirements-next.txt:2), and the image has torch 1.13.0a0+gitunknown"),
            std::string::npos)
      << findings[0].message;
}

TEST(CheckShellLint, RequirementFilesTheSetupInstalls) {
  OfflinePip pip;
  auto files = check::requirement_files_installed({"pip install --user -r requirements.txt\ncd requirements "
                                                   "&& python -m pip install --requirement=base.txt\n"
                                                   "pip install -r /tmp/elsewhere.txt",
                                                   {"job.yaml", 2, 0},
                                                   "setup"},
                                                  pip.plan);
  EXPECT_EQ(files, (std::vector<std::filesystem::path>{"requirements.txt", "requirements/base.txt"}));
}

TEST(CheckShellLint, PipOfflineStillNeedsTheIndexForWhatTheImageCannotGive) {
  OfflinePip pip;
  auto message = [&](const std::string& text) {
    auto findings = pip.lint(text);
    return findings.size() == 1 && findings[0].rule == "pip-needs-network" ? findings[0].message : "";
  };
  EXPECT_NE(message("pip install --user wandb").find("the image has no distribution wandb"),
            std::string::npos);
  EXPECT_NE(message("pip install --target /tmp/t numpy").find("ignore what the image has installed"),
            std::string::npos)
      << "--target, --force-reinstall, -I: pip fetches them again";
  EXPECT_NE(message("pip install --force-reinstall numpy").find("ignore"), std::string::npos);
  EXPECT_NE(message("cd $UNSET_DIR && pip install -r requirements.txt").find("the working folder is unknown"),
            std::string::npos);
  EXPECT_NE(message("pip install -r missing.txt").find("cannot be read"), std::string::npos);
  EXPECT_NE(message("cd /tmp && pip install -r requirements.txt").find("cannot be read"), std::string::npos)
      << "a file the job would have written itself";
}

}  // namespace
}  // namespace preflight
