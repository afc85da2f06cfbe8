#include "check/shell_lint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "check/code_findings.hpp"
#include "check/requirements.hpp"
#include "check/shell_words.hpp"
#include "check/working_folder.hpp"
#include "diagnosis/job_words.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

struct Lint {
  const ShellText& shell;
  const ShellFacts& facts;
  SourceLocation where;
  std::vector<model::Finding>& out;
  const ShellState* state = nullptr;  // where this line runs

  void add(const char* rule, std::string message, std::string hint) {
    // A prediction, which the setup step's own run settles.
    model::Finding f = static_finding(rule, model::Severity::Error, "", 0);
    f.stage = shell.stage;
    f.location = where;
    f.message = std::move(message);
    f.hint = std::move(hint);
    out.push_back(std::move(f));
  }
};

std::string program_of(const std::string& word) { return fs::path(word).filename().string(); }

bool is_pip(const std::string& program) {
  return program == "pip" || program == "pip3" || (program.starts_with("pip3.") && program.size() > 5);
}

bool is_python(const std::string& program) { return program.starts_with("python"); }

bool has(const std::vector<std::string>& words, std::initializer_list<const char*> flags) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return std::any_of(flags.begin(), flags.end(),
                       [&](const char* f) { return w == f || w.starts_with(std::string(f) + "="); });
  });
}

// A requirement pip installs without an index: a local folder, archive or wheel.
bool local_requirement(const std::string& word) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return word.size() >= s.size() && word.compare(word.size() - s.size(), s.size(), s) == 0;
  };
  return word == "." || word.starts_with("./") || word.starts_with("/") || word.starts_with("../") ||
         word.starts_with("file:") || ends(".whl") || ends(".tar.gz") || ends(".zip");
}

// "23.0.1" >= "20" by release numbers.
bool version_at_least(const std::string& version, int major) { return std::atoi(version.c_str()) >= major; }

// What pip, offline, could not take from the image for `pip install ARGS`, as the end of a
// sentence ("needs torch>=2.5 (requirements.txt:3), and the image has torch 1.13.0a0"); empty
// when the image already satisfies every requirement and their dependencies.
std::string offline_problem(Lint& lint, const std::vector<std::string>& args) {
  const auto& facts = lint.facts;
  static const std::string kDownloads = "downloads its packages";
  if (!facts.index || !lint.state) return kDownloads;
  // These make pip fetch what is installed all the same.
  if (has(args, {"--target", "-t", "--prefix", "--root", "--ignore-installed", "-I", "--force-reinstall"}))
    return kDownloads + " (its options ignore what the image has installed)";
  std::vector<Requirement> wanted;
  std::vector<std::string> unknown;
  bool after_install = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "install" && !after_install) {
      after_install = true;
    } else if (!after_install || word.empty()) {
      continue;
    } else if (word == "-r" || word == "--requirement" || word.starts_with("--requirement=") ||
               (word.starts_with("-r") && word.size() > 2)) {
      std::string file = word == "-r" || word == "--requirement"
                             ? (i + 1 < args.size() ? args[++i] : "")
                             : word.substr(word[1] == '-' ? word.find('=') + 1 : 2);
      auto path = lint.state->absolute(file);
      if (!path) {
        unknown.push_back(
            fmt::format("-r {} (the working folder is unknown: {})", file, lint.state->folder().why));
        continue;
      }
      auto read = read_requirements(*path, [&](const std::string& p) { return facts.read(p); });
      for (const auto& missing : read.unreadable)
        unknown.push_back(fmt::format("-r {} ({} cannot be read before the job runs)", file, missing));
      if (read.no_index) return "";  // --no-index in the file: nothing is downloaded
      for (auto& r : read.requirements) {
        if (auto code = in_code_mount(r.where.file.generic_string(), *facts.plan)) r.where.file = *code;
        wanted.push_back(std::move(r));
      }
    } else if (word[0] == '-') {
      if (word == "-c" || word == "--constraint" || word == "-f" || word == "--find-links" || word == "-i" ||
          word == "--index-url" || word == "--extra-index-url" || word == "-e" || word == "--editable")
        ++i;  // -e: a local folder, checked above
    } else if (auto r = parse_requirement(word)) {
      wanted.push_back(std::move(*r));
    } else {
      unknown.push_back(word);
    }
  }
  std::vector<std::string> problems;
  for (const auto& u : unmet_requirements(wanted, *facts.index, has(args, {"--no-deps"}))) {
    const auto& r = u.requirement;
    const std::string at =
        r.where.file.empty() ? "" : fmt::format(" ({}:{})", r.where.file.generic_string(), r.where.line);
    problems.push_back(
        fmt::format("needs {}{}, {}{}", r.text, at, u.problem.starts_with("which") ? "" : "and ", u.problem));
  }
  for (const auto& u : unknown) problems.push_back("needs " + u);
  if (problems.empty()) return "";
  std::string text;
  for (std::size_t i = 0; i < problems.size() && i < 3; ++i) text += (i ? "; " : "") + problems[i];
  if (problems.size() > 3) text += fmt::format(" (and {} more)", problems.size() - 3);
  return text;
}

