#include "check/code_findings.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "check/argument_check.hpp"
#include "check/import_reach.hpp"
#include "check/shell_words.hpp"
#include "check/stages.hpp"
#include "diagnosis/job_words.hpp"
#include "util/did_you_mean.hpp"
#include "util/text.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

std::string top_level(const std::string& dotted) { return dotted.substr(0, dotted.find('.')); }

// Where a finding is reported: in the files the job runs (its scripts and what they import,
// check/import_reach.hpp). Where the imports could not all be followed, the other files of the
// code folder are still read, their findings warnings.
struct Reach {
  std::map<std::string, std::string> modules;  // the job's own modules by dotted name
  CodeReach code;
  std::string entry;  // the entry script, if there is one
  bool reads(const std::string& file) const { return code.runs(file) || !code.complete(); }
  model::Severity severity(const std::string& file, model::Severity wanted) const {
    return code.runs(file) ? wanted : model::Severity::Warning;
  }
};

void syntax_findings(const CodeScan& scan, const Reach& reach, std::vector<model::Finding>& out) {
  for (const auto& file : scan.files) {
    if (!file.syntax_error || !reach.reads(file.path)) continue;
    auto f = static_finding("syntax-error-in-image", reach.severity(file.path, model::Severity::Error),
                            file.path, file.syntax_error->line);
    f.location.column = file.syntax_error->column;
    // Certain in the entry script, which Python compiles before anything runs; another file
    // fails only if it is imported.
    if (reach.entry == file.path) f.prediction = model::Prediction::None;
    f.message = fmt::format("the image's Python {} cannot parse {}: {}", scan.python_version, file.path,
                            file.syntax_error->message);
    f.hint = fmt::format(
        "Fix the syntax, or, if this line parses on your machine, it needs a newer Python than the image's "
        "{}: "
        "write it for {} or choose an image with a newer Python.",
        scan.python_version, scan.python_version);
    out.push_back(std::move(f));
  }
}

void import_findings(const CodeScan& scan, const StaticContext& context, const Reach& reach,
                     std::vector<model::Finding>& out) {
  if (!context.index) return;
  const auto& modules = reach.modules;
  std::set<std::string> local_tops;
  for (const auto& [name, file] : modules) local_tops.insert(top_level(name));
  const std::vector<std::string> known(context.index->modules.begin(), context.index->modules.end());
  std::set<std::string> reported;  // one finding per missing module
  for (const auto& file : scan.files) {
    if (!reach.reads(file.path)) continue;
    for (const auto& use : file.imports) {
      const std::string top = top_level(use.module);
      if (use.guarded || use.level > 0 || top.empty() || local_tops.count(top) ||
          context.index->importable(top) || !reach.code.runs(file.path, use))
        continue;
      if (!reported.insert(top).second) continue;
      // An import runs when its file loads only at module level, outside if, loop, try and with
      // (and, in a file that is only imported, outside the main guard).
      const bool on_load = use.module_scope && !use.conditional;
      const bool fatal = on_load && reach.code.runs(file.path) && !context.setup_installs;
      auto f = static_finding("import-not-in-image",
                              fatal ? model::Severity::Error : model::Severity::Warning, file.path, use.line);
      f.subject = top;
      f.stage = use.module_scope ? "init" : "";
      // Certain only for the entry script's own imports that run as it loads.
      if (fatal && file.path == reach.entry) f.prediction = model::Prediction::None;
      f.message = fmt::format("the image cannot import \"{}\"{}: no such module on its Python {} ({})",
                              use.module, did_you_mean(top, known), context.index->python_version,
                              on_load ? fmt::format("imported when {} loads", file.path)
                                      : fmt::format("imported when {}:{} runs", file.path, use.line));
      f.hint = context.setup_installs
                   ? fmt::format(
                         "The setup step installs packages: make sure it installs the one that provides "
                         "\"{}\", from files uploaded with the code if the platform has no network.",
                         top)
                   : fmt::format(
                         "Use an image that has it, or install it in setup: (pip install --user ...; with "
                         "no network on the platform, from a wheel uploaded with the code: pip install "
                         "--user --no-index --find-links wheels/ PACKAGE).");
      out.push_back(std::move(f));
    }
  }
}

