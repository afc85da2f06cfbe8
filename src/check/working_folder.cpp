#include "check/working_folder.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cctype>
#include <set>

#include "check/shell_words.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

std::string where_text(const SourceLocation& where) {
  return where.file.empty() ? std::string()
                            : fmt::format(" in {}:{}", where.file.generic_string(), where.line);
}

std::string normal(const fs::path& path) {
  std::string text = path.lexically_normal().generic_string();
  if (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

const std::set<std::string> kCompoundOpen = {"if", "for", "while", "until", "case", "select", "{", "("};
const std::set<std::string> kCompoundClose = {"fi", "done", "esac", "}", ")"};
const std::set<std::string> kCompoundWords = {"then", "do", "else", "elif", "!"};

}  // namespace

ShellState::ShellState(const plan::RunPlan& plan) {
  for (const auto& entry : plan.process.env) {
    const auto eq = entry.find('=');
    if (eq != std::string::npos) vars_[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  folder_ = {plan.process.cwd, fmt::format("the folder {} starts the job in", plan.platform)};
  vars_["PWD"] = plan.process.cwd;
}

std::optional<std::string> ShellState::expand(const std::string& word) const {
  if (word.find("$(") != std::string::npos || word.find('`') != std::string::npos) return std::nullopt;
  std::string text = word;
  if (text == "~" || text.starts_with("~/")) {
    auto home = vars_.find("HOME");
    if (home == vars_.end()) return std::nullopt;
    text = home->second + text.substr(1);
  }
  static const re2::RE2 braced(R"(^([A-Za-z_]\w*)(?:(:?)-(.*))?$)");
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    std::string name, colon, fallback;
    bool has_fallback = false;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      const auto close = text.find('}', i);
      if (close == std::string::npos) return std::nullopt;
      const std::string inner = text.substr(i + 2, close - i - 2);
      if (!re2::RE2::FullMatch(inner, braced, &name, &colon, &fallback)) return std::nullopt;
      has_fallback = inner.find('-') != std::string::npos;
      i = close + 1;
    } else {
      std::size_t end = i + 1;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      name = text.substr(i + 1, end - i - 1);
      if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
        return std::nullopt;  // $1, $@, $?
      i = end;
    }
    auto value = vars_.find(name);
    if (value != vars_.end() && !(colon == ":" && value->second.empty())) {
      out += value->second;
    } else if (has_fallback) {
      auto expanded = expand(fallback);
      if (!expanded) return std::nullopt;
      out += *expanded;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

void ShellState::start_in(const WorkingFolder& folder) {
  folder_ = folder;
  if (folder_.path)
    vars_["PWD"] = *folder_.path;
  else
    vars_.erase("PWD");
}

std::optional<std::string> ShellState::absolute(const std::string& word) const {
  auto expanded = expand(word);
  if (!expanded || expanded->empty()) return std::nullopt;
  if ((*expanded)[0] == '/') return normal(*expanded);
  if (!folder_.path) return std::nullopt;
  return normal(fs::path(*folder_.path) / *expanded);
}

void ShellState::change_to(const std::optional<std::string>& target, const std::string& said,
                           const SourceLocation& where, const std::string& unknown_why) {
  if (compound_depth_ > 0) {
    folder_ = {std::nullopt, fmt::format("`{}`{} runs inside an if or a loop", said, where_text(where))};
  } else if (!target) {
    folder_ = {std::nullopt, fmt::format("`{}`{} {}", said, where_text(where), unknown_why)};
  } else {
    folder_ = {*target, fmt::format("after `{}`{}", said, where_text(where))};
  }
  if (folder_.path)
    vars_["PWD"] = *folder_.path;
  else
    vars_.erase("PWD");
}

void ShellState::run(const std::vector<std::string>& words_in, const SourceLocation& where) {
  std::vector<std::string> words = words_in;
  // Compound commands: their words open or close a body, or lead into one.
  while (!words.empty()) {
    std::string first = words[0];
    if (kCompoundOpen.count(first) || (first.size() > 1 && first[0] == '(')) {
      ++compound_depth_;
      if (first == "(" || first == "{" || first[0] != '(')
        words.erase(words.begin());
      else
        words[0] = first.substr(1);
    } else if (kCompoundClose.count(first)) {
      compound_depth_ = std::max(0, compound_depth_ - 1);
      words.erase(words.begin());
    } else if (kCompoundWords.count(first)) {
      words.erase(words.begin());
    } else {
      break;
    }
  }
  if (!words.empty() && (words.back() == ")" || words.back() == "}")) {
    compound_depth_ = std::max(0, compound_depth_ - 1);
    words.pop_back();
  }
  if (words.empty()) return;
  // Assignments alone set shell variables; before a program they set its environment only.
  static const re2::RE2 assignment(R"(^([A-Za-z_]\w*)=(.*)$)");
  std::size_t first = 0;
  std::string name, value;
  while (first < words.size() && re2::RE2::FullMatch(words[first], assignment, &name, &value)) ++first;
  if (first == words.size() || words[0] == "export") {
    for (std::size_t i = words[0] == "export" ? 1 : 0; i < words.size(); ++i) {
      if (!re2::RE2::FullMatch(words[i], assignment, &name, &value)) continue;
      if (auto expanded = expand(value); expanded && compound_depth_ == 0)
        vars_[name] = *expanded;
      else
        vars_.erase(name);
    }
    return;
  }
  std::string said;  // the command as the message quotes it, compound words aside
  for (std::size_t i = first; i < words.size(); ++i) said += (i > first ? " " : "") + words[i];
  const std::string program = words[first];
  const std::vector<std::string> args(words.begin() + static_cast<long>(first) + 1, words.end());
  if (program == "cd" || program == "pushd") {
    std::vector<std::string> operands;
    for (const auto& a : args)
      if (a.empty() || a[0] != '-' || a == "-") operands.push_back(a);
    if (program == "pushd") pushed_.push_back(folder_);
    if (operands.empty()) {
      auto home = vars_.find("HOME");
      change_to(home == vars_.end() ? std::nullopt : std::optional<std::string>(home->second), said, where,
                "goes to a home the platform does not set");
    } else if (operands[0] == "-") {
      change_to(std::nullopt, said, where, "returns to the previous folder");
    } else {
      change_to(absolute(operands[0]), said, where,
                "names a folder that depends on what only the running shell knows");
    }
  } else if (program == "popd") {
    if (pushed_.empty() || compound_depth_ > 0) {
      change_to(std::nullopt, said, where, "returns to a folder this text did not push");
    } else {
      folder_ = pushed_.back();
      pushed_.pop_back();
      if (folder_.path) vars_["PWD"] = *folder_.path;
    }
  } else if (program == "source" || program == "." || program == "eval") {
    // What a sourced script or an eval does to the folder is not followed.
    change_to(std::nullopt, said, where, "may change the folder");
  }
}

void walk_shell(const std::string& text, const SourceLocation& first_line, ShellState& state,
                const std::function<void(const SimpleCommand&, const ShellState&)>& visit) {
  for (const auto& simple : shell_commands(text)) {
    const SourceLocation where{first_line.file, first_line.line + simple.line, 0};
    SimpleCommand command{simple.line, text.substr(simple.begin, simple.end - simple.begin), {}, {}};
    for (const auto& word : simple.words) {
      command.words.push_back(word.text);
      command.certain.push_back(word.certain);
    }
    visit(command, state);
    state.run(command.words, where);
  }
}

bool runs_python(const std::vector<std::string>& words) {
  for (const auto& word : words) {
    const std::string program = fs::path(word).filename().string();
    if (program.starts_with("python") || program == "torchrun" || program == "accelerate" ||
        program == "deepspeed" || program == "horovodrun")
      return true;
    if (word.size() > 3 && word.compare(word.size() - 3, 3, ".py") == 0) return true;
  }
  return false;
}

namespace {

// The text of a path in the code mount, read from the host's code folder, if it is one.
std::optional<std::string> code_file_text(const std::string& path, const plan::RunPlan& plan) {
  for (const auto& mount : plan.mounts)
    if (mount.kind == model::MountFact::Kind::Code && is_under(path, mount.destination))
      return read_code_file(mount.source, fs::path(path).lexically_relative(mount.destination));
  return std::nullopt;
}

// Every folder a Python program of `text` starts in, following the shell scripts of the code
// folder it runs (`bash run.sh`), which start where they are run.
void python_folders(const std::string& text, const SourceLocation& where, const plan::RunPlan& plan,
                    ShellState& state, int depth, std::vector<WorkingFolder>& found) {
  walk_shell(text, where, state, [&](const SimpleCommand& simple, const ShellState& now) {
    for (const auto& word : simple.words) {
      if (depth > 2 || word.size() < 4 || word.compare(word.size() - 3, 3, ".sh") != 0) continue;
      auto path = now.absolute(word);
      auto script = path ? code_file_text(*path, plan) : std::nullopt;
      if (!script) continue;
      ShellState inner = now;
      python_folders(*script, {in_code_mount(*path, plan).value_or(fs::path(*path).filename()), 1, 0}, plan,
                     inner, depth + 1, found);
    }
    if (runs_python(simple.words)) found.push_back(now.folder());
  });
}

}  // namespace

WorkingFolder python_folder(const std::string& command, const SourceLocation& where,
                            const plan::RunPlan& plan) {
  ShellState state(plan);
  std::vector<WorkingFolder> found;
  python_folders(command, where, plan, state, 0, found);
  for (const auto& folder : found)
    if (folder.path != found.front().path)
      return {std::nullopt, "the command runs Python in more than one folder"};
  return found.empty() ? ShellState(plan).folder() : found.front();
}

std::vector<std::pair<fs::path, WorkingFolder>> scripts_and_folders(const std::string& command,
                                                                    const SourceLocation& where,
                                                                    const plan::RunPlan& plan) {
  std::vector<std::pair<fs::path, WorkingFolder>> scripts;
  ShellState state(plan);
  walk_shell(command, where, state, [&](const SimpleCommand& simple, const ShellState& now) {
    for (const auto& word : simple.words) {
      if (word.size() < 4 || word.compare(word.size() - 3, 3, ".sh") != 0) continue;
      if (auto path = now.absolute(word))
        if (auto code = in_code_mount(*path, plan))
          scripts.emplace_back(code->lexically_normal(), now.folder());
    }
  });
  return scripts;
}

std::optional<fs::path> in_code_mount(const std::string& path, const plan::RunPlan& plan) {
  for (const auto& mount : plan.mounts) {
    if (mount.kind != model::MountFact::Kind::Code) continue;
    if (path == mount.destination) return fs::path(".");
    if (is_under(path, mount.destination)) return fs::path(path).lexically_relative(mount.destination);
  }
  return std::nullopt;
}

}  // namespace preflight::check