void lint_pip(Lint& lint, const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "install") == args.end()) return;
  const auto& facts = lint.facts;
  if (!facts.pip_version) {
    lint.add("pip-not-in-image", "pip install runs, but the image has no pip",
             "Use an image with pip (python3-pip), or build the packages into the image.");
    return;
  }
  const bool user = has(args, {"--user"});
  const bool elsewhere = has(args, {"--target", "-t", "--prefix", "--root"});
  const bool forced_system = has(args, {"--no-user"});
  if (!facts.root && !user && !elsewhere && (forced_system || !version_at_least(*facts.pip_version, 20)))
    lint.add(
        "pip-system-install",
        fmt::format("pip install writes into the system's site-packages, which {} may not write: {} runs "
                    "the job as {}{}",
                    facts.user, facts.platform, facts.user,
                    forced_system ? " and --no-user forbids the fallback"
                                  : fmt::format(", and the image's pip {} does not fall back to a user "
                                                "install",
                                                *facts.pip_version)),
        "Install with pip install --user (or --target into a writable folder).");
  if (facts.network || has(args, {"--no-index"})) return;
  bool needs_index = has(args, {"-r", "--requirement"});
  bool after_install = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "install") {
      after_install = true;
    } else if (!after_install || word.empty()) {
      continue;
    } else if (word[0] == '-') {
      // Options that take a value: skip it.
      if (word == "-r" || word == "--requirement" || word == "-t" || word == "--target" || word == "-c" ||
          word == "--constraint" || word == "-f" || word == "--find-links" || word == "--prefix" ||
          word == "-e" || word == "--editable") {
        if (word == "-e" || word == "--editable")
          needs_index |= i + 1 < args.size() && !local_requirement(args[i + 1]);
        ++i;
      }
    } else if (!local_requirement(word)) {
      needs_index = true;
    }
  }
  if (!needs_index) return;
  const std::string why = offline_problem(lint, args);
  if (why.empty()) return;  // pip: "Requirement already satisfied" for each of them
  lint.add("pip-needs-network",
           fmt::format("pip install {}: it would download from a package index, and {} has no network", why,
                       facts.platform),
           "Upload the wheels with the code and install them offline (pip install --user --no-index "
           "--find-links wheels/ -r requirements.txt), or use an image that has the packages.");
}

