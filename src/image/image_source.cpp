#include "image/image_source.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "image/digest.hpp"
#include "image/layer_unpacker.hpp"
#include "util/json_fields.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace preflight::image {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Documents bigger than this are not image metadata; refuse rather than read gigabytes.
constexpr std::size_t kMaxJsonBytes = 16u << 20;

Result<std::string> read_small_file(const fs::path& file, const std::string& what) {
  std::error_code ec;
  auto size = fs::file_size(file, ec);
  if (ec) return Error::bad_input(file.string() + ": " + what + " is missing; is this an OCI image layout?");
  if (size > kMaxJsonBytes) return Error::bad_input(file.string() + ": " + what + " is implausibly large");
  auto text = read_file(file);
  if (!text) return Error::bad_input(file.string() + ": cannot read " + what);
  return std::move(*text);
}

Result<json> parse_json(const std::string& text, const std::string& where) {
  json doc = json_fields::parse_bounded(text);
  if (doc.is_discarded())
    return Error::bad_input(where + ": not valid JSON; the image is corrupt or not an image");
  return doc;
}

// A blob path inside an OCI layout, from a descriptor's digest (validated: no path tricks).
Result<fs::path> blob_path(const fs::path& dir, const json& descriptor, const std::string& where) {
  std::string digest = json_fields::text(descriptor, "digest");
  std::string hex = digest_hex(digest);
  if (hex.empty())
    return Error::bad_input(where + ": descriptor has no valid sha256 digest (\"" + digest + "\")");
  return dir / "blobs" / "sha256" / hex;
}

// Verifies a small JSON blob against its digest: metadata is cheap to check and a mismatch
// means a corrupt or tampered image.
Result<std::string> read_verified_blob(const fs::path& file, const std::string& expected_hex,
                                       const std::string& what) {
  auto text = read_small_file(file, what);
  if (!text) return text.error();
  if (sha256_hex(*text) != expected_hex) {
    return Error::bad_input(file.string() + ": " + what +
                            " does not match its digest; the image is corrupt, re-export it");
  }
  return text;
}

Result<json> select_manifest(const json& index, const std::string& tag, const fs::path& index_file) {
  const json* manifests = index.contains("manifests") ? &index["manifests"] : nullptr;
  if (manifests == nullptr || !manifests->is_array() || manifests->empty()) {
    return Error::bad_input(index_file.string() + ": lists no manifests; the OCI layout holds no image");
  }
  std::vector<std::string> tags;
  for (const auto& m : *manifests) {
    std::string name;
    if (auto annotations = m.find("annotations"); annotations != m.end())
      name = json_fields::text(*annotations, "org.opencontainers.image.ref.name");
    if (!name.empty()) tags.push_back(name);
    if (!tag.empty() && name == tag) return m;
  }
  if (tag.empty()) return (*manifests)[0];
  std::string known;
  for (const auto& t : tags) known += (known.empty() ? "" : ", ") + t;
  return Error::bad_input(index_file.string() + ": no image tagged \"" + tag +
                          "\"; tags in the layout: " + (known.empty() ? "(none)" : known));
}

}  // namespace

Result<ImageConfig> parse_image_config(const std::string& config_json, const std::string& where) {
  auto doc = parse_json(config_json, where);
  if (!doc) return doc.error();
  if (!doc->is_object()) return Error::bad_input(where + ": image config is not a JSON object");
  ImageConfig config;
  auto it = doc->find("config");
  if (it == doc->end() || !it->is_object()) return config;
  const json& c = *it;
  config.env = json_fields::strings(c, "Env");
  config.user = json_fields::text(c, "User");
  config.working_dir = json_fields::text(c, "WorkingDir");
  config.entrypoint = json_fields::strings(c, "Entrypoint");
  config.cmd = json_fields::strings(c, "Cmd");
  return config;
}

