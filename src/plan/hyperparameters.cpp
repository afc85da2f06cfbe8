#include "plan/hyperparameters.hpp"

#include <algorithm>

#include "util/json_fields.hpp"
#include "util/text.hpp"

namespace preflight::plan {
namespace {

// A string as it is, anything else as its JSON.
std::string text_of(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

nlohmann::json hyperparameter_value(const spec::Hyperparameter& hp) {
  if (!hp.typed) return hp.value;
  std::string text = hp.value;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true" || text == "false") return text == "true";
  // A number YAML accepts but JSON does not ("+1", ".5", "inf") stays a string, as the toolkit's
  // json.loads would leave it.
  auto number = json_fields::parse_bounded(hp.value);
  return number.is_number() ? number : nlohmann::json(hp.value);
}

std::string hyperparameter_env_value(const spec::Hyperparameter& hp) {
  return text_of(hyperparameter_value(hp));
}

nlohmann::json hyperparameters_object(const std::vector<spec::Hyperparameter>& hps) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& hp : hps) object[hp.name] = hyperparameter_value(hp);
  return object;
}

nlohmann::json hyperparameters_strings(const std::vector<spec::Hyperparameter>& hps) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& hp : hps) object[hp.name] = hyperparameter_value(hp).dump();
  return object;
}

std::vector<std::string> hyperparameter_arguments(const std::vector<spec::Hyperparameter>& hps) {
  std::vector<const spec::Hyperparameter*> sorted;
  sorted.reserve(hps.size());
  for (const auto& hp : hps) sorted.push_back(&hp);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::vector<std::string> args;
  for (const auto* hp : sorted) {
    const auto value = hyperparameter_value(*hp);
    args.push_back("--" + hp->name);
    // Python's spelling of a boolean, as the toolkit formats it; anything else as in SM_HP_.
    args.push_back(value.is_boolean() ? (value.get<bool>() ? "True" : "False") : text_of(value));
  }
  return args;
}

}  // namespace preflight::plan
