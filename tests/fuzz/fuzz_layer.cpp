// libFuzzer target: an image layer from anyone's `docker save` (docs/images.md "Unpacking and
// security"). Any bytes unpack into the root or are refused; nothing is ever written outside
// the root, and nothing crashes, hangs or leaks.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_file.hpp"
#include "image/layer_unpacker.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto layer = preflight::fuzz::write_input("layer.tar", data, size);
  const fs::path top = layer.parent_path() / "unpack";
  const fs::path root = top / "root";
  std::error_code ec;
  fs::remove_all(top, ec);
  fs::create_directories(root);
  // Small bounds: a layer that declares gigabytes is refused before it is written.
  preflight::image::LayerUnpacker unpacker(root, {64ull << 20, 10000});
  (void)unpacker.apply({layer, "", "layer 1"});
  // The only thing beside the root is the root.
  for (const auto& entry : fs::directory_iterator(top))
    if (entry.path() != root) __builtin_trap();
  fs::remove_all(top, ec);
  return 0;
}
