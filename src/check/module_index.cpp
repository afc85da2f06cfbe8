#include "check/module_index.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <random>

#include "check/image_python.hpp"
#include "image/digest.hpp"
#include "util/data_dir.hpp"
#include "util/json_fields.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::check {
namespace fs = std::filesystem;
using json_fields::strings;
using json_fields::text;
using nlohmann::json;

std::string normalize_distribution_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator) {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

const Distribution* ModuleIndex::distribution(const std::string& name) const {
  const std::string wanted = normalize_distribution_name(name);
  for (const auto& dist : distributions)
    if (normalize_distribution_name(dist.name) == wanted) return &dist;
  return nullptr;
}

Result<ModuleIndex> parse_module_index(const std::string& text_in, const std::string& source) {
  json doc = json_fields::parse_bounded(text_in);
  if (!doc.is_object() || !doc.contains("modules"))
    return Error::runtime(fmt::format("{}: not a module index", source));
  ModuleIndex index;
  index.python_version = text(doc, "python");
  index.interpreter = text(doc, "interpreter");
  index.path = strings(doc, "path");
  for (const auto& name : strings(doc, "modules")) index.modules.insert(name);
  for (const auto& name : strings(doc, "builtin")) index.modules.insert(name);
  for (const auto& name : strings(doc, "stdlib")) index.stdlib.insert(name);
  for (const auto& item : doc.value("distributions", json::array())) {
    if (!item.is_object()) continue;
    index.distributions.push_back({text(item, "name"), text(item, "version"), strings(item, "requires"),
                                   strings(item, "top_level"), text(item, "location")});
  }
  for (const auto& item : doc.value("broken", json::array())) {
    if (!item.is_object()) continue;
    index.broken.push_back(
        {text(item, "name"), text(item, "version"), text(item, "requirement"), text(item, "problem")});
  }
  return index;
}

Result<std::optional<ModuleIndex>> load_module_index(const image::UnpackedImage& image,
                                                     const fs::path& cache_dir,
                                                     sandbox::ContainerRuntime& runtime) {
  const fs::path program_file = data_dir() / "emulator" / "check" / "index.py";
  auto program = read_file(program_file);
  if (!program) return Error::runtime("cannot read " + program_file.string());
  // Keyed by the image and by the program, so that a new index.py rebuilds old entries.
  const fs::path cached =
      cache_dir / "index" /
      fmt::format("{}-{}.json", image::digest_hex(image.digest), sha256_hex(*program).substr(0, 12));
  if (auto text = read_file(cached)) {
    if (auto index = parse_module_index(*text, cached.string()))
      return std::optional<ModuleIndex>(std::move(*index));
  }
  auto python = ImagePython::find(image.rootfs, image.config.env, runtime);
  if (!python) return std::optional<ModuleIndex>();
  auto run = python->run(*program, "", /*with_site=*/true);
  if (!run) return std::move(run).error();
  if (run->exit_code != 0)
    return Error::runtime(fmt::format("indexing the modules of image {} failed (exit {}): {}", image.ref,
                                      run->exit_code, trim(run->err)));
  json doc = json_fields::parse_bounded(run->out);
  if (!doc.is_object()) return Error::runtime("the module index of image " + image.ref + " is not JSON");
  doc["interpreter"] = python->path();
  const std::string stored = doc.dump();
  auto index = parse_module_index(stored, "module index of " + image.ref);
  if (!index) return std::move(index).error();
  std::error_code ec;
  fs::create_directories(cached.parent_path(), ec);
  // Each writer has a partial file of its own: runs indexing one image at once never write
  // into the file another one is renaming into place, so readers never see half a file.
  const fs::path partial =
      fmt::format("{}.partial-{}-{:08x}", cached.string(), ::getpid(), std::random_device()());
  write_file_whole(partial, cached, stored);
  return std::optional<ModuleIndex>(std::move(*index));
}

}  // namespace preflight::check
