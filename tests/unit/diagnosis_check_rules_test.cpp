// The check rules table (policies/rules/checks.yaml): mistakes in it are errors at their
// place, and the code's findings are completed from it.
#include <gtest/gtest.h>

#include <stdexcept>

#include "diagnosis/check_rules.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using diagnosis::CheckRules;

TEST(DiagnosisCheckRules, CompletesWhatTheCodeBuiltFromTheRow) {
  std::vector<model::Finding> findings(2);
  findings[0].rule = "tf-op-in-loop";
  findings[0].phase = model::Phase::Static;
  findings[1].rule = "path-not-found";  // a rule of failures.yaml, classified already
  findings[1].category = "Path Not Found";
  testing::shipped_policies().checks.complete(findings);
  EXPECT_EQ(findings[0].category, "Slow Input Pipeline");
  EXPECT_EQ(findings[0].dimension, "Deep Learning Specific");
  EXPECT_EQ(findings[0].root_cause, "Inappropriate Model Parameter/Structure");
  EXPECT_EQ(findings[0].stage, "train");
  EXPECT_EQ(findings[1].dimension, "") << "left as it was";
  model::Finding written;
  written.rule = "written-outside-outputs";
  testing::shipped_policies().checks.complete(written);
  EXPECT_EQ(written.phase, model::Phase::Dryrun);
  EXPECT_EQ(written.category, "Output Lost");
}

TEST(DiagnosisCheckRules, AnIdMissingFromTheTableIsAnInternalError) {
  model::Finding finding;
  finding.rule = "no-such-rule";
  EXPECT_THROW(testing::shipped_policies().checks.complete(finding), std::logic_error);
}

// The error of parsing `text` as checks.yaml, "" when it loads.
std::string load_error(const std::string& text) {
  auto table = CheckRules::parse(text, "checks.yaml", testing::shipped_policies().failures);
  return table ? "" : table.error().str();
}

TEST(DiagnosisCheckRules, MistakesAreErrorsAtTheirPlace) {
  const std::string row = "rules:\n  - id: sudo-on-platform\n    root_cause: Environment Difference\n";
  EXPECT_EQ(load_error(row + "    category: permission-denied\n    summary: sudo.\n"), "");
  EXPECT_EQ(load_error(row + "    category: permision-denied\n    summary: sudo.\n"),
            "checks.yaml:4:15: rules[0].category: unknown category \"permision-denied\"; did you mean "
            "\"permission-denied\"? (a category id of " +
                testing::shipped_policies().failures.file().string() + ")");
  EXPECT_NE(
      load_error(row + "    category: Permission Denied\n    summary: sudo.\n").find("checks.yaml:4:15: "),
      std::string::npos)
      << "by its id, not its name";
  EXPECT_EQ(load_error(row + "    category: permission-denied\n    summary: sudo.\n    sumary: x\n"),
            "checks.yaml:6:5: unknown key \"sumary\" in rules[0]; did you mean \"summary\"?");
  EXPECT_EQ(load_error(row + "    category: permission-denied\n    summary: sudo.\n" +
                       "  - {id: sudo-on-platform, category: permission-denied, root_cause: Environment "
                       "Difference, summary: again.}\n"),
            "checks.yaml:6:10: rules[1].id: rule id \"sudo-on-platform\" is already used on line 2");
  EXPECT_NE(load_error("rules:\n  - {id: path-not-found, category: path-not-found, root_cause: Environment "
                       "Difference, summary: x.}\n")
                .find("checks.yaml:2:10: rules[0].id: rule id \"path-not-found\" is a rule of "),
            std::string::npos)
      << "an id of failures.yaml would be two rules under one name";
  EXPECT_NE(load_error(row + "    category: permission-denied\n    summary: sudo.\n    stage: training\n")
                .find("checks.yaml:6:12: rules[0].stage: unknown stage \"training\""),
            std::string::npos);
  EXPECT_EQ(load_error(row + "    category: permission-denied\n"),
            "checks.yaml:2:5: rules[0]: missing \"summary\"");
}

}  // namespace
}  // namespace preflight
