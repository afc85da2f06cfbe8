// The check rules table (policies/rules/checks.yaml): every rule id the code emits is in it
// (and every row is emitted), mistakes in it are errors at their place, and the code's
// findings are completed from it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "check/code_scan.hpp"
#include "diagnosis/check_rules.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using diagnosis::CheckRules;

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The string literals of a call's first argument: `static_finding(raises ? "a" : "b", ...)`
// gives a and b.
void first_argument_literals(const std::string& text, std::size_t open, std::set<std::string>& out) {
  int depth = 0;
  std::size_t end = open;
  for (; end < text.size(); ++end) {
    if (text[end] == '(') ++depth;
    if (text[end] == ')' && --depth == 0) break;
    if (text[end] == ',' && depth == 1) break;
  }
  static const std::regex literal(R"re("([^"]*)")re");
  const std::string argument = text.substr(open, end - open);
  for (auto it = std::sregex_iterator(argument.begin(), argument.end(), literal);
       it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
}

// Rule ids where src/ emits them: the first argument of the functions that build a finding
// from a rule id (check::static_finding, shell lint's add, the outputs' lost, diagnosis's
// from_rule), `.rule = "..."`, and the performance patterns' table. A new way of emitting a
// finding belongs in this list.
struct EmittedIds {
  std::set<std::string> checks;    // to be classified by checks.yaml
  std::set<std::string> failures;  // rules of failures.yaml the code names (from_rule)
};

EmittedIds emitted_ids() {
  static const std::regex call(R"(\b(static_finding|lint\.add|lost|from_rule)\()");
  static const std::regex assigned(R"re(\.rule = "([^"]+)")re");
  static const std::regex perf(R"re(\{"([a-z0-9-]+)", PerfPattern::)re");
  EmittedIds ids;
  for (const auto& entry : fs::recursive_directory_iterator(testing::source_dir() / "src")) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = read_text(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
      const auto open = static_cast<std::size_t>(it->position() + it->length() - 1);
      first_argument_literals(text, open, (*it)[1] == "from_rule" ? ids.failures : ids.checks);
    }
    for (const auto* pattern : {&assigned, &perf})
      for (auto it = std::sregex_iterator(text.begin(), text.end(), *pattern); it != std::sregex_iterator();
           ++it)
        ids.checks.insert((*it)[1]);
  }
  return ids;
}

TEST(DiagnosisCheckRules, EveryRuleIdTheCodeEmitsIsInTheTable) {
  const auto& policies = testing::shipped_policies();
  const EmittedIds ids = emitted_ids();
  EXPECT_GE(ids.checks.size(), 20u) << "the scan of src/ finds the emission sites";
  for (const std::string& id : ids.checks)
    EXPECT_NE(policies.checks.find(id), nullptr)
        << "src/ emits rule \"" << id << "\", which checks.yaml lacks";
  for (const std::string& id : ids.failures) {
    const auto& rules = policies.failures.rules();
    EXPECT_TRUE(std::any_of(rules.begin(), rules.end(), [&](const auto& rule) { return rule.id == id; }))
        << "src/ emits rule \"" << id << "\", which failures.yaml lacks";
  }
  for (const auto& rule : policies.checks.rules())
    EXPECT_TRUE(ids.checks.count(rule.id)) << rule.id << " (" << rule.where.str() << ") is emitted nowhere";
}

TEST(DiagnosisCheckRules, EveryPerformancePatternIsARuleOfTheTable) {
  using check::PerfPattern;
  for (PerfPattern pattern : {PerfPattern::TfOpInLoop, PerfPattern::TfMapBeforeBatch,
                              PerfPattern::TfMapWithoutParallelCalls, PerfPattern::TorchDataloaderNoWorkers})
    EXPECT_NE(testing::shipped_policies().checks.find(check::rule_id(pattern)), nullptr)
        << check::rule_id(pattern);
}

TEST(DiagnosisCheckRules, UnknownPerformancePatternFromTheScannerIsAnError) {
  auto scan = check::parse_code_scan(
      R"({"python": "3.11.2", "files": [{"path": "a.py", "perf": [{"rule": "tf-new-thing", "line": 3}]}]})");
  ASSERT_FALSE(scan.ok());
  EXPECT_NE(scan.error().message.find("\"tf-new-thing\""), std::string::npos) << scan.error().message;
}

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