void lint_command(Lint& lint, std::vector<std::string> words) {
  // Leading assignments and wrappers do not change what runs.
  while (!words.empty() && (words[0].find('=') != std::string::npos || words[0] == "exec" ||
                            words[0] == "time" || words[0] == "env" || words[0] == "nohup"))
    words.erase(words.begin());
  if (words.empty()) return;
  const auto& facts = lint.facts;
  std::string program = program_of(words[0]);
  if (program == "sudo") {
    lint.add(
        "sudo-on-platform",
        fmt::format("sudo is not available: {} runs the job as {}, without root", facts.platform, facts.user),
        "Drop sudo: install packages with pip install --user, or build what needs root into the image.");
    words.erase(words.begin());
    while (!words.empty() && words[0][0] == '-') words.erase(words.begin());
    if (words.empty()) return;
    program = program_of(words[0]);
  }
  const std::vector<std::string> args(words.begin() + 1, words.end());
  if (program == "apt-get" || program == "apt" || program == "yum" || program == "dnf" || program == "apk") {
    const bool installs = has(args, {"install", "update", "upgrade", "add"});
    if (installs && !facts.root)
      lint.add(
          "system-package-install",
          fmt::format("{} needs root, and {} runs the job as {}{}", program, facts.platform, facts.user,
                      facts.network ? "" : "; it also needs the network, which the platform does not have"),
          "Build system packages into the image (its recipe or Dockerfile) instead of installing them at "
          "start-up.");
    return;
  }
  if (is_pip(program)) return lint_pip(lint, args);
  if (is_python(program) && args.size() >= 2 && args[0] == "-m" && (args[1] == "pip" || args[1] == "pip3"))
    return lint_pip(lint, std::vector<std::string>(args.begin() + 2, args.end()));
  if (facts.network) return;
  const bool git_fetch = program == "git" && has(args, {"clone", "fetch", "pull", "submodule"});
  const bool download = program == "wget" || program == "curl" || program == "aria2c" ||
                        program == "gsutil" || program == "azcopy" ||
                        (program == "aws" && has(args, {"s3"})) ||
                        (program == "huggingface-cli" && has(args, {"download"}));
  const bool conda = (program == "conda" || program == "mamba") && has(args, {"install", "create", "update"});
  if (conda)
    lint.add("conda-needs-network",
             fmt::format("{} install downloads packages, and {} has no network", program, facts.platform),
             "Build the environment into the image instead of creating it at start-up.");
  else if (git_fetch || download)
    lint.add("download-needs-network",
             fmt::format("{} needs the network, and {} has none: what it fetches will be missing", program,
                         facts.platform),
             "Upload the files with the code, or give them to the job as " +
                 diagnosis::input_words(facts.plan ? facts.plan->facts.job_kind : model::JobKind::JobYaml) +
                 ".");
}

}  // namespace

std::vector<model::Finding> lint_shell(const ShellText& shell, const ShellFacts& facts) {
  std::vector<model::Finding> findings;
  static const plan::RunPlan no_plan;
  ShellState state(facts.plan ? *facts.plan : no_plan);
  walk_shell(shell.text, shell.where, state, [&](const SimpleCommand& command, const ShellState& now) {
    Lint lint{shell, facts, {shell.where.file, shell.where.line + command.line, 0}, findings, &now};
    lint_command(lint, command.words);
  });
  return findings;
}

std::vector<fs::path> requirement_files_installed(const ShellText& shell, const plan::RunPlan& plan) {
  std::vector<fs::path> files;
  ShellState state(plan);
  walk_shell(shell.text, shell.where, state, [&](const SimpleCommand& command, const ShellState& now) {
    const auto& words = command.words;
    const bool pip = std::any_of(words.begin(), words.end(),
                                 [](const std::string& w) { return is_pip(program_of(w)) || w == "pip"; });
    if (!pip || std::find(words.begin(), words.end(), "install") == words.end()) return;
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::string file;
      if ((words[i] == "-r" || words[i] == "--requirement") && i + 1 < words.size())
        file = words[++i];
      else if (words[i].starts_with("--requirement="))
        file = words[i].substr(14);
      else if (words[i].starts_with("-r") && words[i].size() > 2)
        file = words[i].substr(2);
      if (file.empty()) continue;
      if (auto path = now.absolute(file))
        if (auto code = in_code_mount(*path, plan)) files.push_back(code->lexically_normal());
    }
  });
  return files;
}

std::vector<fs::path> scripts_run_by(const std::string& command, const fs::path& code_dir) {
  std::vector<fs::path> scripts;
  for (const auto& word : split_shell_words(command)) {
    if (word.kind != ShellWord::Kind::Word || word.text.size() < 4 || !word.text.ends_with(".sh")) continue;
    const fs::path script = fs::path(word.text).lexically_normal();
    std::error_code ec;
    if (script.is_relative() && fs::is_regular_file(code_dir / script, ec)) scripts.push_back(script);
  }
  return scripts;
}

}  // namespace preflight::check
