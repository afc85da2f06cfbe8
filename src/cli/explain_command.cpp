#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "diagnosis/policies.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::cli {
namespace {

using diagnosis::CheckRule;
using diagnosis::FailureRule;
using diagnosis::Policies;

// "static" for a rule found before the job runs; "dynamic" for one found by the dry run.
const char* kind(const CheckRule& rule) { return rule.phase == model::Phase::Static ? "static" : "dynamic"; }

void explain_category(const Policies& policies, const model::Category& category) {
  std::cout << category.name << " (" << category.dimension << ")\n\n"
            << category.description << "\n\nUsual fix: " << category.fix << "\n";
  std::string found, recognised;
  for (const CheckRule& rule : policies.checks.rules())
    if (rule.category == category.name) found += " " + rule.id;
  for (const FailureRule* rule : policies.failures.rules_for(category.name)) recognised += " " + rule->id;
  if (!found.empty()) std::cout << "\nFound by Preflight's checks:" << found << "\n";
  if (!recognised.empty()) std::cout << "\nRecognised by the rules:" << recognised << "\n";
}

void explain_rule(const CheckRule& rule) {
  std::cout << "Rule " << rule.id << " (" << kind(rule) << "): " << rule.category << " (" << rule.dimension
            << "), root cause " << rule.root_cause << (rule.stage.empty() ? "" : ", stage " + rule.stage)
            << "\n\n"
            << rule.summary << "\n\nDefined at " << rule.where.str() << "\n";
}

void explain_rule(const Policies& policies, const FailureRule& rule) {
  const auto* category = policies.failures.find_category(rule.category);
  std::cout << "Rule " << rule.id << " (dynamic): " << rule.category << " ("
            << (category ? category->dimension : "") << "), root cause " << rule.root_cause << ", retry "
            << model::to_string(rule.retry) << "\n";
  if (!rule.hint.empty()) std::cout << "\nHint: " << rule.hint << "\n";
  std::cout << "\nDefined at " << rule.where.str() << "\n";
}

Error unknown(const Policies& policies, const std::string& name) {
  // Suggest what the user was typing: a category's name or id, or a rule's id.
  std::vector<std::string> known;
  for (const auto& c : policies.failures.categories()) known.insert(known.end(), {c.id, c.name});
  for (const auto& rule : policies.checks.rules()) known.push_back(rule.id);
  for (const auto& rule : policies.failures.rules()) known.push_back(rule.id);
  return Error::bad_input("unknown category or rule \"" + name + "\"" + did_you_mean(name, known) +
                          " (run 'preflight explain --list' for all)");
}

// A category by name or id, then a rule by id: many rules share their category's id
// (path-not-found), and both are explained.
int explain(const Policies& policies, const std::string& name) {
  const auto* category = policies.failures.find_category(name);
  const auto* check = policies.checks.find(name);
  const auto* failure = policies.failures.find_rule(name);
  if (!category && !check && !failure) return report_error(unknown(policies, name));
  if (category) explain_category(policies, *category);
  if (category && (check || failure)) std::cout << "\n";
  if (check) explain_rule(*check);
  if (failure) explain_rule(policies, *failure);
  return 0;
}

// One line per category and per rule, tab-separated: what `explain` accepts, the category,
// then "category" and the dimension, or the rule's kind.
int list(const Policies& policies) {
  for (const auto& c : policies.failures.categories())
    std::cout << c.id << "\t" << c.name << "\tcategory\t" << c.dimension << "\n";
  for (const auto& rule : policies.checks.rules())
    std::cout << rule.id << "\t" << rule.category << "\t" << kind(rule) << "\n";
  for (const auto& rule : policies.failures.rules())
    std::cout << rule.id << "\t" << rule.category << "\tdynamic\n";
  return 0;
}

}  // namespace

Command explain_command() {
  return {"explain", "Explain a failure category or a rule", [](CLI::App& app) -> Action {
            auto name = std::make_shared<std::string>();
            auto all = std::make_shared<bool>(false);
            app.add_option("category", *name,
                           "a category name or id, or a rule id, e.g. \"Path Not Found\", path-not-found or "
                           "path-not-on-platform");
            app.add_flag("--list", *all, "list every category and rule");
            return [name, all] {
              auto policies = diagnosis::load_policies(diagnosis::shipped_rules_dir());
              if (!policies) return report_error(policies.error());
              if (*all || name->empty()) return list(*policies);
              return explain(*policies, *name);
            };
          }};
}

}  // namespace preflight::cli
