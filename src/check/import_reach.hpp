// Which files of the code folder a job runs (docs/static-checks.md "Which files the checks
// read"): the Python scripts its command and setup run, and the job's own modules they import,
// directly or not, found as Python finds them (the script's folder first on sys.path, relative
// imports from the importing file's package, `from pkg import mod`, packages' __init__.py).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "check/code_scan.hpp"

namespace preflight::check {

struct CodeReach {
  std::set<std::string> files;    // run by the job: its scripts and what they import
  std::set<std::string> scripts;  // run as scripts, whose `if __name__ == "__main__":` runs
  // Why other files of the code folder may run too, where the imports could not all be followed
  // (no script of the code folder found, a module named at run time); empty when they were.
  std::string open_why;

  bool complete() const { return open_why.empty(); }
  bool runs(const std::string& file) const { return files.count(file) > 0; }
  // Whether `use` in `file` runs: an import under the main guard of a file that is only imported
  // does not.
  bool runs(const std::string& file, const ImportUse& use) const {
    return !use.under_main || scripts.count(file) > 0 || !complete();
  }
};

// The job's own modules by dotted name, as the code folder's top and each script's folder see
// them: "models.resnet" → "models/resnet.py", "models" → "models/__init__.py".
std::map<std::string, std::string> local_modules(const CodeScan& scan,
                                                 const std::vector<std::string>& scripts);

// The files the scripts (relative to the code folder) run, following every import of the job's
// own modules, wherever it is in the file (a function's import may run too).
CodeReach code_reach(const CodeScan& scan, const std::vector<std::string>& scripts);

}  // namespace preflight::check
