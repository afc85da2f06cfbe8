// The targets' loaders read files: each input is written to a file in a folder of this
// process's own (under /dev/shm when there is one, so that no input touches a disk).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace preflight::fuzz {

// The folder, removed when the fuzzer exits.
class InputFolder {
 public:
  InputFolder() {
    const std::filesystem::path base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    path_ = base / ("preflight-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~InputFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path write_input(const std::string& name, const std::uint8_t* data,
                                         std::size_t size) {
  static const InputFolder dir;
  const auto file = dir.path() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

}  // namespace preflight::fuzz