// Names the job's environment will have: the plan's (image, platform, job), the shell's own,
// and those the command line or setup assigns.
// Names a shell text assigns: NAME=..., export/local/readonly NAME=..., for NAME in, read NAME.
void assigned_names(const std::string& text, std::set<std::string>& names) {
  static const re2::RE2 assignment(
      R"((?:^|[\s;&|(])(?:(?:export|local|readonly|declare)\s+)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_]\w*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*))");
  re2::StringPiece rest(text);
  std::string a, b, c;
  while (re2::RE2::FindAndConsume(&rest, assignment, &a, &b, &c))
    for (const std::string* name : {&a, &b, &c})
      if (!name->empty()) names.insert(*name);
}

std::set<std::string> environment_names(const plan::RunPlan& plan) {
  std::set<std::string> names = {"PWD", "SHLVL", "_", "OLDPWD"};
  for (const auto& entry : plan.process.env) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("PREFLIGHT_", 0) != 0) names.insert(name);
  }
  for (const std::string* text : {&plan.setup, &plan.command}) assigned_names(*text, names);
  return names;
}

void env_findings(const CodeScan& scan, const StaticContext& context, const Reach& reach,
                  std::vector<model::Finding>& out) {
  const auto names = environment_names(context.plan);
  std::vector<std::string> platform_names;
  for (const auto& name : names)
    if (name != "PWD" && name != "SHLVL" && name != "_" && name != "OLDPWD") platform_names.push_back(name);
  for (const auto& file : scan.files) {
    if (!reach.reads(file.path)) continue;
    for (const auto& read : file.env) {
      if (read.has_default || read.guarded || names.count(read.name)) continue;
      const bool raises = read.how == "subscript";
      auto f = static_finding(
          raises ? "env-not-set" : "env-maybe-unset",
          reach.severity(file.path, raises ? model::Severity::Error : model::Severity::Warning), file.path,
          read.line);
      f.subject = read.name;
      f.message =
          fmt::format("{} reads the environment variable {}, which {} does not set{}", file.path, read.name,
                      context.plan.platform, raises ? " (KeyError)" : ": the read gives None");
      if (auto same = context.policies.variables.equivalent(read.name, names))
        f.hint = fmt::format("On {}, {} holds {}: read that instead. ", context.plan.platform, same->name,
                             same->meaning);
      else if (auto suggestion = closest_match(read.name, platform_names))
        f.hint = fmt::format("Did you mean {}, which {} sets? ", *suggestion, context.plan.platform);
      f.hint += fmt::format("Either {}, or read it with a default (os.environ.get(\"{}\", ...)).",
                            diagnosis::set_variable_words(read.name, context.plan.facts.job_kind), read.name);
      out.push_back(std::move(f));
    }
  }
}

bool under(const std::string& path, const std::string& dir) { return path == dir || is_under(path, dir); }

// Where a path would be on the platform.
enum class Place {
  Known,      // in the image, an input, the runtime's /dev, /proc, /sys, or the uploaded code
  Writable,   // a folder the job can write (home, outputs, /tmp, scratch): it may create it
  CodeLacks,  // in the read-only code mount, which has no such file
  Nowhere,
};

