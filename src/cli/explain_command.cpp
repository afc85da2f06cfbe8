#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "diagnosis/policies.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::cli {
namespace {

int explain(const std::string& name) {
  auto rules = diagnosis::FailureRules::load(diagnosis::shipped_rules_dir() / "failures.yaml");
  if (!rules) return report_error(rules.error());
  const auto* category = rules->find_category(name);
  if (!category) {
    // Suggest what the user was typing: a name ("Path Not Found") or an id (path-not-found).
    std::vector<std::string> known;
    for (const auto& c : rules->categories()) known.insert(known.end(), {c.id, c.name});
    std::string message = "unknown category \"" + name + "\"";
    message += did_you_mean(name, known);
    message += " (run 'preflight explain --list' for all)";
    return report_error(Error::bad_input(message));
  }
  std::cout << category->name << " (" << category->dimension << ")\n\n"
            << category->description << "\n\nUsual fix: " << category->fix << "\n";
  auto matching = rules->rules_for(category->name);
  if (!matching.empty()) {
    std::cout << "\nRecognised by the rules:";
    for (const auto* rule : matching) std::cout << " " << rule->id;
    std::cout << "\n";
  }
  return 0;
}

int list() {
  auto rules = diagnosis::FailureRules::load(diagnosis::shipped_rules_dir() / "failures.yaml");
  if (!rules) return report_error(rules.error());
  for (const auto& c : rules->categories())
    std::cout << c.id << "\t" << c.name << "\t" << c.dimension << "\n";
  return 0;
}

}  // namespace

Command explain_command() {
  return {"explain", "Explain a failure category and how it is usually fixed", [](CLI::App& app) -> Action {
            auto name = std::make_shared<std::string>();
            auto all = std::make_shared<bool>(false);
            app.add_option("category", *name,
                           "a category name or id, e.g. \"Path Not Found\" or path-not-found");
            app.add_flag("--list", *all, "list every category");
            return [name, all] {
              if (*all || name->empty()) return list();
              return explain(*name);
            };
          }};
}

}  // namespace preflight::cli
