#include "util/data_dir.hpp"

#include <cstdlib>
#include <system_error>

namespace preflight {
namespace {

// share/preflight beside the running binary's folder when it holds the policies: the layout
// of an installed package (PREFIX/bin/preflight, PREFIX/share/preflight). Empty otherwise.
std::filesystem::path installed_data_dir() {
  std::error_code error;
  const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  std::filesystem::path share = binary.parent_path().parent_path() / "share" / "preflight";
  if (!std::filesystem::is_directory(share / "policies", error)) return {};
  return share;
}

}  // namespace

std::filesystem::path data_dir() {
  if (const char* dir = std::getenv("PREFLIGHT_DATA_DIR"); dir && *dir) return dir;
  static const std::filesystem::path installed = installed_data_dir();
  return installed.empty() ? source_data_dir() : installed;
}

}  // namespace preflight
