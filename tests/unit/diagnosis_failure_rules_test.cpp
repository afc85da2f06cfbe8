// The rules file: the shipped one loads and covers the taxonomy; mistakes in a user's rules
// file are errors at their file:line:column.
#include <gtest/gtest.h>

#include <algorithm>

#include "diagnosis/failure_rules.hpp"
#include "test_support.hpp"

namespace preflight::diagnosis {
namespace {

FailureRules shipped() {
  auto rules = FailureRules::load(testing::source_dir() / "policies/rules/failures.yaml");
  EXPECT_TRUE(rules.ok()) << (rules.ok() ? "" : rules.error().str());
  return rules.ok() ? std::move(*rules) : FailureRules{};
}

TEST(DiagnosisFailureRules, ShippedFileLoads) {
  FailureRules rules = shipped();
  EXPECT_GE(rules.rules().size(), 40u);
  EXPECT_GE(rules.categories().size(), 20u);
}

TEST(DiagnosisFailureRules, ShippedFileDescribesEveryStudyCategoryWithARule) {
  FailureRules rules = shipped();
  for (const std::string& name : kStudyCategories) {
    const model::Category* category = rules.find_category(name);
    ASSERT_NE(category, nullptr) << name;
    EXPECT_FALSE(category->description.empty()) << name;
    EXPECT_FALSE(category->fix.empty()) << name;
    EXPECT_FALSE(rules.rules_for(name).empty()) << name << " has no rule";
  }
  for (const model::Category& category : rules.categories()) {
    // Found by inspecting the run (pipeline/outputs.cpp, pipeline/estimate.cpp), or by the
    // static checks alone.
    if (category.name == "Output Lost" || category.name == "Slow Input Pipeline" ||
        category.name == "Time Limit Exceeded")
      continue;
    EXPECT_FALSE(rules.rules_for(category.name).empty()) << category.name << " has no rule";
  }
}

TEST(DiagnosisFailureRules, ShippedDimensionsFollowTheStudy) {
  FailureRules rules = shipped();
  EXPECT_EQ(rules.find_category("GPU Out of Memory")->dimension, "Deep Learning Specific");
  EXPECT_EQ(rules.find_category("Path Not Found")->dimension, "Execution Environment");
  EXPECT_EQ(rules.find_category("Null Reference")->dimension, "General Code Error");
  EXPECT_EQ(rules.find_category("Corrupt Data")->dimension, "Data");
  EXPECT_EQ(rules.find_category("Shared Memory Exhausted")->dimension, "Execution Environment");
}

TEST(DiagnosisFailureRules, FindsCategoriesByNameOrIdIgnoringCase) {
  FailureRules rules = shipped();
  for (const char* spelling : {"path-not-found", "Path Not Found", "PATH_NOT_FOUND", "path not found"}) {
    const model::Category* category = rules.find_category(spelling);
    ASSERT_NE(category, nullptr) << spelling;
    EXPECT_EQ(category->name, "Path Not Found");
    EXPECT_EQ(category->id, "path-not-found");
  }
  EXPECT_EQ(rules.find_category("timeout-hang")->name, "Timeout/Hang");
  EXPECT_EQ(rules.find_category("no such category"), nullptr);
}

TEST(DiagnosisFailureRules, CategoryIdsAreSlugs) {
  EXPECT_EQ(model::category_id("GPU Out of Memory"), "gpu-out-of-memory");
  EXPECT_EQ(model::category_id("Timeout/Hang"), "timeout-hang");
}

constexpr const char* kHeader = R"(categories:
  Path Not Found:
    dimension: Execution Environment
    description: x
    fix: y
rules:
)";

Error bad(const std::string& rules_text) {
  auto rules = FailureRules::parse(std::string(kHeader) + rules_text, "rules.yaml");
  EXPECT_FALSE(rules.ok());
  return rules.ok() ? Error{} : rules.error();
}

TEST(DiagnosisFailureRules, AMinimalUserFileLoads) {
  auto rules = FailureRules::parse(std::string(kHeader) + R"(  - id: missing
    category: Path Not Found
    root_cause: Environment Difference
    retry: may_help
    severity: warning
    hint: "look for {{path}} and {{where}}; use ${{inputs.NAME}}"
    when: {message: 'not at (?P<where>\S+)', exception: [OSError, FileNotFoundError]}
)",
                                   "rules.yaml");
  ASSERT_TRUE(rules.ok()) << rules.error().str();
  ASSERT_EQ(rules->rules().size(), 1u);
  const FailureRule& rule = rules->rules()[0];
  EXPECT_EQ(rule.retry, model::Retry::MayHelp);
  EXPECT_EQ(rule.severity, model::Severity::Warning);
  EXPECT_EQ(rule.when.exceptions.size(), 2u);
  EXPECT_TRUE(rule.when.about_exception());
}

