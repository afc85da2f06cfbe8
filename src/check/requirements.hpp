// Requirements (PEP 508 lines, requirements files) against the image's installed
// distributions, as pip would judge them offline: a requirement the image already meets is
// "Requirement already satisfied" and needs no index; one it does not meet needs a download.
// Also the pins of requirements*.txt that the image contradicts.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/module_index.hpp"
#include "check/versions.hpp"
#include "model/finding.hpp"

namespace preflight::check {

// One requirement of a requirements file or of pip's command line.
struct Requirement {
  std::string text;  // as written, without comment and options
  std::string name;  // empty for a URL or a local path
  std::vector<std::string> extras;
  std::string specifier;  // ">=1.12,<2"
  std::string marker;     // after ';'
  bool local = false;     // a local folder, archive or file: URL (no index needed)
  bool remote = false;    // a URL, a VCS reference or name @ URL: downloaded
  SourceLocation where;   // requirements file and line; empty on the command line
};

// The environment markers are evaluated in: the image's Python and Linux.
struct MarkerEnvironment {
  std::string python_full_version;  // "3.11.2"
  std::string machine = "x86_64";
  std::string extra;
  static MarkerEnvironment of(const ModuleIndex& index);
};

// Whether a PEP 508 marker holds; nullopt when it cannot be read or compares something
// unknown.
std::optional<bool> marker_holds(const std::string& marker, const MarkerEnvironment& env);

// A requirement line as pip reads it (PEP 508, a URL or a path); nullopt when it is not one.
std::optional<Requirement> parse_requirement(const std::string& line);

// A requirements file's requirements, `-r` includes followed (`read` gives a file's text by
// its path as the line names it, joined to the including file's folder; nullopt: unreadable).
struct RequirementsFile {
  std::vector<Requirement> requirements;
  std::vector<std::string> unreadable;  // files or lines pip's reading cannot be foreseen for
  bool no_index = false;                // --no-index in the file
};
RequirementsFile read_requirements(const std::string& path,
                                   const std::function<std::optional<std::string>(const std::string&)>& read);

// What pip could not take from the image for `wanted`, and why ("the image has torch
// 1.13.0a0+gitunknown", "the image has no distribution wandb"), the dependencies of what it
// has included (unless no_deps). Empty: pip answers "Requirement already satisfied".
struct Unmet {
  Requirement requirement;
  std::string problem;
};
std::vector<Unmet> unmet_requirements(const std::vector<Requirement>& wanted, const ModuleIndex& index,
                                      bool no_deps);

// requirements*.txt at the top of the code folder, each pin checked against `index`; files
// in `installed_by_setup` (relative to the code folder) are left to the setup step's check.
std::vector<model::Finding> requirement_findings(
    const std::filesystem::path& code_dir, const ModuleIndex& index,
    const std::vector<std::filesystem::path>& installed_by_setup = {});

}  // namespace preflight::check
