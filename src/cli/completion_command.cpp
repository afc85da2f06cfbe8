// `preflight completion bash|zsh|fish`: a completion script generated from the command line's
// own CLI11 definitions, so that it names every subcommand and option there is. Values that
// change (platform names, failure categories and rule ids) are asked of preflight when completing.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "cli/command.hpp"

namespace preflight::cli {
namespace {

// What completes a value: "platforms", "categories", "jobs" (*.yaml), "files", "dirs",
// "words:A B C", or "" (nothing to offer).
using ValueKind = std::string;

// Options and positionals by name; anything else takes a value that is not completed.
const std::map<std::string, ValueKind> kValueKinds = {
    {"platform", "platforms"}, {"job", "jobs"},
    {"json", "files"},         {"junit", "files"},
    {"sarif", "files"},        {"category", "categories"},
    {"dir", "dirs"},           {"shell", "words:bash zsh fish"}};

struct CompletedCommand {
  std::string path;  // "" for preflight itself, "image build"
  std::vector<std::string> subcommands;
  std::vector<std::string> options;                       // "--platform", "-q", ...
  std::vector<std::pair<std::string, ValueKind>> valued;  // options that take a value
  ValueKind positional;
};

ValueKind kind_of(const std::string& name, const std::string& command) {
  if (command == "platform show" && name == "name") return "platforms";
  auto it = kValueKinds.find(name);
  return it == kValueKinds.end() ? "" : it->second;
}

void collect(const CLI::App& app, const std::string& path, std::vector<CompletedCommand>& out) {
  CompletedCommand command{path, {}, {}, {}, ""};
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    command.subcommands.push_back(sub->get_name());
  for (const auto* option : app.get_options()) {
    if (option->get_positional()) {
      if (command.positional.empty()) command.positional = kind_of(option->get_name(), path);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
    for (const auto& name : names) {
      command.options.push_back(name);
      if (option->get_expected_max() != 0)
        command.valued.emplace_back(
            name, kind_of(option->get_lnames().empty() ? "" : option->get_lnames().front(), path));
    }
  }
  out.push_back(command);
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string valued_pairs(const CompletedCommand& command) {
  std::vector<std::string> pairs;
  for (const auto& [option, kind] : command.valued)
    pairs.push_back(option + "=" + (kind.empty() ? "none" : kind));
  return joined(pairs);
}

// bash and zsh share the walk: the words typed so far select a command, the previous word an
// option's value; only the way of offering candidates differs.
std::string command_table(const std::vector<CompletedCommand>& commands) {
  std::string text = "_preflight_command() {\n  case $1 in\n";
  for (const auto& c : commands)
    text += fmt::format("    \"{}\") subs=\"{}\" opts=\"{}\" valued=\"{}\" positional=\"{}\" ;;\n", c.path,
                        joined(c.subcommands), joined(c.options), valued_pairs(c), c.positional);
  return text + "  esac\n}\n";
}

std::string bash_script(const std::vector<CompletedCommand>& commands) {
  return "# bash completion for preflight: eval \"$(preflight completion bash)\"\n" +
         command_table(commands) + R"sh(
_preflight_values() {  # KIND CURRENT
  local IFS=$'\n' candidate
  case $1 in
    platforms) COMPREPLY=($(compgen -W "$(preflight platforms 2>/dev/null | cut -d' ' -f1)" -- "$2")) ;;
    categories)
      COMPREPLY=()
      for candidate in $(preflight explain --list 2>/dev/null | cut -f1,2 | tr '\t' '\n' | sort -u); do
        [[ ${candidate,,} == "${2,,}"* ]] && COMPREPLY+=("$(printf '%q' "$candidate")")
      done ;;
    jobs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -X '!*.y*ml' -- "$2") $(compgen -d -- "$2")) ;;
    files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
    dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
    words:*) IFS=' '; COMPREPLY=($(compgen -W "${1#words:}" -- "$2")) ;;
  esac
}

_preflight() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmdpath="" word pair i
  local subs opts valued positional
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    _preflight_command "$cmdpath"
    [[ " $subs " == *" $word "* ]] && cmdpath=${cmdpath:+$cmdpath }$word
  done
  _preflight_command "$cmdpath"
  COMPREPLY=()
  for pair in $valued; do
    [[ ${pair%%=*} == "$prev" ]] && { _preflight_values "${pair#*=}" "$cur"; return; }
  done
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -n $subs ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ -n $positional ]]; then _preflight_values "$positional" "$cur"
  fi
}
complete -F _preflight preflight
)sh";
}

