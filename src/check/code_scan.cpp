#include "check/code_scan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/data_dir.hpp"
#include "util/json_fields.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::check {
namespace fs = std::filesystem;
using json_fields::flag;
using json_fields::integer;
using json_fields::list;
using json_fields::strings;
using nlohmann::json;

namespace {

constexpr std::uintmax_t kMaxFileBytes = 2u << 20;  // larger files are generated, not written
// Entries looked at in a code folder: a repository of data or checkouts is not walked to its end.
constexpr std::uint64_t kMaxCodeEntries = 200'000;

// Folders that are not the job's code: hidden, caches, virtual environments, build output.
bool skipped_folder(const std::string& name) {
  static const char* names[] = {"__pycache__", "node_modules", "site-packages", "dist-packages",
                                "venv",        "env",          "dist"};
  return name.empty() || name[0] == '.' || name.rfind("build", 0) == 0 ||
         std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// The field as written: a string's text, another value as JSON ("2" for nargs=2), "" for none.
std::string shown(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

ArgOption arg_option(const json& item) {
  ArgOption option;
  option.line = integer(item, "line");
  option.flags = strings(item, "flags");
  option.dest = shown(item, "dest");
  option.type = shown(item, "type");
  option.required = flag(item, "required");
  if (auto it = item.find("choices"); it != item.end() && it->is_array()) {
    std::vector<std::string> choices;
    for (const auto& c : *it) choices.push_back(c.is_string() ? c.get<std::string>() : c.dump());
    option.choices = std::move(choices);
  }
  option.nargs = shown(item, "nargs");
  option.action = shown(item, "action");
  if (option.action.empty()) option.action = "store";
  if (auto it = item.find("default"); it != item.end() && it->is_string())
    option.default_text = it->get<std::string>();
  return option;
}

// scan.py's names of the performance patterns: the rule ids of checks.yaml.
const std::pair<const char*, PerfPattern> kPerfPatterns[] = {
    {"tf-op-in-loop", PerfPattern::TfOpInLoop},
    {"tf-map-before-batch", PerfPattern::TfMapBeforeBatch},
    {"tf-map-without-parallel-calls", PerfPattern::TfMapWithoutParallelCalls},
    {"torch-dataloader-no-workers", PerfPattern::TorchDataloaderNoWorkers},
};

// A pattern this code does not know means scan.py and Preflight disagree: Preflight's error.
Result<PerfPattern> perf_pattern(const std::string& rule) {
  for (const auto& [id, pattern] : kPerfPatterns)
    if (rule == id) return pattern;
  return Error::runtime("the code scanner reported an unknown performance pattern \"" + rule + "\"");
}

}  // namespace

const char* rule_id(PerfPattern pattern) {
  for (const auto& [id, known] : kPerfPatterns)
    if (known == pattern) return id;
  throw std::logic_error("a performance pattern without a rule id");
}

std::vector<fs::path> code_files(const fs::path& code_dir,
                                 const std::function<bool(const fs::path&)>& wanted) {
  std::vector<fs::path> files;
  std::error_code ec;
  std::uint64_t entries = 0;
  for (auto it =
           fs::recursive_directory_iterator(code_dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator() && ++entries <= kMaxCodeEntries; it.increment(ec)) {
    if (it->is_directory(ec)) {
      if (skipped_folder(it->path().filename().string())) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || it->file_size(ec) > kMaxFileBytes || !wanted(it->path())) continue;
    files.push_back(fs::relative(it->path(), code_dir, ec));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> python_files(const fs::path& code_dir) {
  return code_files(code_dir, [](const fs::path& file) { return file.extension() == ".py"; });
}

Result<CodeScan> parse_code_scan(const std::string& text_in) {
  json doc = json_fields::parse_bounded(text_in);
  if (!doc.is_object()) return Error::runtime("the code scanner's output is not JSON");
  CodeScan scan;
  scan.python_version = shown(doc, "python");
  for (const auto& item : list(doc, "files")) {
    ScannedFile file;
    file.path = shown(item, "path");
    file.scan_error = shown(item, "error");
    if (auto it = item.find("syntax_error"); it != item.end() && it->is_object())
      file.syntax_error = SyntaxProblem{integer(*it, "line"), integer(*it, "column"), shown(*it, "message")};
    for (const auto& i : list(item, "imports"))
      file.imports.push_back({shown(i, "module"), integer(i, "line"), flag(i, "guarded"),
                              shown(i, "scope") != "function", flag(i, "conditional"), integer(i, "level"),
                              strings(i, "names"), flag(i, "main")});
    for (const auto& d : list(item, "dynamic"))
      file.dynamic.push_back({integer(d, "line"), shown(d, "module"), flag(d, "exact"), shown(d, "file")});
    for (const auto& e : list(item, "env"))
      file.env.push_back({shown(e, "name"), integer(e, "line"), shown(e, "how"), flag(e, "default"),
                          flag(e, "guarded"), shown(e, "scope") != "function"});
    for (const auto& p : list(item, "paths"))
      file.paths.push_back({shown(p, "value"), integer(p, "line"), shown(p, "option"), shown(p, "use")});
    for (const auto& p : list(item, "perf")) {
      auto pattern = perf_pattern(shown(p, "rule"));
      if (!pattern) return std::move(pattern).error();
      file.perf.push_back({*pattern, integer(p, "line"), shown(p, "detail")});
    }
    file.main_guard = flag(item, "main");
    file.builds_parser = flag(item, "parser");
    file.cuda_line = integer(item, "cuda");
    scan.files.push_back(std::move(file));
  }
  if (auto it = doc.find("argparse"); it != doc.end() && it->is_object()) {
    ArgParser parser;
    parser.file = shown(*it, "file");
    parser.parse_known = flag(*it, "parse_known");
    parser.allow_abbrev = !it->contains("allow_abbrev") || flag(*it, "allow_abbrev");
    parser.dynamic = flag(*it, "dynamic");
    for (const auto& o : list(*it, "options")) parser.options.push_back(arg_option(o));
    for (const auto& o : list(*it, "positionals")) parser.positionals.push_back(arg_option(o));
    scan.argparse = std::move(parser);
  }
  return scan;
}

Result<CodeScan> scan_code(const ImagePython& python, const fs::path& code_dir,
                           const std::vector<fs::path>& files, const std::optional<EntryPoint>& entry,
                           const std::optional<ScanCache>& cache) {
  const fs::path program_file = data_dir() / "emulator" / "check" / "scan.py";
  auto program = read_file(program_file);
  if (!program) return Error::runtime("cannot read " + program_file.string());
  json request = {{"files", json::array()}, {"entry", nullptr}};
  for (const auto& file : files) {
    auto source = read_code_file(code_dir, file);
    if (!source) continue;  // unreadable here: the dry run will say what the platform does
    request["files"].push_back({{"path", file.generic_string()}, {"text", std::move(*source)}});
  }
  if (entry) request["entry"] = {{"script", entry->script}, {"args", entry->args}};
  // ASCII-only JSON: readable whatever the image's locale (Python 3.6 in the C locale).
  const std::string input = request.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  // The scan is a function of the interpreter, the program and this input alone: one kept of
  // the same three is the one this run would make.
  const std::string key = cache ? cache->key(*program, python.path(), input) : std::string();
  if (cache)
    if (auto kept = cache->find(key))
      if (auto scan = parse_code_scan(*kept)) return scan;
  auto run = python.run(*program, input, /*with_site=*/false);
  if (!run) return std::move(run).error();
  if (run->exit_code != 0)
    return Error::runtime(
        fmt::format("the code scanner failed in the image (exit {}): {}", run->exit_code, trim(run->err)));
  auto scan = parse_code_scan(run->out);
  if (scan && cache) cache->store(key, run->out);
  return scan;
}

}  // namespace preflight::check
