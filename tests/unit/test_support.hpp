// Shared helpers for unit tests: a fresh temporary folder per test, and file writing.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
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

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { saved_ ? setenv(name_, saved_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

// A container runtime of a shell script's `body` in `dir`, $PREFLIGHT_RUNTIME while this lives.
class FakeRuntime {
 public:
  FakeRuntime(const TempDir& dir, const std::string& body);

 private:
  std::filesystem::path path_;
  ScopedEnv env_;
};

// The repository's top folder (policies/, images/, tests/jobs/ live there).
std::filesystem::path source_dir();

// The repository's policies/rules/, loaded once (a mistake in them throws).
const diagnosis::Policies& shipped_policies();

// `findings` as a report holds them: those the code built classified by the shipped checks.yaml.
std::vector<model::Finding> completed(std::vector<model::Finding> findings);

}  // namespace preflight::testing