std::string zsh_script(const std::vector<CompletedCommand>& commands) {
  return "#compdef preflight\n# zsh completion for preflight: preflight completion zsh > "
         "\"${fpath[1]}/_preflight\"\n" +
         command_table(commands) + R"sh(
_preflight_values() {  # KIND
  case $1 in
    platforms) compadd -- ${(f)"$(preflight platforms 2>/dev/null | cut -d' ' -f1)"} ;;
    categories) compadd -- ${(fu)"$(preflight explain --list 2>/dev/null | cut -f1,2 | tr '\t' '\n')"} ;;
    jobs) _files -g '*.y(a|)ml' ;;
    files) _files ;;
    dirs) _files -/ ;;
    words:*) compadd -- ${=1#words:} ;;
  esac
}

_preflight() {
  local cmdpath="" word pair subs opts valued positional
  for word in ${words[2,CURRENT-1]}; do
    _preflight_command "$cmdpath"
    [[ " $subs " == *" $word "* ]] && cmdpath=${cmdpath:+$cmdpath }$word
  done
  _preflight_command "$cmdpath"
  for pair in ${=valued}; do
    if [[ ${pair%%=*} == ${words[CURRENT-1]} ]]; then _preflight_values ${pair#*=}; return; fi
  done
  if [[ $PREFIX == -* ]]; then compadd -- ${=opts}
  elif [[ -n $subs ]]; then compadd -- ${=subs}
  elif [[ -n $positional ]]; then _preflight_values $positional
  fi
}
compdef _preflight preflight
)sh";
}

std::string fish_values(const ValueKind& kind) {
  if (kind == "platforms")
    return " -f -a '(preflight platforms 2>/dev/null | string replace -r \" .*\" \"\")'";
  if (kind == "categories")
    return " -f -a '(preflight explain --list 2>/dev/null | string replace -r \"\\t.*\" \"\" | sort -u)'";
  if (kind == "jobs") return " -f -a '(__fish_complete_suffix .yaml)'";
  if (kind == "dirs") return " -f -a '(__fish_complete_directories)'";
  if (kind.rfind("words:", 0) == 0) return " -f -a '" + kind.substr(6) + "'";
  return kind == "files" ? " -F" : " -f";
}

std::string fish_script(const std::vector<CompletedCommand>& commands) {
  std::string text =
      "# fish completion for preflight: preflight completion fish > "
      "~/.config/fish/completions/preflight.fish\n"
      "complete -c preflight -f\n";
  for (const auto& c : commands) {
    // A command is under way when its words were seen and none of its subcommands yet.
    std::string condition =
        c.path.empty() ? "not __fish_seen_subcommand_from " + joined(commands.front().subcommands) : "";
    std::string words = c.path;
    for (std::size_t start = 0; !words.empty();) {
      const auto space = words.find(' ', start);
      condition += (condition.empty() ? "" : "; and ") + std::string("__fish_seen_subcommand_from ") +
                   words.substr(start, space == std::string::npos ? std::string::npos : space - start);
      if (space == std::string::npos) break;
      start = space + 1;
    }
    if (!c.path.empty() && !c.subcommands.empty())
      condition += "; and not __fish_seen_subcommand_from " + joined(c.subcommands);
    if (!c.subcommands.empty())
      text += fmt::format("complete -c preflight -n '{}' -f -a '{}'\n", condition, joined(c.subcommands));
    for (const auto& option : c.options) {
      const bool long_name = option.rfind("--", 0) == 0;
      std::string line = fmt::format("complete -c preflight -n '{}' {} {}", condition,
                                     long_name ? "-l" : "-s", option.substr(long_name ? 2 : 1));
      for (const auto& [name, kind] : c.valued)
        if (name == option) line += " -r" + fish_values(kind);
      text += line + "\n";
    }
    if (!c.positional.empty())
      text += fmt::format("complete -c preflight -n '{}'{}\n", condition, fish_values(c.positional));
  }
  return text;
}

}  // namespace

Command completion_command() {
  return {"completion", "Print a shell completion script: bash, zsh or fish", [](CLI::App& app) -> Action {
            auto shell = std::make_shared<std::string>();
            app.add_option("shell", *shell, "bash, zsh or fish")
                ->required()
                ->check(CLI::IsMember({"bash", "zsh", "fish"}));
            const CLI::App* root = app.get_parent();
            return [shell, root] {
              std::vector<CompletedCommand> commands;
              collect(*root, "", commands);
              if (*shell == "bash") std::cout << bash_script(commands);
              if (*shell == "zsh") std::cout << zsh_script(commands);
              if (*shell == "fish") std::cout << fish_script(commands);
              return 0;
            };
          }};
}

}  // namespace preflight::cli