TEST(DiagnosisFailureRules, UnknownKeyIsLocatedWithASuggestion) {
  Error error = bad(R"(  - id: missing
    category: Path Not Found
    root_cause: Environment Difference
    when:
      mesage: 'x'
)");
  EXPECT_EQ(error.where.str(), "rules.yaml:11:7");
  EXPECT_NE(error.message.find("unknown key \"mesage\""), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("did you mean \"message\""), std::string::npos) << error.message;
  EXPECT_EQ(error.exit_status(), 2);
}

TEST(DiagnosisFailureRules, BadRegexGivesTheRe2Error) {
  Error error = bad(R"(  - id: missing
    category: Path Not Found
    root_cause: Environment Difference
    when: {message: 'No such (file'}
)");
  EXPECT_EQ(error.where.line, 10);
  EXPECT_GT(error.where.column, 0);
  EXPECT_NE(error.message.find("invalid regular expression: missing )"), std::string::npos) << error.message;
}

TEST(DiagnosisFailureRules, UnknownCategoryIsAnError) {
  Error error = bad(R"(  - id: missing
    category: Path Not Fund
    root_cause: Environment Difference
    when: {exception: OSError}
)");
  EXPECT_EQ(error.where.str(), "rules.yaml:8:15");
  EXPECT_NE(error.message.find("unknown category \"Path Not Fund\"; did you mean \"Path Not Found\""),
            std::string::npos)
      << error.message;
}

TEST(DiagnosisFailureRules, UnknownRootCauseIsAnError) {
  Error error = bad(R"(  - id: missing
    category: Path Not Found
    root_cause: Bad Luck
    when: {exception: OSError}
)");
  EXPECT_EQ(error.where.str(), "rules.yaml:9:17");
  EXPECT_NE(error.message.find("unknown root cause \"Bad Luck\""), std::string::npos) << error.message;
}

TEST(DiagnosisFailureRules, UnknownDimensionIsAnError) {
  auto rules = FailureRules::parse("categories:\n  Hang:\n    dimension: Weather\n", "r.yaml");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.error().where.str(), "r.yaml:3:16");
}

TEST(DiagnosisFailureRules, UnknownTemplateVariableIsLocated) {
  Error error = bad(R"(  - id: missing
    category: Path Not Found
    root_cause: Environment Difference
    hint: "install {{modul}}"
    when: {message: "No module named '(?P<module>\\w+)'"}
)");
  EXPECT_EQ(error.where.str(), "rules.yaml:10:20");
  EXPECT_NE(error.message.find("did you mean \"module\""), std::string::npos) << error.message;
}

TEST(DiagnosisFailureRules, OtherMistakes) {
  const std::string rule =
      "  - id: x\n    category: Path Not Found\n    root_cause: Environment Difference\n";
  EXPECT_NE(bad(rule).message.find("missing \"when\""), std::string::npos);
  EXPECT_NE(bad(rule + "    when: {signal: SIGFOO}\n").message.find("unknown signal \"SIGFOO\""),
            std::string::npos);
  EXPECT_NE(bad(rule + "    when: {errno: ENOPE}\n").message.find("unknown errno"), std::string::npos);
  EXPECT_NE(bad(rule + "    retry: sometimes\n    when: {exit_code: 1}\n").message.find("may_help"),
            std::string::npos);
  EXPECT_NE(bad(rule + "    when: {exit_code: 1, in: setup}\n").message.find("\"in\" applies to"),
            std::string::npos);
  EXPECT_NE(bad(rule + "    when: {}\n").message.find("at least one condition"), std::string::npos);
  EXPECT_NE(bad(rule + "    when: {exit_code: 1}\n" + rule + "    when: {exit_code: 2}\n")
                .message.find("already used on line 7"),
            std::string::npos);
  EXPECT_NE(bad("  - id: Not A Slug\n    category: Path Not Found\n    root_cause: Environment "
                "Difference\n    when: {exit_code: 1}\n")
                .message.find("\"not-a-slug\""),
            std::string::npos);
}

TEST(DiagnosisFailureRules, MissingFileIsBadInput) {
  testing::TempDir dir;
  auto rules = FailureRules::load(dir.path() / "none.yaml");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.error().exit_status(), 2);
}

TEST(DiagnosisFailureRules, CategoriesMayFollowRules) {
  auto rules = FailureRules::parse(R"(rules:
  - id: hang
    category: Hang
    root_cause: Environment Difference
    when: {timed_out: true}
categories:
  Hang: {dimension: Execution Environment}
)",
                                   "r.yaml");
  ASSERT_TRUE(rules.ok()) << rules.error().str();
  EXPECT_TRUE(rules->rules()[0].when.about_end());
}

}  // namespace
}  // namespace preflight::diagnosis