// A glob pattern ("data/names/*.txt") is known as far as its folder before the first wildcard.
std::string before_wildcards(const std::string& path) {
  const auto wildcard = path.find_first_of("*?[");
  if (wildcard == std::string::npos) return path;
  const auto slash = path.rfind('/', wildcard);
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

Place place_on_platform(const std::string& pattern, const plan::RunPlan& plan, const fs::path& image_rootfs) {
  const std::string path = before_wildcards(pattern);
  for (const char* runtime : {"/dev", "/proc", "/sys"})
    if (under(path, runtime)) return Place::Known;
  for (const auto& dir : plan.user_dirs)
    if (under(path, dir.path)) return Place::Writable;
  for (const auto& mount : plan.mounts) {
    if (!under(path, mount.destination)) continue;
    if (mount.kind != model::MountFact::Kind::Code || !mount.read_only || !mount.overlay_dir.empty())
      return mount.read_only ? Place::Known : Place::Writable;
    // The uploaded code is known file by file.
    std::error_code ec;
    const fs::path on_host = mount.source / fs::path(path).lexically_relative(mount.destination);
    return fs::exists(on_host, ec) || fs::is_symlink(on_host, ec) ? Place::Known : Place::CodeLacks;
  }
  return resolve_in_root(image_rootfs, path).has_value() ? Place::Known : Place::Nowhere;
}

// An argparse default of the entry script that the command line gives a value of its own.
bool replaced_by_command(const PathLiteral& literal, const ScannedFile& file, const StaticContext& context) {
  if (literal.option.empty() || !context.entry || context.entry->script != file.path) return false;
  return std::any_of(context.entry->args.begin(), context.entry->args.end(), [&](const std::string& arg) {
    return arg == literal.option || arg.rfind(literal.option + "=", 0) == 0;
  });
}

// What is wrong with a path on the platform, if anything: the message's end and its severity.
std::optional<std::pair<std::string, model::Severity>> path_problem(const std::string& value,
                                                                    const plan::RunPlan& plan,
                                                                    const fs::path& image_rootfs,
                                                                    const WorkingFolder& folder) {
  static const re2::RE2 windows(R"(^[A-Za-z]:[\\/])");
  static const re2::RE2 laptop_home(R"(^/(?:home|Users)/([^/]+)(?:/|$))");
  const std::string& home = plan.facts.home;
  std::string owner;
  if (value.empty()) return std::nullopt;
  if (re2::RE2::PartialMatch(value, windows))
    return std::make_pair(std::string("is a Windows path"), model::Severity::Error);
  if (value[0] == '~')
    return std::make_pair(
        fmt::format("is under a home folder: on {} the home is {}, and holds nothing of yours", plan.platform,
                    home),
        model::Severity::Warning);
  if (re2::RE2::PartialMatch(value, laptop_home, &owner) && !under(value, home))
    return std::make_pair(fmt::format("is in {}'s home folder, which {} does not have", owner, plan.platform),
                          model::Severity::Error);
  const bool relative = value[0] != '/';
  if (relative && !folder.path) return std::nullopt;  // relative to a folder only the run knows
  const std::string resolved =
      relative ? (fs::path(*folder.path) / value).lexically_normal().generic_string() : value;
  const Place place = place_on_platform(resolved, plan, image_rootfs);
  if (place == Place::Known || place == Place::Writable) return std::nullopt;
  const std::string lacks = place == Place::CodeLacks
                                ? "is in the read-only code folder, and the uploaded code has no such file"
                                : "is neither in the image nor mounted";
  if (relative)
    return std::make_pair(fmt::format("resolves, from the working folder {} ({}), to {}, which {}",
                                      *folder.path, folder.why, resolved, lacks),
                          model::Severity::Error);
  return std::make_pair(place == Place::CodeLacks
                            ? std::string(lacks)
                            : std::string("is neither in the image nor one of the platform's mounts"),
                        model::Severity::Warning);
}

// The working folder the job's Python runs in, as the caller found it, else the platform's.
WorkingFolder code_folder(const StaticContext& context) {
  if (!context.code_folder.why.empty()) return context.code_folder;
  return {context.plan.process.cwd, "the folder " + context.plan.platform + " starts the job in"};
}

// The option or key a path word follows on its line: "--data" in `--data /x`, "data_root" in
// `data_root: /x`.
std::string name_before(const std::string& line, std::size_t at) {
  std::size_t end = at;
  while (end > 0 && std::string(" \t=:\"'[,(").find(line[end - 1]) != std::string::npos) --end;
  std::size_t start = end;
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(line[start - 1])) || line[start - 1] == '-' ||
                       line[start - 1] == '_' || line[start - 1] == '.'))
    --start;
  return line.substr(start, end - start);
}

model::Finding path_finding(const std::string& value, const std::string& problem, model::Severity severity,
                            const std::string& file, int line, const model::PlatformFacts& facts) {
  auto f = static_finding("path-not-on-platform", severity, file, line);
  f.subject = value;
  f.message = fmt::format("the path \"{}\" {}", value, problem);
  f.hint = fmt::format(
      "Give the job its data as {}, or build the path from the platform's variables; write results to {}.",
      diagnosis::input_words(facts.job_kind), diagnosis::output_words(facts));
  return f;
}

