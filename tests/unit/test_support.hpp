// Shared helpers for unit tests: a fresh temporary folder per test, and file writing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "diagnosis/policies.hpp"

namespace preflight::testing {

// A folder under the system temp dir, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `content` to `relative` (parents created) and returns the full path.
  std::filesystem::path write(const std::string& relative, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// The repository's top folder (policies/, images/, tests/jobs/ live there).
std::filesystem::path source_dir();

// The repository's policies/rules/, loaded once (a mistake in them throws).
const diagnosis::Policies& shipped_policies();

// `findings` as a report holds them: those the code built classified by the shipped checks.yaml.
std::vector<model::Finding> completed(std::vector<model::Finding> findings);

}  // namespace preflight::testing
