// Where an image's config and layers are: read from a `docker save` archive or an OCI image
// layout without copying any layer data. Only small JSON documents are read here.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "image/image_store.hpp"
#include "util/error.hpp"

namespace preflight::image {

// One layer tar, possibly compressed: a file, or a member of an outer (docker save) tar.
struct LayerSource {
  std::filesystem::path archive;  // the file to open
  std::string member;             // the layer's name inside `archive`; empty: the file itself
  std::string label;              // how errors name the layer, e.g. "layer 2 (blobs/sha256/ab12…)"
};

struct ImageSource {
  std::string config_json;
  std::string digest;  // "sha256:<hex>" of config_json: the image ID
  std::vector<LayerSource> layers;
};

Result<ImageSource> read_oci_layout(const std::filesystem::path& dir, const std::string& tag);
Result<ImageSource> read_docker_archive(const std::filesystem::path& archive);

// The "config" object of an OCI / Docker image config document.
Result<ImageConfig> parse_image_config(const std::string& config_json, const std::string& where);

}  // namespace preflight::image
