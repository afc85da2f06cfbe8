// The job's Python code as the image's interpreter reads it (emulator/check/scan.py): syntax
// errors, imports, environment reads, path literals, the entry script's argparse options and
// performance patterns, each with its line. The job's files are sent on stdin: the scanner
// runs inside the image's root and sees nothing else.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/image_python.hpp"
#include "check/scan_cache.hpp"
#include "util/error.hpp"

namespace preflight::check {

struct ImportUse {
  std::string module;  // dotted name, relative to the file's package when level > 0
  int line = 0;
  bool guarded = false;  // inside try/except ImportError, TYPE_CHECKING or a version test
  bool module_scope = true;
  bool conditional = false;  // under an if (not the main guard), a loop, a try or a with: may not run
  int level = 0;             // the leading dots of a relative import
  std::vector<std::string> names = {};  // what `from module import a, b` takes (a may be a module)
  bool under_main = false;              // under `if __name__ == "__main__":`: runs only in the script run
};

// An import whose module is computed (importlib.import_module(X), __import__(X)), or a file
// run by name (exec(open("F").read()), runpy.run_path("F")).
struct DynamicImport {
  int line = 0;
  std::string module;  // the literal name, or the literal start of a name built at run time
  bool exact = false;  // `module` is the whole name
  std::string file;    // the file run, as the code names it; empty for a module
};

struct EnvRead {
  std::string name;
  int line = 0;
  std::string how;  // "subscript" | "get" | "getenv" | "in"
  bool has_default = false;
  bool guarded = false;      // under a test that the variable is set, or in try/except KeyError
  bool module_scope = true;  // runs as the file loads; false inside a function
};

struct PathLiteral {
  std::string value;
  int line = 0;
  std::string option;  // the argparse option ("--data") this is the default of, if any
  std::string use;     // what the code does with it: "write" | "model" | "read" | ""
};

// The performance patterns scan.py reports; each is a rule of policies/rules/checks.yaml.
enum class PerfPattern { TfOpInLoop, TfMapBeforeBatch, TfMapWithoutParallelCalls, TorchDataloaderNoWorkers };

// "tf-op-in-loop": the pattern's rule id, as scan.py names it.
const char* rule_id(PerfPattern pattern);

struct PerfUse {
  PerfPattern pattern = PerfPattern::TfOpInLoop;
  int line = 0;
  std::string detail;
};

struct SyntaxProblem {
  int line = 0;
  int column = 0;
  std::string message;
};

struct ScannedFile {
  std::string path;                           // relative to the code folder
  std::optional<SyntaxProblem> syntax_error;  // as the image's interpreter parses the file
  std::string scan_error;                     // the scanner's own failure on this file
  std::vector<ImportUse> imports;
  std::vector<EnvRead> env;
  std::vector<PathLiteral> paths;
  std::vector<PerfUse> perf;
  std::vector<DynamicImport> dynamic;
  bool main_guard = false;     // runs code under `if __name__ == "__main__":`
  bool builds_parser = false;  // calls argparse.ArgumentParser
  int cuda_line = 0;           // the first line that names CUDA; 0 if none
};

struct ArgOption {
  int line = 0;
  std::vector<std::string> flags;  // "--epochs", "-e"
  std::string dest;
  std::string type;  // "int", "float", ... or empty
  bool required = false;
  std::optional<std::vector<std::string>> choices;  // as text
  std::string nargs;                                // "", "+", "?", "*", "2"
  std::string action;                               // "store", "store_true", ...
  std::optional<std::string> default_text;          // a literal text default (default="data")
};

struct ArgParser {
  std::string file;
  bool parse_known = false;
  bool allow_abbrev = true;
  bool dynamic = false;  // built in a way a static reading cannot follow
  std::vector<ArgOption> options;
  std::vector<ArgOption> positionals;
};

struct CodeScan {
  std::string python_version;
  std::vector<ScannedFile> files;
  std::optional<ArgParser> argparse;  // of the entry script
};

// The entry script of a command line and its arguments: `python [-u] train.py --epochs 3`.
struct EntryPoint {
  std::string script;  // relative to the code folder
  std::vector<std::string> args;
  int word = 0;  // index of the script among the command's words
  // The indices of the arguments Preflight cannot read exactly as bash will (an expansion, a
  // glob...: check/shell_words.hpp): findings that rest on them are predictions.
  std::set<std::size_t> uncertain = {};
};

// The files of the code folder that `wanted` takes, relative, up to 2 MiB each; hidden
// folders, caches, virtual environments and build output (build*, dist) are skipped.
std::vector<std::filesystem::path> code_files(
    const std::filesystem::path& code_dir, const std::function<bool(const std::filesystem::path&)>& wanted);
std::vector<std::filesystem::path> python_files(const std::filesystem::path& code_dir);

// Scans `files` of `code_dir` (each read below it, as read_code_file reads it) with the image's
// interpreter, or takes the scan `cache` kept of the same request; a scan made is kept there.
Result<CodeScan> scan_code(const ImagePython& python, const std::filesystem::path& code_dir,
                           const std::vector<std::filesystem::path>& files,
                           const std::optional<EntryPoint>& entry, const std::optional<ScanCache>& cache);

// Parses scan.py's JSON.
Result<CodeScan> parse_code_scan(const std::string& json);

}  // namespace preflight::check
