#include "plan/hyperparameters.hpp"

#include <algorithm>

namespace preflight::plan {

nlohmann::json hyperparameter_value(const spec::Hyperparameter& hp) {
  if (!hp.typed) return hp.value;
  std::string text = hp.value;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true" || text == "false") return text == "true";
  // A number YAML accepts but JSON does not ("+1", ".5", "inf") stays a string, as the toolkit's
  // json.loads would leave it.
  auto number = nlohmann::json::parse(hp.value, nullptr, false);
  return number.is_number() ? number : nlohmann::json(hp.value);
}

std::string hyperparameter_env_value(const spec::Hyperparameter& hp) {
  const auto value = hyperparameter_value(hp);
  return value.is_string() ? value.get<std::string>() : value.dump();
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
  for (const auto& hp : hps) sorted.push_back(&hp);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::vector<std::string> args;
  for (const auto* hp : sorted) {
    const auto value = hyperparameter_value(*hp);
    args.push_back("--" + hp->name);
    if (value.is_boolean()) {
      args.push_back(value.get<bool>() ? "True" : "False");
    } else {
      args.push_back(value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  return args;
}

std::string shell_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
      return std::isalnum(c) ||
             std::string_view("-_.,/:=+@%").find(static_cast<char>(c)) != std::string_view::npos;
    });
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? word : quoted + "'");
  }
  return out;
}

}  // namespace preflight::plan