void path_findings(const CodeScan& scan, const StaticContext& context, const Reach& reach,
                   std::vector<model::Finding>& out) {
  for (const auto& file : scan.files) {
    if (!reach.reads(file.path)) continue;
    for (const auto& literal : file.paths) {
      if (replaced_by_command(literal, file, context)) continue;
      auto problem = path_problem(literal.value, context.plan, context.image_rootfs, code_folder(context));
      if (!problem) continue;
      auto f = path_finding(literal.value, problem->first, reach.severity(file.path, problem->second),
                            file.path, literal.line, context.plan.facts);
      f.stage = path_stage(literal.option, literal.use, literal.value);
      out.push_back(std::move(f));
    }
  }
}

// What a performance pattern costs, and what to do instead. A pattern added to PerfPattern
// without its text here is a compiler warning (-Wswitch), not a finding dropped.
std::pair<std::string, std::string> perf_text(const PerfUse& use) {
  switch (use.pattern) {
    case PerfPattern::TfOpInLoop:
      return {fmt::format("{} creates a graph operation inside a loop that runs a session: the graph grows "
                          "with every iteration, and each run gets slower",
                          use.detail),
              "Build the operation once before the loop (a placeholder fed at each step) and only run it "
              "inside."};
    case PerfPattern::TfMapBeforeBatch:
      return {"map() runs before batch(): the function is called once per element instead of once per batch",
              "Batch first and map a vectorized function over the batch: dataset.batch(n).map(f)."};
    case PerfPattern::TfMapWithoutParallelCalls:
      return {
          fmt::format("{}() without num_parallel_calls runs on one core", use.detail),
          "Pass num_parallel_calls=tf.data.AUTOTUNE (tf.data.experimental.AUTOTUNE before TensorFlow 2.4)."};
    case PerfPattern::TorchDataloaderNoWorkers:
      return {
          "the DataLoader loads batches in the training process (num_workers=0): the GPU waits for the "
          "data",
          "Set num_workers to a few per GPU (and mind /dev/shm, docs/diagnosis.md); keep 0 only for tiny "
          "in-memory datasets."};
  }
  throw std::logic_error("a performance pattern without a text");
}

void perf_findings(const CodeScan& scan, const StaticContext& context, const Reach& reach,
                   std::vector<model::Finding>& out) {
  // Loading in the training process costs GPU time only when there are GPUs to wait, and
  // workers only help when the platform gives the job more than one core.
  const bool starved = context.plan.facts.gpus > 0 && context.plan.limits.cpus != 1;
  for (const auto& file : scan.files) {
    if (!reach.reads(file.path)) continue;
    for (const auto& use : file.perf) {
      if (use.pattern == PerfPattern::TorchDataloaderNoWorkers && !starved) continue;
      auto f = static_finding(rule_id(use.pattern), model::Severity::Warning, file.path, use.line);
      std::tie(f.message, f.hint) = perf_text(use);
      f.prediction = model::Prediction::None;  // advice on speed, not a failure to come
      out.push_back(std::move(f));
    }
  }
}

}  // namespace

model::Finding static_finding(const char* rule, model::Severity severity, const std::string& file, int line) {
  model::Finding f;
  f.rule = rule;
  f.severity = severity;
  f.phase = model::Phase::Static;
  f.location = {file, line, 0};
  f.prediction = model::Prediction::Unverified;  // a risk until the dry run settles it
  return f;
}

std::optional<EntryPoint> entry_point(const std::string& command, const fs::path& code_dir) {
  for (const auto& simple : shell_commands(command)) {
    const auto& words = simple.words;
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::string script;
      if (words[i].text == "-m" && i + 1 < words.size()) {
        std::string module = words[i + 1].text;
        std::replace(module.begin(), module.end(), '.', '/');
        std::error_code ec;
        script =
            fs::is_regular_file(code_dir / (module + ".py"), ec) ? module + ".py" : module + "/__main__.py";
        ++i;
      } else if (words[i].text.ends_with(".py")) {
        script = fs::path(words[i].text).lexically_normal().generic_string();
      } else {
        continue;
      }
      std::error_code ec;
      if (!fs::is_regular_file(code_dir / script, ec)) continue;
      EntryPoint entry{script, {}, static_cast<int>(i)};
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if (!words[j].certain) entry.uncertain.insert(entry.args.size());
        entry.args.push_back(words[j].text);
      }
      return entry;
    }
  }
  return std::nullopt;
}

