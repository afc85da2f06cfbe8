#include "diagnosis/platform_variables.hpp"

#include "spec/yaml_doc.hpp"

namespace preflight::diagnosis {
namespace {

using spec::YamlDoc;
using spec::YamlField;

Result<std::vector<VariableGroup>> read_groups(const YamlDoc& doc) {
  std::vector<VariableGroup> groups;
  auto top = doc.fields(doc.root(), "", {"groups"});
  if (!top) return std::move(top).error();
  for (const YamlField& section : *top) {
    if (!section.value.IsSequence()) return doc.error(section, "expected a list of groups");
    for (std::size_t i = 0; i < section.value.size(); ++i) {
      auto fields = doc.fields(section.value[i], "groups[" + std::to_string(i) + "]", {"meaning", "names"});
      if (!fields) return std::move(fields).error();
      VariableGroup group;
      for (const YamlField& field : *fields) {
        if (field.key == "meaning") {
          auto meaning = doc.string(field);
          if (!meaning) return std::move(meaning).error();
          group.meaning = *meaning;
        } else {
          auto names = doc.string_list(field);
          if (!names) return std::move(names).error();
          for (const auto& name : *names)
            if (name.find('*') != name.rfind('*'))
              return doc.error(field, "\"" + name + "\" has more than one *; one stands for any text");
          group.names = std::move(*names);
        }
      }
      if (group.meaning.empty() || group.names.size() < 2)
        return Error::bad_input(
            "groups[" + std::to_string(i) + "]: a group needs a meaning and two names or more",
            doc.at(section.value[i]));
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

}  // namespace

bool variable_matches(const std::string& pattern, const std::string& name) {
  const auto star = pattern.find('*');
  if (star == std::string::npos) return pattern == name;
  const std::string_view prefix(pattern.data(), star), suffix(pattern.data() + star + 1);
  return name.size() > prefix.size() + suffix.size() && name.starts_with(prefix) && name.ends_with(suffix);
}

Result<PlatformVariables> PlatformVariables::read(const Result<spec::YamlDoc>& doc) {
  if (!doc) return doc.error();
  auto groups = read_groups(*doc);
  if (!groups) return std::move(groups).error();
  PlatformVariables table;
  table.groups_ = std::move(*groups);
  return table;
}

Result<PlatformVariables> PlatformVariables::load(const std::filesystem::path& file) {
  return read(YamlDoc::load(file));
}

Result<PlatformVariables> PlatformVariables::parse(const std::string& text,
                                                   const std::filesystem::path& file) {
  return read(YamlDoc::parse(text, file));
}

std::optional<EquivalentVariable> PlatformVariables::equivalent(const std::string& wanted,
                                                                const std::set<std::string>& set) const {
  for (const VariableGroup& group : groups_) {
    bool member = false;
    for (const auto& pattern : group.names) member = member || variable_matches(pattern, wanted);
    if (!member) continue;
    for (const auto& pattern : group.names)
      for (const auto& name : set)
        if (name != wanted && variable_matches(pattern, name)) return EquivalentVariable{name, group.meaning};
  }
  return std::nullopt;
}

}  // namespace preflight::diagnosis
