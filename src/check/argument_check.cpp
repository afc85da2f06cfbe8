#include "check/argument_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "check/code_findings.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::check {

namespace {

bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// The values an option takes: (fewest, most); most -1 for any number.
std::pair<int, int> arity(const ArgOption& option) {
  static const std::set<std::string> flags_only = {"store_true", "store_false", "store_const", "append_const",
                                                   "count",      "help",        "version"};
  if (flags_only.count(option.action)) return {0, 0};
  if (option.nargs.empty()) return {1, 1};
  if (option.nargs == "?") return {0, 1};
  if (option.nargs == "*") return {0, -1};
  if (option.nargs == "+") return {1, -1};
  const int n = std::atoi(option.nargs.c_str());
  return {n, n};
}

class ArgumentCheck {
 public:
  ArgumentCheck(const ArgParser& parser, const EntryPoint& entry, const SourceLocation& command_where,
                std::vector<model::Finding>& out)
      : parser_(parser), entry_(entry), command_where_(command_where), out_(out) {}

  void run() {
    std::set<const ArgOption*> given;
    std::size_t positionals = 0;
    const auto& args = entry_.args;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& arg = args[i];
      if (arg == "--") {
        positionals += args.size() - i - 1;
        break;
      }
      if (arg.size() < 2 || arg[0] != '-' || is_number(arg)) {
        ++positionals;
        continue;
      }
      const auto eq = arg.find('=');
      const std::string flag = arg.substr(0, eq);
      const ArgOption* option = find(flag);
      if (!option) {
        if (!parser_.parse_known) unknown(flag);
        continue;
      }
      given.insert(option);
      std::vector<std::size_t> values;  // indices of args; --flag=value is its own
      if (eq != std::string::npos) values.push_back(i);
      auto [fewest, most] = arity(*option);
      while (eq == std::string::npos && (most < 0 || static_cast<int>(values.size()) < most) &&
             i + 1 < args.size() && (args[i + 1].empty() || args[i + 1][0] != '-' || is_number(args[i + 1])))
        values.push_back(++i);
      if (static_cast<int>(values.size()) < fewest)
        problem(fmt::format("{} expects {} value{}, and the command gives {}", flag, fewest,
                            fewest == 1 ? "" : "s", values.size()),
                *option);
      for (const auto at : values) {
        // A value only the shell knows ($LR, $(...), a glob) is left to it.
        if (entry_.uncertain.count(at)) continue;
        check_value(flag, at == i && eq != std::string::npos ? arg.substr(eq + 1) : args[at], *option);
      }
    }
    for (const auto& option : parser_.options)
      if (option.required && !given.count(&option))
        problem(fmt::format("the required option {} is missing from the command", option.flags.front()),
                option);
    std::size_t wanted = 0;
    for (const auto& p : parser_.positionals) wanted += p.nargs.empty() ? 1 : arity(p).first;
    if (positionals < wanted && !parser_.positionals.empty())
      problem(fmt::format("the command gives {} positional argument{}, and {} needs {}", positionals,
                          positionals == 1 ? "" : "s", entry_.script, wanted),
              parser_.positionals[std::min(positionals, parser_.positionals.size() - 1)]);
  }

 private:
  const ArgOption* find(const std::string& flag) const {
    for (const auto& option : parser_.options)
      if (std::find(option.flags.begin(), option.flags.end(), flag) != option.flags.end()) return &option;
    if (!parser_.allow_abbrev || flag.rfind("--", 0) != 0) return nullptr;
    const ArgOption* match = nullptr;
    for (const auto& option : parser_.options)
      for (const auto& f : option.flags)
        if (f.rfind(flag, 0) == 0) {
          if (match && match != &option) return nullptr;  // ambiguous: argparse refuses it too
          match = &option;
        }
    return match;
  }

  void check_value(const std::string& flag, const std::string& value, const ArgOption& option) {
    if (option.type == "int" && !(is_number(value) && value.find_first_of(".eE") == std::string::npos))
      problem(fmt::format("{} {}: not an integer, and {} parses it with int()", flag, value, entry_.script),
              option);
    else if (option.type == "float" && !is_number(value))
      problem(fmt::format("{} {}: not a number, and {} parses it with float()", flag, value, entry_.script),
              option);
    else if (option.choices &&
             std::find(option.choices->begin(), option.choices->end(), value) == option.choices->end())
      problem(
          fmt::format("{} {}: not one of its choices ({})", flag, value, fmt::join(*option.choices, ", ")),
          option);
  }

  void unknown(const std::string& flag) {
    std::vector<std::string> flags;
    for (const auto& option : parser_.options)
      flags.insert(flags.end(), option.flags.begin(), option.flags.end());
    auto f = finding(fmt::format("{} does not accept {}{}: argparse stops with \"unrecognized arguments\"",
                                 entry_.script, flag, did_you_mean(flag, flags)),
                     flag);
    f.hint =
        fmt::format("Correct the option in the job's command line, or add it to {}'s parser.", entry_.script);
    out_.push_back(std::move(f));
  }

  void problem(const std::string& message, const ArgOption& option) {
    auto f = finding(message + fmt::format(" (defined at {}:{})", entry_.script, option.line),
                     option.flags.empty() ? option.dest : option.flags.front());
    f.hint =
        "Give the argument as the script defines it in the job's command line; argparse exits with status 2 "
        "before anything else runs.";
    out_.push_back(std::move(f));
  }

  // `subject`: the option or positional, as argparse's own error names it, so that the dry run's
  // failure confirms the prediction.
  model::Finding finding(std::string message, std::string subject) const {
    auto f = static_finding("argument-not-accepted", model::Severity::Error, "", 0);
    f.location = command_where_;
    f.message = std::move(message);
    f.subject = std::move(subject);
    if (entry_.uncertain.empty()) {
      f.prediction = model::Prediction::None;  // argparse refuses it whatever the branches
    } else {
      // A word the shell expands may become several, none, or the missing one: a prediction
      // for the dry run to settle, never a stop.
      f.message += fmt::format("; the command's word {} is known only when the shell runs it",
                               entry_.args[*entry_.uncertain.begin()]);
    }
    return f;
  }

  const ArgParser& parser_;
  const EntryPoint& entry_;
  const SourceLocation& command_where_;
  std::vector<model::Finding>& out_;
};

}  // namespace

void check_arguments(const ArgParser& parser, const EntryPoint& entry, const SourceLocation& command_where,
                     std::vector<model::Finding>& out) {
  ArgumentCheck(parser, entry, command_where, out).run();
}

}  // namespace preflight::check