namespace {

// The script that words[i] (and the words after it) make Python run, found from the working
// folder `now` says; i is moved past a module name.
std::optional<fs::path> script_at(const std::vector<std::string>& words, std::size_t& i,
                                  const ShellState& now, const fs::path& code_dir,
                                  const plan::RunPlan& plan) {
  std::optional<fs::path> script;
  if (words[i] == "-m" && i + 1 < words.size()) {
    // python -m pkg.mod: found from the working folder (sys.path[0]).
    std::string module = words[++i];
    std::replace(module.begin(), module.end(), '.', '/');
    auto folder = now.folder().path ? in_code_mount(*now.folder().path, plan) : std::nullopt;
    if (!folder) return std::nullopt;
    std::error_code ec;
    script = fs::is_regular_file(code_dir / *folder / (module + ".py"), ec)
                 ? *folder / (module + ".py")
                 : *folder / module / "__main__.py";
  } else if (words[i].size() > 3 && words[i].compare(words[i].size() - 3, 3, ".py") == 0) {
    if (auto path = now.absolute(words[i])) script = in_code_mount(*path, plan);
  }
  std::error_code ec;
  if (!script || !fs::is_regular_file(code_dir / *script, ec)) return std::nullopt;
  return script->lexically_normal();
}

}  // namespace

std::optional<EntryPoint> entry_point(const std::string& command, const fs::path& code_dir,
                                      const plan::RunPlan& plan, const SourceLocation& where) {
  std::optional<EntryPoint> found;
  ShellState state(plan);
  walk_shell(command, where, state, [&](const SimpleCommand& simple, const ShellState& now) {
    if (found) return;
    const auto& words = simple.words;
    for (std::size_t i = 0; i < words.size() && !found; ++i) {
      auto script = script_at(words, i, now, code_dir, plan);
      if (!script) continue;
      EntryPoint entry{script->generic_string(), {}, static_cast<int>(i)};
      for (std::size_t j = i + 1; j < words.size(); ++j) {
        if (!simple.certain[j]) entry.uncertain.insert(entry.args.size());
        entry.args.push_back(words[j]);
      }
      found = std::move(entry);
    }
  });
  return found;
}

std::vector<std::string> python_scripts(const std::string& text, const fs::path& code_dir,
                                        const plan::RunPlan& plan, const SourceLocation& where,
                                        const std::optional<WorkingFolder>& start) {
  std::vector<std::string> scripts;
  ShellState state(plan);
  if (start) state.start_in(*start);
  walk_shell(text, where, state, [&](const SimpleCommand& simple, const ShellState& now) {
    if (!runs_python(simple.words)) return;
    for (std::size_t i = 0; i < simple.words.size(); ++i)
      if (auto script = script_at(simple.words, i, now, code_dir, plan);
          script && std::find(scripts.begin(), scripts.end(), script->generic_string()) == scripts.end())
        scripts.push_back(script->generic_string());
  });
  return scripts;
}

