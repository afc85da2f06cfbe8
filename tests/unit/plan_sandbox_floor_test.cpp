// The sandbox a plan gets: the floor (no network, seccomp `default`) whatever the profile says,
// lowered only by what the user chose on the command line, with a note for each difference.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/run_plan.hpp"
#include "spec/job_spec.hpp"
#include "test_support.hpp"

namespace preflight::plan {
namespace {

using preflight::testing::TempDir;

spec::SeccompPolicy shipped_policy(const std::string& name) {
  auto policy = spec::load_seccomp_policy(name, preflight::testing::source_dir() / "policies" / "seccomp");
  if (!policy) throw std::runtime_error(policy.error().str());
  return *policy;
}

struct Planned {
  TempDir dir;
  RunPlan plan;

  // A job naming its own profile `profile_yaml`, planned with the user's `sandbox`.
  Planned(const std::string& profile_yaml, SandboxFloor sandbox) {
    dir.write("code/main.py", "print('hi')\n");
    const auto profile_file = dir.write("code/open.yaml", profile_yaml);
    auto job = spec::load_job(dir.write("code/job.yaml", "image: python\ncommand: python main.py\n"));
    auto profile = spec::load_platform(profile_file.string(),
                                       preflight::testing::source_dir() / "policies" / "platforms");
    if (!job || !profile) throw std::runtime_error("the test's job or profile does not load");
    PlanContext context{
        dir.path() / "run", "/src/emulator", "job-1", {}, {}, true, {}, std::move(sandbox), {}, {}};
    auto planned = make_plan(*job, *profile, {}, context);
    if (!planned) throw std::runtime_error(planned.error().str());
    plan = std::move(*planned);
  }

  bool noted(const std::string& text) const {
    return std::any_of(plan.notes.begin(), plan.notes.end(),
                       [&](const std::string& note) { return note.find(text) != std::string::npos; });
  }
};

constexpr const char* kOpenProfile = "name: open\nnetwork: true\nseccomp: unconfined\n";

TEST(PlanSandboxFloor, AProfileAskingForNetworkAndUnconfinedKeepsTheFloor) {
  Planned job(kOpenProfile, {false, shipped_policy("default"), {}});
  EXPECT_FALSE(job.plan.network);
  EXPECT_EQ(job.plan.seccomp.name, "default");
  EXPECT_EQ(job.plan.seccomp.otherwise_errno, 1);
  EXPECT_EQ(job.plan.facts.seccomp, "default");  // the policy that refuses a call, for its hint
  ASSERT_EQ(job.plan.notes.size(), 2u);
  EXPECT_EQ(job.plan.notes[0],
            (job.dir.path() / "code/open.yaml").string() +
                ":2:10: open's nodes have network; the dry run has none: pass --network to "
                "grant it (what the job downloads there fails here)");
  EXPECT_TRUE(
      job.noted("open.yaml:3:10: open runs its jobs under seccomp policy \"unconfined\"; the dry run "
                "keeps the floor, \"default\""));
  EXPECT_TRUE(job.noted("Pass --seccomp unconfined to emulate it"));
}

TEST(PlanSandboxFloor, OnlyTheUsersChoiceLowersItAndIsNoted) {
  Planned job(kOpenProfile, {true, shipped_policy("unconfined"), {}});
  EXPECT_TRUE(job.plan.network);
  EXPECT_EQ(job.plan.seccomp.name, "unconfined");
  ASSERT_EQ(job.plan.notes.size(), 2u);
  EXPECT_TRUE(job.noted("the job had the host's network (--network)"));
  EXPECT_TRUE(job.noted("the job ran under seccomp policy \"unconfined\" (--seccomp unconfined"));
  EXPECT_FALSE(job.noted("pass --network"));
}

TEST(PlanSandboxFloor, APlatformAtTheFloorHasNoNote) {
  Planned job("name: closed\nnetwork: false\nseccomp: default\n", {false, shipped_policy("default"), {}});
  EXPECT_FALSE(job.plan.network);
  EXPECT_TRUE(job.plan.notes.empty());
}

TEST(PlanSandboxFloor, AFailureOnlyTheFloorCausedIsAWarningThatSaysWhatWasWithheld) {
  TempDir dir;
  auto profile = spec::load_platform(dir.write("open.yaml", kOpenProfile).string(),
                                     preflight::testing::source_dir() / "policies" / "platforms");
  ASSERT_TRUE(profile.ok()) << profile.error().str();
  const auto failures = [] {
    std::vector<model::Finding> findings(4);
    findings[0].rule = "network-unavailable", findings[0].message = "URLError: <urlopen error [Errno -3]>";
    findings[1].rule = "pip-no-network";
    findings[2].rule = "syscall-refused-by-seccomp";
    findings[3].rule = "path-not-found";  // the job's own failure, whatever the sandbox
    return findings;
  };
  auto floor = failures();
  soften_withheld(floor, *profile, {false, shipped_policy("default"), {}});
  for (int i : {0, 1, 2}) EXPECT_EQ(floor[i].severity, model::Severity::Warning) << floor[i].rule;
  EXPECT_EQ(floor[3].severity, model::Severity::Error);
  EXPECT_EQ(floor[0].message,
            "open's nodes have network, which the dry run withholds, and the job needed it here: URLError: "
            "<urlopen error [Errno -3]>");
  EXPECT_NE(floor[0].hint.find("Pass --network"), std::string::npos) << floor[0].hint;
  EXPECT_NE(floor[2].hint.find("Pass --seccomp unconfined"), std::string::npos) << floor[2].hint;

  // With what the user granted, a failure is the job's again; so on a platform without network.
  auto granted = failures();
  soften_withheld(granted, *profile, {true, shipped_policy("unconfined"), {}});
  for (const auto& finding : granted) EXPECT_EQ(finding.severity, model::Severity::Error) << finding.rule;
  auto philly = spec::load_platform("philly", preflight::testing::source_dir() / "policies" / "platforms");
  ASSERT_TRUE(philly.ok());
  auto closed = failures();
  soften_withheld(closed, *philly, {false, shipped_policy("default"), {}});
  for (const auto& finding : closed) EXPECT_EQ(finding.severity, model::Severity::Error) << finding.rule;
}

TEST(PlanSandboxFloor, ACallOfAnAbiTheFilterWithheldIsAWarningWhateverThePlatformRuns) {
  auto philly = spec::load_platform("philly", preflight::testing::source_dir() / "policies" / "platforms");
  ASSERT_TRUE(philly.ok());
  std::vector<model::Finding> killed(1);
  killed[0].rule = "system-call-killed";
  killed[0].message = "the job was killed by SIGSYS (exit status 159)";
  auto answered = killed;
  soften_withheld(killed, *philly, {false, shipped_policy("default"), {}});
  EXPECT_EQ(killed[0].severity, model::Severity::Warning);
  EXPECT_NE(
      killed[0].message.find("a 32-bit call), which philly's runtime answers: the job was killed by SIGSYS"),
      std::string::npos)
      << killed[0].message;
  EXPECT_NE(killed[0].hint.find("Pass --seccomp unconfined to answer every ABI"), std::string::npos)
      << killed[0].hint;
  // Every ABI answered: the kill is the platform's filter's too, and the job's failure.
  soften_withheld(answered, *philly, {false, shipped_policy("default"), compat_abis()});
  EXPECT_EQ(answered[0].severity, model::Severity::Error);
}

}  // namespace
}  // namespace preflight::plan
