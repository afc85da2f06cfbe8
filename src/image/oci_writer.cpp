#include "image/oci_writer.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/sha256.hpp"

namespace preflight::image {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string oci_architecture() {
  utsname info{};
  uname(&info);
  std::string machine = info.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  if (machine == "armv7l") return "arm";
  return machine;
}

std::string now_rfc3339() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// Writes a JSON blob and returns its descriptor.
Result<json> write_blob(const fs::path& dir, const std::string& media_type, const std::string& content) {
  std::string hex = sha256_hex(content);
  std::ofstream out(dir / "blobs" / "sha256" / hex, std::ios::binary);
  out << content;
  if (!out) return Error::runtime((dir / "blobs").string() + ": cannot write an image blob");
  return json{{"mediaType", media_type}, {"digest", "sha256:" + hex}, {"size", content.size()}};
}

}  // namespace

Result<std::string> write_oci_layout(const fs::path& dir, const fs::path& layer_tar,
                                     const OciLayoutSpec& spec) {
  std::error_code ec;
  fs::create_directories(dir / "blobs" / "sha256", ec);
  if (ec) return Error::runtime(dir.string() + ": cannot create the image layout: " + ec.message());

  auto layer_hex = sha256_file_hex(layer_tar);
  if (!layer_hex) return layer_hex.error();
  auto layer_size = fs::file_size(layer_tar, ec);
  fs::rename(layer_tar, dir / "blobs" / "sha256" / *layer_hex, ec);
  if (ec)
    return Error::runtime(layer_tar.string() +
                          ": cannot move the layer into the image layout: " + ec.message());
  // An uncompressed layer: it is written once at build time and read at every cold unpack,
  // where decompression would cost more than the disk it saves.
  json layer = {{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                {"digest", "sha256:" + *layer_hex},
                {"size", layer_size}};

  json config_object = json::object();
  if (!spec.config.env.empty()) config_object["Env"] = spec.config.env;
  if (!spec.config.user.empty()) config_object["User"] = spec.config.user;
  if (!spec.config.working_dir.empty()) config_object["WorkingDir"] = spec.config.working_dir;
  if (!spec.config.entrypoint.empty()) config_object["Entrypoint"] = spec.config.entrypoint;
  if (!spec.config.cmd.empty()) config_object["Cmd"] = spec.config.cmd;
  std::string created = now_rfc3339();
  json config = {{"created", created},
                 {"architecture", oci_architecture()},
                 {"os", "linux"},
                 {"config", config_object},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", {"sha256:" + *layer_hex}}}},
                 {"history", {{{"created", created}, {"created_by", spec.created_by}}}}};
  auto config_descriptor = write_blob(dir, "application/vnd.oci.image.config.v1+json", config.dump());
  if (!config_descriptor) return config_descriptor.error();

  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"config", *config_descriptor},
                   {"layers", {layer}}};
  auto manifest_descriptor = write_blob(dir, "application/vnd.oci.image.manifest.v1+json", manifest.dump());
  if (!manifest_descriptor) return manifest_descriptor.error();
  json annotations = spec.annotations;
  annotations["org.opencontainers.image.ref.name"] = spec.tag;
  (*manifest_descriptor)["annotations"] = annotations;
  (*manifest_descriptor)["platform"] = {{"architecture", oci_architecture()}, {"os", "linux"}};

  json index = {{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.index.v1+json"},
                {"manifests", {*manifest_descriptor}}};
  std::ofstream(dir / "oci-layout") << json{{"imageLayoutVersion", "1.0.0"}}.dump();
  std::ofstream index_out(dir / "index.json");
  index_out << index.dump(2) << "\n";
  if (!index_out) return Error::runtime(dir.string() + ": cannot write index.json");
  return (*config_descriptor)["digest"].get<std::string>();
}

}  // namespace preflight::image
