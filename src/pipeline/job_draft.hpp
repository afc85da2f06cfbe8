// `preflight init`: a first job.yaml for a repository, drafted from what the code scanner
// (emulator/check/scan.py) read in it: the entry script, its argparse options, the data folders
// the repository holds and whether the code uses CUDA. Drafting is pure; init_job.hpp runs the
// scanner.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "check/code_scan.hpp"

namespace preflight::pipeline {

// The script a job starts from, as the command names it.
struct EntryScript {
  std::string file;    // relative to the repository: "train.py", "tool/__main__.py"
  std::string module;  // "tool" when the entry is a package's __main__.py (python -m tool)
};

// The entry script among the scanned files: train.py, main.py or run.py at the top, else a
// script that runs under `if __name__ == "__main__":` and builds an ArgumentParser, else a
// package's __main__.py, else any script with a main guard; the shallowest first.
std::optional<EntryScript> choose_entry(const check::CodeScan& scan);

// An input or output of the draft, with what it was found from (for the comment beside it).
struct DraftFolder {
  std::string name;
  std::string path;  // inputs: "./data"; outputs: empty
  std::string why;   // "--data (main.py:27)"
};

struct JobDraft {
  std::string name;
  std::string platform;
  std::string image;
  std::string command;
  std::optional<std::string> setup;
  std::vector<std::string> notes;  // comment lines before the command: what the user must settle
  std::vector<DraftFolder> inputs;
  std::vector<DraftFolder> outputs;
  int gpus = 0;
  std::string gpus_why;  // "the code uses CUDA (main.py:34)"
};

// What the draft depends on besides the code.
struct DraftChoices {
  std::string platform;  // the profile's name
  std::string image;     // as job.yaml will name it
  bool network = false;  // the platform's
};

// The draft for the repository `dir` from its scan (`scan.argparse` of `entry`).
JobDraft draft_job(const std::filesystem::path& dir, const check::CodeScan& scan, const EntryScript& entry,
                   const DraftChoices& choices);

// The draft as a commented job.yaml v1 (docs/formats.md) that spec::load_job accepts.
std::string job_yaml(const JobDraft& draft);

}  // namespace preflight::pipeline
