#include "check/image_inspect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "check/image_python.hpp"
#include "util/text.hpp"

namespace preflight::check {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Distributions that make an image a deep-learning image, by their usual names.
constexpr const char* kFrameworks[] = {
    "torch", "torchvision",  "torchaudio",  "tensorflow",   "tensorflow-gpu",    "keras",    "jax", "jaxlib",
    "mxnet", "paddlepaddle", "onnxruntime", "transformers", "pytorch-lightning", "lightning"};
// Shared libraries of the GPU stack, by the start of their file names.
constexpr const char* kGpuLibraries[] = {"libcudart.so", "libcudnn.so",   "libcublas.so",
                                         "libnccl.so",   "libnvinfer.so", "libcuda.so"};

std::string os_name(const fs::path& rootfs) {
  for (const char* file : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto host = resolve_in_root(rootfs, file);
    if (!host) continue;
    std::istringstream lines(read_file(*host).value_or(""));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
      std::string value = line.substr(12);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
        value = value.substr(1, value.size() - 2);
      return value;
    }
  }
  return "unknown";
}

std::vector<std::string> gpu_libraries(const fs::path& rootfs) {
  std::vector<std::string> found;
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                          "/usr/local/cuda/lib64", "/usr/local/lib"}) {
    auto host = resolve_in_root(rootfs, dir);
    std::error_code ec;
    if (!host) continue;
    for (const auto& entry : fs::directory_iterator(*host, ec)) {
      const std::string name = entry.path().filename().string();
      for (const char* prefix : kGpuLibraries)
        if (name.rfind(prefix, 0) == 0 && std::find(found.begin(), found.end(), name) == found.end())
          found.push_back(name);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

Result<ImageInspection> inspect_image(const image::UnpackedImage& image, const fs::path& cache_dir,
                                      sandbox::ContainerRuntime& runtime) {
  ImageInspection inspection;
  inspection.ref = image.ref;
  inspection.digest = image.digest;
  inspection.os = os_name(image.rootfs);
  inspection.config = image.config;
  inspection.gpu_libraries = gpu_libraries(image.rootfs);
  auto index = load_module_index(image, cache_dir, runtime);
  if (!index) return std::move(index).error();
  inspection.python = std::move(*index);
  if (inspection.python)
    for (const char* name : kFrameworks)
      if (const auto* dist = inspection.python->distribution(name))
        inspection.frameworks.emplace_back(dist->name, dist->version);
  return inspection;
}

json to_json(const ImageInspection& i) {
  json distributions = json::array(), broken = json::array();
  if (i.python) {
    for (const auto& d : i.python->distributions)
      distributions.push_back({{"name", d.name}, {"version", d.version}, {"location", d.location}});
    for (const auto& b : i.python->broken)
      broken.push_back(
          {{"name", b.name}, {"version", b.version}, {"requirement", b.requirement}, {"problem", b.problem}});
  }
  json frameworks = json::object();
  for (const auto& [name, version] : i.frameworks) frameworks[name] = version;
  return {{"schema", "preflight.image/v1"},
          {"ref", i.ref},
          {"digest", i.digest},
          {"os", i.os},
          {"python", i.python ? json(i.python->python_version) : json(nullptr)},
          {"interpreter", i.python ? json(i.python->interpreter) : json(nullptr)},
          {"frameworks", frameworks},
          {"gpu_libraries", i.gpu_libraries},
          {"distributions", distributions},
          {"broken_requirements", broken},
          {"config",
           {{"env", i.config.env},
            {"user", i.config.user},
            {"working_dir", i.config.working_dir},
            {"entrypoint", i.config.entrypoint},
            {"cmd", i.config.cmd}}}};
}

void print_inspection(const ImageInspection& i, std::ostream& out) {
  out << fmt::format("image {} ({})\n", i.ref, i.digest);
  out << fmt::format("os: {}\n", i.os);
  if (!i.python) {
    out << "python: none\n";
  } else {
    out << fmt::format("python: {} ({})\n", i.python->python_version, i.python->interpreter);
    std::vector<std::string> frameworks;
    for (const auto& [name, version] : i.frameworks) frameworks.push_back(name + " " + version);
    out << fmt::format("frameworks: {}\n",
                       frameworks.empty() ? "none" : fmt::format("{}", fmt::join(frameworks, ", ")));
  }
  out << fmt::format("gpu libraries: {}\n",
                     i.gpu_libraries.empty()
                         ? "none (CUDA would come from the framework's own wheels, or nowhere)"
                         : fmt::format("{}", fmt::join(i.gpu_libraries, ", ")));
  out << fmt::format("user: {}  working dir: {}\n", i.config.user.empty() ? "root" : i.config.user,
                     i.config.working_dir.empty() ? "/" : i.config.working_dir);
  if (!i.config.entrypoint.empty() || !i.config.cmd.empty())
    out << fmt::format("entrypoint: {}  cmd: {}\n", fmt::join(i.config.entrypoint, " "),
                       fmt::join(i.config.cmd, " "));
  for (const auto& entry : i.config.env) out << "env: " << entry << "\n";
  if (i.python) {
    out << fmt::format("distributions ({}):\n", i.python->distributions.size());
    for (const auto& d : i.python->distributions) out << fmt::format("  {} {}\n", d.name, d.version);
    if (i.python->broken.empty()) {
      out << "requirements: all met (pip check)\n";
    } else {
      out << fmt::format("broken requirements ({}):\n", i.python->broken.size());
      for (const auto& b : i.python->broken)
        out << fmt::format("  {} {} requires {}: {}\n", b.name, b.version, b.requirement, b.problem);
    }
  }
}

}  // namespace preflight::check
