#include "spec/references.hpp"

#include <algorithm>

#include "spec/job_spec.hpp"
#include "util/did_you_mean.hpp"
#include "util/text.hpp"

namespace preflight::spec {

namespace {

SourceLocation moved(const SourceLocation& where, std::size_t offset, bool exact) {
  SourceLocation out = where;
  if (exact && out.column > 0) out.column += static_cast<int>(offset);
  return out;
}

bool single_line(const std::string& text) { return text.find('\n') == std::string::npos; }

Error unknown_name(const Reference& ref, const std::vector<std::string>& declared,
                   const SourceLocation& where) {
  const std::string singular = ref.kind == "inputs" ? "input" : "output";
  std::string hint = did_you_mean(ref.name, declared);
  if (hint.empty()) {
    if (declared.empty()) {
      hint = " (the job declares no " + ref.kind + "; add it under " + ref.kind + ":)";
    } else {
      std::string names;
      for (const std::string& name : declared) names += (names.empty() ? "" : ", ") + name;
      hint = " (declared " + ref.kind + ": " + names + ")";
    }
  }
  return Error::bad_input(
      "unknown " + singular + " \"" + ref.name + "\" in ${{" + ref.kind + "." + ref.name + "}}" + hint,
      where);
}

std::vector<std::string> keys(const std::map<std::string, std::string>& map) {
  std::vector<std::string> out;
  out.reserve(map.size());
  for (const auto& [key, _] : map) out.push_back(key);
  return out;
}

}  // namespace

Result<std::vector<Reference>> find_references(const std::string& text, const SourceLocation& where,
                                               bool exact) {
  std::vector<Reference> out;
  std::size_t from = 0;
  while (true) {
    const std::size_t open = text.find("${{", from);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open + 3);
    if (close == std::string::npos) {
      return Error::bad_input("unclosed \"${{\" (add \"}}\")", moved(where, open, exact));
    }
    const std::string inside = trim(text.substr(open + 3, close - open - 3));
    const std::size_t dot = inside.find('.');
    const std::string kind = inside.substr(0, dot);
    const std::string name = dot == std::string::npos ? "" : inside.substr(dot + 1);
    if ((kind != "inputs" && kind != "outputs") || name.empty()) {
      return Error::bad_input(
          "unsupported reference \"${{" + inside + "}}\"; use ${{inputs.NAME}} or ${{outputs.NAME}}",
          moved(where, open, exact));
    }
    out.push_back(Reference{kind, name, open, close + 2 - open});
    from = close + 2;
  }
  return out;
}

Status check_references(const std::string& text, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const SourceLocation& where, bool exact) {
  auto refs = find_references(text, where, exact);
  if (!refs) return std::move(refs).error();
  for (const Reference& ref : *refs) {
    const auto& declared = ref.kind == "inputs" ? inputs : outputs;
    if (std::find(declared.begin(), declared.end(), ref.name) == declared.end()) {
      return unknown_name(ref, declared, moved(where, ref.offset, exact));
    }
  }
  return Ok{};
}

Result<std::string> substitute_references(const std::string& text,
                                          const std::map<std::string, std::string>& inputs,
                                          const std::map<std::string, std::string>& outputs,
                                          const SourceLocation& where) {
  const bool exact = single_line(text);
  auto refs = find_references(text, where, exact);
  if (!refs) return std::move(refs).error();
  std::string out;
  std::size_t from = 0;
  for (const Reference& ref : *refs) {
    const auto& values = ref.kind == "inputs" ? inputs : outputs;
    auto value = values.find(ref.name);
    if (value == values.end()) {
      return unknown_name(ref, keys(values), moved(where, ref.offset, exact));
    }
    out.append(text, from, ref.offset - from);
    out += value->second;
    from = ref.offset + ref.length;
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace preflight::spec
