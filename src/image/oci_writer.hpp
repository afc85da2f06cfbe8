// Writes a one-layer OCI image layout (oci-layout, index.json, blobs/sha256/) around a root
// filesystem tar, which is moved into the layout, never copied.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "image/image_store.hpp"
#include "util/error.hpp"

namespace preflight::image {

struct OciLayoutSpec {
  ImageConfig config;
  std::string created_by;                          // the layer's history entry
  std::string tag = "latest";                      // org.opencontainers.image.ref.name
  std::map<std::string, std::string> annotations;  // extra index annotations
};

// Moves `layer_tar` (uncompressed) into `dir`'s blobs and writes the config, manifest and
// index; returns the image digest ("sha256:<hex>" of the config).
Result<std::string> write_oci_layout(const std::filesystem::path& dir, const std::filesystem::path& layer_tar,
                                     const OciLayoutSpec& spec);

}  // namespace preflight::image
