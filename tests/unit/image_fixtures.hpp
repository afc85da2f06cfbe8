// Shared by the image tests: tar layers and `docker save` archives made in memory with
// libarchive, and small file helpers.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "util/sha256.hpp"

namespace preflight::image::fixtures {
namespace fs = std::filesystem;
using nlohmann::json;

struct Entry {
  Entry(std::string path_, char type_ = 'f', std::string data_ = {}, int mode_ = 0644)
      : path(std::move(path_)), type(type_), data(std::move(data_)), mode(mode_) {}
  std::string path;
  char type;         // f file, d dir, l symlink, h hard link
  std::string data;  // file contents, or the link target
  int mode;
};

enum class Compression { None, Gzip, Zstd };

inline la_ssize_t append_to_string(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

inline std::string make_tar(const std::vector<Entry>& entries, Compression compression = Compression::None) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (compression == Compression::Gzip) archive_write_add_filter_gzip(a);
  if (compression == Compression::Zstd) archive_write_add_filter_zstd(a);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open(a, &out, nullptr, append_to_string, nullptr);
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_mtime(entry, 1700000000, 0);
    archive_entry_set_uid(entry, 0);
    archive_entry_set_gid(entry, 0);
    switch (e.type) {
      case 'd':
        archive_entry_set_filetype(entry, AE_IFDIR);
        archive_entry_set_perm(entry, e.mode == 0644 ? 0755 : e.mode);
        break;
      case 'l':
        archive_entry_set_filetype(entry, AE_IFLNK);
        archive_entry_set_perm(entry, 0777);
        archive_entry_set_symlink(entry, e.data.c_str());
        break;
      case 'h':
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_perm(entry, e.mode);
        archive_entry_set_hardlink(entry, e.data.c_str());
        break;
      default:
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_perm(entry, e.mode);
        archive_entry_set_size(entry, static_cast<la_int64_t>(e.data.size()));
    }
    archive_write_header(a, entry);
    if (e.type == 'f' && !e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

inline std::string config_json(const std::vector<std::string>& layers) {
  json diff_ids = json::array();
  for (const auto& layer : layers) diff_ids.push_back("sha256:" + sha256_hex(layer));
  return json{{"architecture", "amd64"},
              {"os", "linux"},
              {"config",
               {{"Env", {"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}},
                {"User", "1000"},
                {"WorkingDir", "/work"},
                {"Cmd", {"python", "main.py"}}}},
              {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
      .dump();
}

inline void write_file(const fs::path& file, const std::string& content) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

inline std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A docker save tarball: manifest.json (written last, as docker does), config, layer tars.
inline fs::path make_docker_archive(const fs::path& file, const std::vector<std::string>& layers) {
  std::string config = config_json(layers);
  std::string config_name = sha256_hex(config) + ".json";
  std::vector<Entry> entries;
  json layer_names = json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string dir = "layer" + std::to_string(i);
    entries.push_back({dir, 'd'});
    entries.push_back({dir + "/layer.tar", 'f', layers[i]});
    layer_names.push_back(dir + "/layer.tar");
  }
  entries.push_back({config_name, 'f', config});
  json manifest =
      json::array({{{"Config", config_name}, {"RepoTags", {"app:latest"}}, {"Layers", layer_names}}});
  entries.push_back({"manifest.json", 'f', manifest.dump()});
  write_file(file, make_tar(entries));
  return file;
}

}  // namespace preflight::image::fixtures