Result<ImageSource> read_oci_layout(const fs::path& dir, const std::string& tag) {
  if (!fs::is_directory(dir)) {
    return Error::bad_input(
        dir.string() + ": not a directory; oci:PATH needs an OCI image layout folder (index.json, blobs/)");
  }
  fs::path index_file = dir / "index.json";
  auto index_text = read_small_file(index_file, "index.json");
  if (!index_text) return index_text.error();
  auto index = parse_json(*index_text, index_file.string());
  if (!index) return index.error();
  auto descriptor = select_manifest(*index, tag, index_file);
  if (!descriptor) return descriptor.error();

  auto manifest_file = blob_path(dir, *descriptor, index_file.string());
  if (!manifest_file) return manifest_file.error();
  std::string manifest_hex = digest_hex(json_fields::text(*descriptor, "digest"));
  auto manifest_text = read_verified_blob(*manifest_file, manifest_hex, "image manifest");
  if (!manifest_text) return manifest_text.error();
  auto manifest = parse_json(*manifest_text, manifest_file->string());
  if (!manifest) return manifest.error();
  if (manifest->contains("manifests")) {
    return Error::bad_input(manifest_file->string() +
                            ": is an image index (multi-platform); export a single-platform image");
  }

  auto config_file = blob_path(dir, manifest->value("config", json()), manifest_file->string());
  if (!config_file) return config_file.error();
  ImageSource source;
  source.digest = "sha256:" + config_file->filename().string();
  auto config_text = read_verified_blob(*config_file, config_file->filename().string(), "image config");
  if (!config_text) return config_text.error();
  source.config_json = std::move(*config_text);

  const json layers = manifest->value("layers", json::array());
  int number = 0;
  for (const auto& layer : layers) {
    ++number;
    auto file = blob_path(dir, layer, manifest_file->string());
    if (!file) return file.error();
    if (!fs::exists(*file)) {
      return Error::bad_input(file->string() + ": layer " + std::to_string(number) +
                              " is missing from the OCI layout");
    }
    source.layers.push_back(
        {*file, "", "layer " + std::to_string(number) + " (" + file->lexically_relative(dir).string() + ")"});
  }
  return source;
}

namespace {

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};

// Reads one small member of a docker save tarball; other members' data is skipped (seeked
// over when the file allows), so no layer data is read.
Result<std::string> read_member(const fs::path& file, const std::string& wanted) {
  std::unique_ptr<archive, ArchiveDeleter> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_none(a.get());
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 20) != ARCHIVE_OK) {
    return Error::bad_input(file.string() +
                            ": cannot open as a docker save archive: " + archive_message(a.get()));
  }
  archive_entry* entry = nullptr;
  int r = 0;
  while ((r = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
    std::string name = archive_entry_pathname(entry);
    if (name.rfind("./", 0) == 0) name = name.substr(2);
    if (name != wanted) continue;
    if (archive_entry_size(entry) > static_cast<la_int64_t>(kMaxJsonBytes)) {
      return Error::bad_input(file.string() + ": \"" + name + "\" is implausibly large for image metadata");
    }
    std::string data(static_cast<std::size_t>(archive_entry_size(entry)), '\0');
    la_ssize_t got = archive_read_data(a.get(), data.data(), data.size());
    if (got < 0 || static_cast<std::size_t>(got) != data.size()) {
      return Error::bad_input(file.string() + ": truncated or corrupt at \"" + name +
                              "\"; re-export the image with docker save");
    }
    return data;
  }
  if (r != ARCHIVE_EOF) {
    return Error::bad_input(file.string() + ": truncated or corrupt tar (" + archive_message(a.get()) +
                            "); re-export the image with docker save");
  }
  return Error::bad_input(file.string() + ": has no \"" + wanted + "\"; is it a `docker save` archive?");
}

}  // namespace

Result<ImageSource> read_docker_archive(const fs::path& file) {
  if (!fs::is_regular_file(file)) {
    return Error::bad_input(file.string() +
                            ": no such file; docker-archive:PATH needs a `docker save` tarball");
  }
  auto manifest_text = read_member(file, "manifest.json");
  if (!manifest_text) return manifest_text.error();
  auto manifest = parse_json(*manifest_text, file.string() + ": manifest.json");
  if (!manifest) return manifest.error();
  if (!manifest->is_array() || manifest->empty() || !(*manifest)[0].is_object()) {
    return Error::bad_input(file.string() + ": manifest.json lists no image");
  }
  const json& image = (*manifest)[0];
  std::string config_name = json_fields::text(image, "Config");
  if (config_name.empty()) return Error::bad_input(file.string() + ": manifest.json names no image config");
  auto config_text = read_member(file, config_name);
  if (!config_text) return config_text.error();
  ImageSource source;
  source.config_json = std::move(*config_text);
  source.digest = "sha256:" + sha256_hex(source.config_json);
  int number = 0;
  for (const auto& layer : image.value("Layers", json::array())) {
    ++number;
    if (!layer.is_string())
      return Error::bad_input(file.string() + ": manifest.json has a layer that is not a path");
    std::string name = layer.get<std::string>();
    source.layers.push_back({file, name, "layer " + std::to_string(number) + " (" + name + ")"});
  }
  return source;
}

}  // namespace preflight::image
