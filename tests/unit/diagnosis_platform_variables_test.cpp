// The table of variables that mean the same thing on different platforms: the shipped file
// loads, patterns match, and the equivalent a platform sets is found in the groups' order.
#include <gtest/gtest.h>

#include "diagnosis/attribution.hpp"
#include "diagnosis/platform_variables.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using diagnosis::PlatformVariables;

TEST(DiagnosisPlatformVariables, TheShippedTableLoads) {
  auto shipped =
      PlatformVariables::load(testing::source_dir() / "policies" / "rules" / "platform_variables.yaml");
  ASSERT_TRUE(shipped.ok()) << shipped.error().str();
  EXPECT_GE(shipped->groups().size(), 5u);
}

TEST(DiagnosisPlatformVariables, OneStarStandsForAnyText) {
  EXPECT_TRUE(diagnosis::variable_matches("AZURE_ML_OUTPUT_*", "AZURE_ML_OUTPUT_model"));
  EXPECT_TRUE(diagnosis::variable_matches("AIP_*_DATA_URI", "AIP_TRAINING_DATA_URI"));
  EXPECT_FALSE(diagnosis::variable_matches("AZURE_ML_OUTPUT_*", "AZURE_ML_OUTPUT_"))
      << "the star stands for something";
  EXPECT_FALSE(diagnosis::variable_matches("RANK", "LOCAL_RANK"));
}

TEST(DiagnosisPlatformVariables, FindsWhatThePlatformSetsInstead) {
  const auto& table = testing::shipped_policies().variables;
  const std::set<std::string> slurm = {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID", "PATH"};
  auto rank = table.equivalent("RANK", slurm);
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->name, "SLURM_PROCID");
  EXPECT_EQ(rank->meaning, "the process's global rank");
  EXPECT_EQ(table.equivalent("WORLD_SIZE", slurm)->name, "SLURM_NTASKS");
  auto model = table.equivalent("SM_MODEL_DIR", {"AZUREML_RUN_ID", "AZURE_ML_OUTPUT_model"});
  ASSERT_TRUE(model);
  EXPECT_EQ(model->name, "AZURE_ML_OUTPUT_model");
  EXPECT_FALSE(table.equivalent("RANK", {"PATH", "HOME"})) << "nothing of the group is set";
  EXPECT_FALSE(table.equivalent("MY_OWN_SETTING", slurm)) << "in no group";
}

TEST(DiagnosisPlatformVariables, AMalformedTableIsBadInputAtItsLine) {
  auto one_name = PlatformVariables::parse("groups:\n  - meaning: x\n    names: [A]\n", "t.yaml");
  ASSERT_FALSE(one_name.ok());
  EXPECT_NE(one_name.error().str().find("two names or more"), std::string::npos) << one_name.error().str();
  auto two_stars = PlatformVariables::parse("groups:\n  - meaning: x\n    names: [A_*_*, B]\n", "t.yaml");
  ASSERT_FALSE(two_stars.ok());
  EXPECT_NE(two_stars.error().str().find("t.yaml:3"), std::string::npos) << two_stars.error().str();
  EXPECT_FALSE(PlatformVariables::parse("groupz: []\n", "t.yaml").ok());
}

TEST(DiagnosisPlatformVariables, TheDryRunHintNamesTheEquivalent) {
  const auto& variables = testing::shipped_policies().variables;
  model::PlatformFacts facts;
  facts.platform = "slurm";
  facts.environment = {"SLURM_PROCID", "PATH"};
  auto difference = diagnosis::missing_env_var("RANK", "/usr/lib/python3.11/os.py", facts, variables);
  ASSERT_TRUE(difference);
  EXPECT_EQ(difference->hint.rfind("SLURM_PROCID holds the process's global rank on platform slurm", 0), 0u)
      << difference->hint;
  auto frozen = diagnosis::missing_env_var("RANK", "<frozen os>", facts, variables);
  ASSERT_TRUE(frozen) << "os is a frozen module from Python 3.11 on";
  EXPECT_EQ(frozen->hint, difference->hint);
  facts.environment = {"PATH"};
  auto plain = diagnosis::missing_env_var("RANK", "/usr/lib/python3.11/os.py", facts, variables);
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->hint.find("os.environ.get"), std::string::npos) << plain->hint;
}

}  // namespace
}  // namespace preflight