std::vector<model::Finding> text_path_findings(const std::string& text, const SourceLocation& first_line,
                                               const std::string& stage, const plan::RunPlan& plan,
                                               const fs::path& image_rootfs, bool relative_paths,
                                               const std::optional<WorkingFolder>& start) {
  // A path-like token: absolute with two parts or more, under ~, a Windows drive, or ../;
  // after a space, a quote, =, : or [ (so --data=/x and key: /x count).
  static const re2::RE2 token(
      R"re((?:^|[\s"'=:\[,(])((?:/[^/\s"',\]\})$;|&]+/|~/|[A-Za-z]:[\\/]|\.\./)[^\s"',\]\})$;|&]*))re");
  std::vector<model::Finding> findings;
  auto check = [&](const std::string& piece, int index, const WorkingFolder& folder,
                   const std::vector<std::string>& words) {
    re2::StringPiece rest(piece);
    std::string value;
    while (re2::RE2::FindAndConsume(&rest, token, &value)) {
      if (value.find("://") != std::string::npos || value.find('*') != std::string::npos) continue;
      if (!relative_paths && value.rfind("../", 0) == 0) continue;
      auto problem = path_problem(value, plan, image_rootfs, folder);
      if (!problem) continue;
      auto f = path_finding(value, problem->first, problem->second, first_line.file.string(),
                            first_line.line + index, plan.facts);
      // A setup line fails the setup step; a program that is not there fails the start; a
      // path given to the job fails where the job uses it.
      const std::size_t at = static_cast<std::size_t>(rest.data() - piece.data()) - value.size();
      if (stage == "setup")
        f.stage = "setup";
      else if (!words.empty() && words[0] == value)
        f.stage = "init";
      else
        f.stage = path_stage(name_before(piece, at), "", value);
      findings.push_back(std::move(f));
    }
  };
  if (!relative_paths) {  // a configuration file: no shell, no working folder
    const WorkingFolder none{std::nullopt, "a configuration file"};
    for_each_command_line(text, [&](int index, const std::string& line) { check(line, index, none, {}); });
    return findings;
  }
  ShellState state(plan);
  if (start) state.start_in(*start);
  walk_shell(text, first_line, state, [&](const SimpleCommand& command, const ShellState& now) {
    check(command.raw, command.line, now.folder(), command.words);
  });
  return findings;
}

std::vector<model::Finding> shell_env_findings(const ShellText& shell, const plan::RunPlan& plan) {
  auto names = environment_names(plan);
  assigned_names(shell.text, names);
  // $NAME or ${NAME}, but not ${NAME:-default} and the like, nor $1, $@, $?...
  static const re2::RE2 reference(R"(\$(?:\{([A-Za-z_]\w*)(:?[-=+?])?|([A-Za-z_]\w*)))");
  std::vector<model::Finding> findings;
  std::set<std::string> reported;
  for_each_command_line(shell.text, [&](int index, const std::string& line) {
    re2::StringPiece rest(line);
    std::string braced, modifier, bare;
    while (re2::RE2::FindAndConsume(&rest, reference, &braced, &modifier, &bare)) {
      const std::string name = braced.empty() ? bare : braced;
      if (!modifier.empty() || names.count(name) || !reported.insert(name).second) continue;
      auto f = static_finding("shell-env-not-set", model::Severity::Warning, "", 0);
      f.subject = name;
      f.location = {shell.where.file, shell.where.line + index, 0};
      f.stage = shell.stage;
      f.message = fmt::format("${} is not set on {}: the shell expands it to nothing", name, plan.platform);
      const std::vector<std::string> known(names.begin(), names.end());
      const auto suggestion = closest_match(name, known);
      f.hint = (suggestion ? fmt::format("Did you mean ${}? ", *suggestion) : std::string()) +
               fmt::format("Either {}, or give a default: ${{{}:-...}}.",
                           diagnosis::set_variable_words(name, plan.facts.job_kind), name);
      findings.push_back(std::move(f));
    }
  });
  return findings;
}

std::vector<model::Finding> code_findings(const CodeScan& scan, const StaticContext& context) {
  std::vector<model::Finding> findings;
  Reach reach;
  std::vector<std::string> scripts = context.scripts;
  if (context.entry) {
    reach.entry = context.entry->script;
    if (std::find(scripts.begin(), scripts.end(), reach.entry) == scripts.end())
      scripts.push_back(reach.entry);
  }
  reach.modules = local_modules(scan, scripts);
  reach.code = code_reach(scan, scripts);
  syntax_findings(scan, reach, findings);
  import_findings(scan, context, reach, findings);
  env_findings(scan, context, reach, findings);
  path_findings(scan, context, reach, findings);
  if (scan.argparse && !scan.argparse->dynamic && context.entry &&
      scan.argparse->file == context.entry->script)
    check_arguments(*scan.argparse, *context.entry, context.command_where, findings);
  perf_findings(scan, context, reach, findings);
  return findings;
}

}  // namespace preflight::check
