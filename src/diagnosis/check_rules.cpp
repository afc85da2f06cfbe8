#include "diagnosis/check_rules.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/events.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::diagnosis {
namespace {

using spec::YamlDoc;
using spec::YamlField;

const std::vector<std::string> kKeys = {"id", "category", "root_cause", "phase", "stage", "summary"};
const std::vector<std::string> kRequired = {"id", "category", "root_cause", "summary"};

}  // namespace

// Builds CheckRules from a parsed document, one row at a time.
class CheckRulesReader {
 public:
  CheckRulesReader(const YamlDoc& doc, const FailureRules& failures) : doc_(doc), failures_(failures) {}

  Result<CheckRules> read() {
    table_.file_ = doc_.file();
    auto top = doc_.fields(doc_.root(), "", {"rules"});
    if (!top) return std::move(top).error();
    if (top->empty()) return Error::bad_input("missing \"rules\"", doc_.at(doc_.root()));
    const YamlField& section = top->front();
    if (!section.value.IsSequence())
      return doc_.error(section, "expected a list of rules, got " + spec::describe(section.value));
    for (std::size_t i = 0; i < section.value.size(); ++i) {
      auto rule = read_rule(section.value[i], "rules[" + std::to_string(i) + "]");
      if (!rule) return std::move(rule).error();
      table_.rules_.push_back(std::move(*rule));
    }
    return std::move(table_);
  }

 private:
  Result<CheckRule> read_rule(const YAML::Node& node, const std::string& path) {
    auto fields = doc_.fields(node, path, kKeys);
    if (!fields) return std::move(fields).error();
    CheckRule rule;
    rule.where = doc_.at(node);
    for (const std::string& required : kRequired) {
      if (std::none_of(fields->begin(), fields->end(), [&](const YamlField& f) { return f.key == required; }))
        return Error::bad_input(path + ": missing \"" + required + "\"", rule.where);
    }
    for (const YamlField& field : *fields) {
      Status done = read_field(field, rule);
      if (!done) return std::move(done).error();
    }
    return rule;
  }

  Status read_field(const YamlField& field, CheckRule& rule) {
    if (field.key == "id") return read_id(field, rule);
    if (field.key == "category") return read_category(field, rule);
    if (field.key == "phase") {
      auto phase = doc_.one_of(field, {"static", "dryrun"}, "phase");
      if (!phase) return std::move(phase).error();
      rule.phase = *phase == "static" ? model::Phase::Static : model::Phase::Dryrun;
      return Ok{};
    }
    const std::vector<std::string> stages(std::begin(harness::kStageNames), std::end(harness::kStageNames));
    auto text = field.key == "root_cause" ? doc_.one_of(field, kRootCauses, "root cause")
                : field.key == "stage"    ? doc_.one_of(field, stages, "stage")
                                          : doc_.string(field);
    if (!text) return std::move(text).error();
    if (field.key == "summary" && (text->empty() || text->find('\n') != std::string::npos))
      return doc_.error(field, "a summary is one line of text");
    (field.key == "root_cause" ? rule.root_cause : field.key == "stage" ? rule.stage : rule.summary) = *text;
    return Ok{};
  }

  Status read_id(const YamlField& field, CheckRule& rule) {
    auto id = doc_.string(field);
    if (!id) return std::move(id).error();
    if (id->empty() || model::category_id(*id) != *id)
      return doc_.error(
          field, "a rule id is lowercase words joined by '-', like \"" + model::category_id(*id) + "\"");
    if (const CheckRule* other = table_.find(*id))
      return doc_.error(
          field, "rule id \"" + *id + "\" is already used on line " + std::to_string(other->where.line));
    if (const FailureRule* failure = failures_.find_rule(*id))
      return doc_.error(field, "rule id \"" + *id + "\" is a rule of " + failures_.file().string() +
                                   " (line " + std::to_string(failure->where.line) + ")");
    rule.id = *id;
    return Ok{};
  }

  // By the category's id, as `preflight explain` lists it; the finding carries its name.
  Status read_category(const YamlField& field, CheckRule& rule) {
    std::vector<std::string> ids;
    for (const model::Category& category : failures_.categories()) ids.push_back(category.id);
    auto id = doc_.one_of(field, ids, "category");
    if (!id) {
      Error error = std::move(id).error();
      error.message += " (a category id of " + failures_.file().string() + ")";
      return error;
    }
    const model::Category* category = failures_.find_category(*id);
    rule.category = category->name;
    rule.dimension = category->dimension;
    return Ok{};
  }

  const YamlDoc& doc_;
  const FailureRules& failures_;
  CheckRules table_;
};

Result<CheckRules> CheckRules::load(const std::filesystem::path& file, const FailureRules& failures) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  return CheckRulesReader(*doc, failures).read();
}

Result<CheckRules> CheckRules::parse(const std::string& text, const std::filesystem::path& file,
                                     const FailureRules& failures) {
  auto doc = YamlDoc::parse(text, file);
  if (!doc) return std::move(doc).error();
  return CheckRulesReader(*doc, failures).read();
}

const CheckRule* CheckRules::find(std::string_view id) const {
  for (const CheckRule& rule : rules_)
    if (rule.id == id) return &rule;
  return nullptr;
}

void CheckRules::complete(model::Finding& finding) const {
  if (!finding.category.empty()) return;
  const CheckRule* rule = find(finding.rule);
  if (!rule)
    throw std::logic_error("the code emitted rule \"" + finding.rule + "\", which " + file_.string() +
                           " does not classify");
  finding.category = rule->category;
  finding.dimension = rule->dimension;
  finding.root_cause = rule->root_cause;
  finding.phase = rule->phase;
  if (!rule->stage.empty()) finding.stage = rule->stage;
}

void CheckRules::complete(std::vector<model::Finding>& findings) const {
  for (model::Finding& finding : findings) complete(finding);
}

}  // namespace preflight::diagnosis
