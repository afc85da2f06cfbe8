// `preflight image inspect`: what matters to jobs about an image, read from its root filesystem
// and module index: OS, Python and its distributions, frameworks, CUDA libraries, the image
// configuration, and the requirements its distributions leave unmet.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "check/module_index.hpp"
#include "image/image_store.hpp"
#include "util/error.hpp"

namespace preflight::check {

struct ImageInspection {
  std::string ref;
  std::string digest;
  std::string os;                                               // PRETTY_NAME of /etc/os-release
  std::optional<ModuleIndex> python;                            // nullopt: no Python in the image
  std::vector<std::pair<std::string, std::string>> frameworks;  // name, version
  std::vector<std::string> gpu_libraries;                       // libcudart.so.12, libcudnn.so.8, ...
  image::ImageConfig config;
};

// The image's Python, when it has one, runs in containers of `runtime`.
Result<ImageInspection> inspect_image(const image::UnpackedImage& image,
                                      const std::filesystem::path& cache_dir,
                                      sandbox::ContainerRuntime& runtime);

nlohmann::json to_json(const ImageInspection& inspection);
void print_inspection(const ImageInspection& inspection, std::ostream& out);

}  // namespace preflight::check
