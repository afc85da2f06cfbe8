#include "test_support.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "util/data_dir.hpp"

namespace preflight::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "preflight-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempDir::write(const std::string& relative, const std::string& content) const {
  std::filesystem::path full = path_ / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream(full, std::ios::binary) << content;
  return full;
}

namespace {

std::filesystem::path write_script(const std::filesystem::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

}  // namespace

FakeRuntime::FakeRuntime(const TempDir& dir, const std::string& body)
    : path_(write_script(dir.path() / "runtime", body)), env_("PREFLIGHT_RUNTIME", path_.c_str()) {}

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("PREFLIGHT_SOURCE_DIR")) return dir;
  return source_data_dir();
}

const diagnosis::Policies& shipped_policies() {
  static const diagnosis::Policies policies = [] {
    auto loaded = diagnosis::load_policies(source_dir() / "policies" / "rules");
    if (!loaded) throw std::runtime_error(loaded.error().str());
    return std::move(*loaded);
  }();
  return policies;
}

std::vector<model::Finding> completed(std::vector<model::Finding> findings) {
  shipped_policies().checks.complete(findings);
  return findings;
}

}  // namespace preflight::testing
