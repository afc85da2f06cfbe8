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
#include "diagnosis/emitted_rules.hpp"
#include "diagnosis/policies.hpp"
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

// The string literals of the call's argument number `index` (from 0) that starts after the
// '(' at `open`: `static_finding(raises ? "a" : "b", ...)` gives a and b for index 0.
void argument_literals(const std::string& text, std::size_t open, int index, std::set<std::string>& out) {
  int depth = 0;
  int argument = 0;
  std::size_t start = open + 1;
  for (std::size_t end = open; end < text.size(); ++end) {
    if (text[end] == '(') ++depth;
    const bool closes = text[end] == ')' && --depth == 0;
    if (!closes && !(text[end] == ',' && depth == 1)) continue;
    if (argument == index) {
      static const std::regex literal(R"re("([^"]*)")re");
      const std::string written = text.substr(start, end - start);
      for (auto it = std::sregex_iterator(written.begin(), written.end(), literal);
           it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
      return;
    }
    if (closes) return;
    ++argument;
    start = end + 1;
  }
}

// Rule ids where src/ emits them: the first argument of the functions that build a finding
// from a rule id (check::static_finding, shell lint's add and the outputs' lost take it first,
// diagnosis's from_rule second), `.rule = "..."`, and the performance patterns' table. A new
// way of emitting a finding belongs in this list.
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
      const bool failure = (*it)[1] == "from_rule";
      argument_literals(text, open, failure ? 1 : 0, failure ? ids.failures : ids.checks);
    }
    for (const auto* pattern : {&assigned, &perf})
      for (auto it = std::sregex_iterator(text.begin(), text.end(), *pattern); it != std::sregex_iterator();
           ++it)
        ids.checks.insert((*it)[1]);
  }
  return ids;
}

std::set<std::string> as_set(const auto& ids) { return {ids.begin(), ids.end()}; }

TEST(DiagnosisCheckRules, TheDeclaredRuleIdsAreWhatTheCodeEmits) {
  const EmittedIds ids = emitted_ids();
  EXPECT_GE(ids.checks.size(), 20u) << "the scan of src/ finds the emission sites";
  EXPECT_EQ(ids.checks, as_set(diagnosis::kEmittedCheckRules)) << "src/diagnosis/emitted_rules.hpp";
  EXPECT_EQ(ids.failures, as_set(diagnosis::kEmittedFailureRules)) << "src/diagnosis/emitted_rules.hpp";
}

TEST(DiagnosisCheckRules, EveryRowOfTheTableIsEmitted) {
  for (const auto& rule : testing::shipped_policies().checks.rules())
    EXPECT_TRUE(as_set(diagnosis::kEmittedCheckRules).count(rule.id))
        << rule.id << " (" << rule.where.str() << ") is emitted nowhere";
}

// A copy of the shipped rules folder with the row of `id` taken out of `file`.
void copy_rules_without(const fs::path& to, const std::string& file, const std::string& id) {
  fs::copy(testing::source_dir() / "policies" / "rules", to, fs::copy_options::recursive);
  std::string text = read_text(to / file);
  const std::size_t row = text.find("  - id: " + id + "\n");
  ASSERT_NE(row, std::string::npos) << id << " in " << file;
  const std::size_t next = text.find("\n  - ", row + 1);
  text.erase(row, next == std::string::npos ? std::string::npos : next + 1 - row);
  std::ofstream(to / file) << text;
}

TEST(DiagnosisCheckRules, ARulesFolderWithoutAnEmittedRuleFailsToLoad) {
  for (const auto& [file, id] : {std::pair<std::string, std::string>{"checks.yaml", "sudo-on-platform"},
                                 {"failures.yaml", "loss-nan"}}) {
    testing::TempDir dir;
    copy_rules_without(dir.path() / "rules", file, id);
    auto policies = diagnosis::load_policies(dir.path() / "rules");
    ASSERT_FALSE(policies.ok()) << file << " without " << id;
    EXPECT_EQ(policies.error().kind, ErrorKind::BadInput);
    EXPECT_EQ(policies.error().where.file, dir.path() / "rules" / file);
    EXPECT_NE(policies.error().message.find("no rule \"" + id + "\""), std::string::npos)
        << policies.error().message;
  }
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
