#include "spec/template.hpp"

#include <algorithm>

#include "util/did_you_mean.hpp"
#include "util/text.hpp"

namespace preflight::spec {

namespace {

struct Piece {
  std::size_t begin;  // "{{"
  std::size_t end;    // one past "}}"
  std::string name;
};

Result<std::vector<Piece>> scan(const std::string& text, const SourceLocation& where) {
  std::vector<Piece> pieces;
  std::size_t from = 0;
  while (true) {
    const std::size_t open = text.find("{{", from);
    if (open == std::string::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      return Error::bad_input("unclosed \"{{\" in template \"" + text + "\" (add \"}}\")",
                              location_in(where, text, open));
    }
    std::string name = trim(text.substr(open + 2, close - open - 2));
    if (name.empty()) {
      return Error::bad_input("empty \"{{}}\" in template \"" + text + "\"", location_in(where, text, open));
    }
    pieces.push_back(Piece{open, close + 2, std::move(name)});
    from = close + 2;
  }
  return pieces;
}

}  // namespace

SourceLocation location_in(const SourceLocation& where, const std::string& text, std::size_t offset) {
  SourceLocation out = where;
  if (out.column > 0 && text.find('\n') == std::string::npos) {
    out.column += static_cast<int>(offset);
  }
  return out;
}

Result<std::vector<TemplateVariable>> template_variables(const std::string& text,
                                                         const SourceLocation& where) {
  auto pieces = scan(text, where);
  if (!pieces) return std::move(pieces).error();
  std::vector<TemplateVariable> out;
  for (const Piece& piece : *pieces) out.push_back(TemplateVariable{piece.name, piece.begin});
  return out;
}

Result<std::string> expand_template(const std::string& text, const TemplateVars& vars,
                                    const SourceLocation& where) {
  auto pieces = scan(text, where);
  if (!pieces) return std::move(pieces).error();
  std::string out;
  std::size_t from = 0;
  for (const Piece& piece : *pieces) {
    auto value = vars.find(piece.name);
    if (value == vars.end()) {
      std::vector<std::string> names;
      for (const auto& [name, _] : vars) names.push_back(name);
      return Error::bad_input(
          "unknown template variable \"{{" + piece.name + "}}\"" + did_you_mean(piece.name, names),
          location_in(where, text, piece.begin));
    }
    out.append(text, from, piece.begin - from);
    out += value->second;
    from = piece.end;
  }
  out.append(text, from, std::string::npos);
  return out;
}

const std::vector<std::string>& job_template_variables() {
  static const std::vector<std::string> names = {"job.name",
                                                 "job.id",
                                                 "code",
                                                 "scratch",
                                                 "gpus.count",
                                                 "gpus.list",
                                                 "nodes",
                                                 "node.rank",
                                                 "host.name",
                                                 "hosts.json",
                                                 "cpus.count",
                                                 "user.name",
                                                 "user.uid",
                                                 "user.gid",
                                                 "user.home",
                                                 "inputs.names.json",
                                                 "inputs.dirs.json",
                                                 "inputs.config.json",
                                                 "hyperparameters.json",
                                                 "hyperparameters.strings.json",
                                                 "hyperparameters.args.json"};
  return names;
}

const std::vector<std::string>& entry_template_variables() {
  static const std::vector<std::string> names = {"name", "NAME", "path"};
  return names;
}

const std::vector<std::string>& hyperparameter_template_variables() {
  static const std::vector<std::string> names = {"name", "NAME", "value"};
  return names;
}

Status check_template(const std::string& text, bool per_entry, const SourceLocation& where) {
  return check_template(text, per_entry ? entry_template_variables() : std::vector<std::string>{}, where);
}

Status check_template(const std::string& text, const std::vector<std::string>& entry,
                      const SourceLocation& where) {
  auto variables = template_variables(text, where);
  if (!variables) return std::move(variables).error();
  std::vector<std::string> known = job_template_variables();
  known.insert(known.end(), entry.begin(), entry.end());
  const bool per_entry = !entry.empty();
  for (const TemplateVariable& variable : *variables) {
    const std::string& name = variable.name;
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const bool io = (name.rfind("inputs.", 0) == 0 && name.size() > 7) ||
                    (name.rfind("outputs.", 0) == 0 && name.size() > 8);
    if (io) continue;
    std::string hint = did_you_mean(name, known);
    if (hint.empty() && !per_entry && (name == "name" || name == "NAME" || name == "path")) {
      hint = " ({{" + name +
             "}} exists only in input_environment and output_environment "
             "entries and in mounts.input and mounts.output)";
    }
    return Error::bad_input("unknown template variable \"{{" + name + "}}\"" + hint,
                            location_in(where, text, variable.offset));
  }
  return Ok{};
}

}  // namespace preflight::spec
