// A Vertex AI custom job as job.yaml: the CustomJob spec that `gcloud ai custom-jobs create
// --config` takes (workerPoolSpecs, baseOutputDirectory), or a whole CustomJob with it under
// jobSpec. The first worker pool's first replica is the dry run: its container (or Python
// package) gives the image and command, its machine's accelerators the GPUs; Cloud Storage
// paths the job names through /gcs/ are inputs where a --map gives their local copy, else
// empty writable folders; baseOutputDirectory is an output and the AIP_*_DIR variables.
// docs/formats.md "Vertex AI CustomJob" has the table.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "formats/readers.hpp"
#include "spec/job_io.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::formats {

namespace {

namespace fs = std::filesystem;
using spec::YamlField;

// A /gcs/ path the job names, and the gs:// URI it is through Cloud Storage FUSE.
struct GcsPath {
  std::string mount;  // /gcs/bucket/path
  Found from;
};

std::string gs_uri(const std::string& gcs_path) { return "gs://" + gcs_path.substr(5); }

class VertexReader {
 public:
  VertexReader(const spec::YamlDoc& doc, const ReadOptions& options)
      : doc_(doc), options_(options), out_(doc.file()) {}

  Result<Translation> read() {
    if (auto ok = read_spec(doc_.root(), ""); !ok) return std::move(ok).error();
    if (!container_.image)
      return Error::bad_input("workerPoolSpecs: the first pool needs a containerSpec or a pythonPackageSpec",
                              pools_at_);
    write();
    return std::move(out_);
  }

 private:
  // A CustomJob's top level, or its jobSpec: the same reader (`path` "" or "jobSpec").
  Status read_spec(const YAML::Node& node, const std::string& path) {
    auto fields = doc_.fields(node, path, {});
    if (!fields) return std::move(fields).error();
    bool pools = false;
    for (const YamlField& field : *fields) {
      if (field.key == "jobSpec" && path.empty()) {
        if (auto ok = read_spec(field.value, field.path); !ok) return ok;
        pools = true;
      } else if (field.key == "displayName") {
        auto name = doc_.string(field);
        if (!name) return std::move(name).error();
        name_ = Found{job_name_of(*name), doc_.at(field), field.path};
      } else if (field.key == "workerPoolSpecs") {
        if (auto ok = read_pools(field); !ok) return ok;
        pools = true;
      } else if (field.key == "baseOutputDirectory") {
        if (auto ok = read_output_directory(field); !ok) return ok;
      } else if (field.key == "scheduling") {
        if (auto ok = read_scheduling(field); !ok) return ok;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    if (!pools && path.empty())
      return Error::bad_input("a Vertex AI custom job needs workerPoolSpecs", doc_.at(node));
    return Ok{};
  }

  // scheduling.timeout, a Duration as Google's JSON writes it ("7200s", "1.5s"): the time
  // limit; the restart and retry settings are notes.
  Status read_scheduling(const YamlField& scheduling) {
    auto fields = doc_.fields(scheduling, {});
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      if (field.key != "timeout") {
        out_.unmapped(doc_.at(field.key_node), field.path,
                      "restarts and scheduling on Vertex; the dry run runs once, now");
        continue;
      }
      auto text = doc_.string(field);
      if (!text) return std::move(text).error();
      const std::string number = text->ends_with('s') ? text->substr(0, text->size() - 1) : "";
      double seconds = 0;
      const bool valid = !number.empty() && number.find_first_not_of("0123456789.") == std::string::npos &&
                         std::sscanf(number.c_str(), "%lf", &seconds) == 1;
      if (!valid || seconds < 1)
        return doc_.error(field, "expected a duration in seconds such as \"7200s\", got \"" + *text + "\"");
      time_ = Found{duration_text(std::chrono::seconds(std::llround(seconds))), doc_.at(field), field.path};
    }
    return Ok{};
  }

  static std::string why_not(const std::string& key) {
    if (key == "serviceAccount" || key == "network" || key == "reservedIpRanges" || key == "enableWebAccess")
      return "the dry run has no network and no Google Cloud credentials";
    if (key == "diskSpec")
      return "the platform profile's disk applies (policies/platforms/vertex.yaml limits.disk)";
    return "not used by the dry run";
  }

  // workerPoolSpecs: a list of pools, or one pool as a map (gcloud takes both).
  Status read_pools(const YamlField& pools) {
    pools_at_ = doc_.at(pools);
    if (pools.value.IsMap()) return read_pool(pools.value, pools.path, true);
    if (!pools.value.IsSequence() || pools.value.size() == 0)
      return doc_.error(pools, "expected a list of worker pools, got " + spec::describe(pools.value));
    for (std::size_t i = 0; i < pools.value.size(); ++i) {
      // An empty pool keeps its place (Vertex numbers pools by position): it runs nothing.
      if (pools.value[i].IsMap() && pools.value[i].size() == 0) continue;
      if (auto ok = read_pool(pools.value[i], fmt::format("{}[{}]", pools.path, i), i == 0); !ok) return ok;
    }
    return Ok{};
  }

  Status read_pool(const YAML::Node& pool, const std::string& path, bool runs) {
    auto fields = doc_.fields(pool, path, {});
    if (!fields) return std::move(fields).error();
    long long replicas = 1;
    for (const YamlField& field : *fields) {
      if (field.key == "replicaCount") {
        auto count = doc_.integer(field);
        if (!count) return std::move(count).error();
        if (*count < 0) return doc_.error(field, "must not be negative");
        replicas = *count;
        if (runs) nodes_from_ = doc_.at(field);
      } else if (!runs) {
        continue;
      } else if (field.key == "machineSpec") {
        if (auto ok = read_machine(field); !ok) return ok;
      } else if (field.key == "containerSpec" || field.key == "pythonPackageSpec") {
        if (auto ok = read_container(field); !ok) return ok;
      } else if (field.key == "nfsMounts") {
        if (auto ok = read_nfs(field); !ok) return ok;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    nodes_ += replicas;
    if (!runs)
      out_.unmapped(
          doc_.at(pool), path,
          "the dry run runs the first pool's first replica; this pool's replicas count towards the nodes");
    return Ok{};
  }

  Status read_machine(const YamlField& machine) {
    auto fields = doc_.fields(machine, {});
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      if (field.key == "acceleratorCount") {
        auto count = doc_.string(field);
        if (!count) return std::move(count).error();
        gpus_ = Found{*count, doc_.at(field), field.path};
      } else {
        out_.unmapped(
            doc_.at(field.key_node), field.path,
            "the platform profile's machine applies (policies/platforms/vertex.yaml: its limits and gpu)");
      }
    }
    return Ok{};
  }

  // containerSpec {imageUri, command, args, env} or pythonPackageSpec {executorImageUri,
  // packageUris, pythonModule, args, env}.
  Status read_container(const YamlField& spec) {
    auto fields = doc_.fields(spec, {});
    if (!fields) return std::move(fields).error();
    const bool package = spec.key == "pythonPackageSpec";
    for (const YamlField& field : *fields) {
      auto taken = container_.read(doc_, field, {"imageUri", "executorImageUri"});
      if (!taken) return std::move(taken).error();
      if (*taken) continue;
      if (field.key == "pythonModule") {
        auto module = doc_.string(field);
        if (!module) return std::move(module).error();
        // The executor image runs the installed package's module.
        container_.command = {"python", "-m", *module};
        container_.command_from = Found{"", doc_.at(field), field.path};
      } else if (field.key == "env") {
        auto env = read_env_list(doc_, field, out_);
        if (!env) return std::move(env).error();
        env_.insert(env_.end(), env->begin(), env->end());
      } else if (field.key == "packageUris") {
        out_.unmapped(
            doc_.at(field.key_node), field.path,
            "the package Vertex installs is the code folder here (--code, by default the current folder)");
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    if (container_.command.empty())
      return Error::bad_input(
          spec.path + (package ? ": needs pythonModule"
                               : ": gives no command:, so the image's ENTRYPOINT would run; "
                                 "Preflight needs the command the container runs: add "
                                 "command: (e.g. [python, train.py])"),
          doc_.at(spec));
    return Ok{};
  }

  // nfsMounts: [{server, path, mountPoint}]: Vertex mounts each at /mnt/nfs/<mountPoint>.
  Status read_nfs(const YamlField& mounts) {
    if (!mounts.value.IsSequence()) return doc_.error(mounts, "expected a list of NFS mounts");
    for (std::size_t i = 0; i < mounts.value.size(); ++i) {
      const YAML::Node mount = mounts.value[i];
      const std::string path = fmt::format("{}[{}]", mounts.path, i);
      const auto text = [&](const char* key) {
        return mount.IsMap() && mount[key] && mount[key].IsScalar() ? mount[key].Scalar() : std::string();
      };
      if (text("server").empty() || text("path").empty() || text("mountPoint").empty())
        return Error::bad_input(path + ": an NFS mount needs server, path and mountPoint", doc_.at(mount));
      nfs_.push_back({"/mnt/nfs/" + text("mountPoint"),
                      Found{"nfs://" + text("server") + text("path"), doc_.at(mount), path}});
    }
    return Ok{};
  }

  Status read_output_directory(const YamlField& directory) {
    auto fields = doc_.fields(directory, {});
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      if (field.key != "outputUriPrefix") {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
        continue;
      }
      auto uri = doc_.string(field);
      if (!uri) return std::move(uri).error();
      std::string prefix = *uri;
      while (prefix.size() > 5 && prefix.back() == '/') prefix.pop_back();
      if (prefix.rfind("gs://", 0) != 0 || prefix.size() <= 5)
        return doc_.error(field, "expected a Cloud Storage URI, gs://bucket/path");
      output_dir_ = Found{prefix, doc_.at(field), field.path};
    }
    return Ok{};
  }

  // The /gcs/ paths the command and the variables name, each once, none inside another nor
  // inside the output directory.
  std::vector<GcsPath> gcs_paths() const {
    std::vector<GcsPath> found;
    const auto consider = [&](const std::string& word, const Found& from) {
      const auto start = word.find("/gcs/");
      if (start == std::string::npos || (start > 0 && word[start - 1] != '=')) return;
      std::string path = word.substr(start);
      while (path.size() > 5 && path.back() == '/') path.pop_back();
      if (path.size() <= 5 || !is_normal_absolute_path(path)) return;
      found.push_back({path, from});
    };
    for (const auto& word : container_.words()) consider(word, *container_.command_from);
    for (const auto& variable : env_) consider(variable.text, variable);
    std::sort(found.begin(), found.end(),
              [](const GcsPath& a, const GcsPath& b) { return a.mount.size() < b.mount.size(); });
    std::vector<GcsPath> kept;
    const std::string output = output_dir_ ? "/gcs/" + output_dir_->text.substr(5) : std::string();
    for (const auto& path : found) {
      const auto within = [&](const std::string& dir) {
        return path.mount == dir || is_under(path.mount, dir);
      };
      if ((!output.empty() && within(output)) ||
          std::any_of(kept.begin(), kept.end(), [&](const GcsPath& k) { return within(k.mount); }))
        continue;
      kept.push_back(path);
    }
    return kept;
  }

  void write() {
    out_.comment(
        fmt::format("The job.yaml that stands for {} (a Vertex AI custom job), written by preflight convert.",
                    out_.source().filename().string()));
    out_.comment("Each field names where it came from; what could not be mapped is listed at the end.");
    if (name_) out_.field(0, "name", {name_->text}, name_->from, name_->said);
    out_.field(0, "platform", {"vertex"}, pools_at_, "workerPoolSpecs");
    write_container(out_, options_, container_, container_.words());

    // A /gcs/ path with a local copy is data the job reads; one without is given as an empty
    // writable folder, and the note says which --map would give it its data.
    std::vector<std::pair<std::string, const GcsPath*>> inputs, outputs;
    const auto paths = gcs_paths();
    for (const auto& path : paths) {
      const bool mapped = spec::map_cloud_path(gs_uri(path.mount), options_.load.maps).has_value();
      (mapped ? inputs : outputs).push_back({place_name(path.mount), &path});
      if (!mapped)
        out_.unmapped(
            path.from.from, path.mount,
            fmt::format("no local copy, so the job gets an empty writable folder there; if it reads "
                        "data from it, add --map {}=./LOCAL",
                        gs_uri(path.mount)));
    }
    if (!inputs.empty() || !nfs_.empty()) {
      out_.open(0, "inputs", {});
      for (const auto& [name, path] : inputs) {
        out_.open(1, name, path->from.from, path->from.said + " names " + path->mount);
        out_.field(2, "path", {gs_uri(path->mount)}, path->from.from,
                   "Cloud Storage (--map gives its local copy)");
        out_.field(2, "mount", {path->mount}, path->from.from, "where Cloud Storage FUSE has it");
      }
      for (const GcsPath& nfs : nfs_) {
        out_.open(1, place_name(nfs.mount), nfs.from.from, nfs.from.said);
        out_.field(2, "path", {nfs.from.text}, nfs.from.from, "the NFS export (--map gives its local copy)");
        out_.field(2, "mount", {nfs.mount}, nfs.from.from, "where Vertex mounts it");
      }
    }
    if (!outputs.empty() || output_dir_) {
      out_.open(0, "outputs", {});
      if (output_dir_) {
        out_.open(1, "base_output", output_dir_->from, output_dir_->said);
        out_.field(2, "mount", {"/gcs/" + output_dir_->text.substr(5)}, output_dir_->from, "its /gcs/ path");
      }
      for (const auto& [name, path] : outputs) {
        out_.open(1, name, path->from.from, path->from.said + " names " + path->mount);
        out_.field(2, "mount", {path->mount}, path->from.from, "where Cloud Storage FUSE has it");
      }
    }
    write_paths(out_, options_);
    std::vector<Found> environment = env_;
    if (output_dir_) {
      // Vertex's variables under baseOutputDirectory: gs:// URIs, as the job gets them.
      for (const auto& entry : {std::pair{"AIP_MODEL_DIR", "model"},
                                {"AIP_CHECKPOINT_DIR", "checkpoints"},
                                {"AIP_TENSORBOARD_LOG_DIR", "logs"}}) {
        const std::string variable = entry.first;
        if (std::none_of(environment.begin(), environment.end(),
                         [&](const Found& f) { return f.said == variable; }))
          environment.push_back(
              Found{output_dir_->text + "/" + entry.second + "/", output_dir_->from, variable});
      }
    }
    write_environment(out_, environment, "env");
    out_.open(0, "resources", nodes_from_.known() ? nodes_from_ : pools_at_);
    if (gpus_) out_.field(1, "gpus", {gpus_->text, true}, gpus_->from, gpus_->said);
    out_.field(1, "nodes", {std::to_string(std::max<long long>(1, nodes_)), true},
               nodes_from_.known() ? nodes_from_ : pools_at_, "the replicas of every pool");
    if (time_)
      out_.field(0, "time_limit", {time_->text}, time_->from, time_->said);
    else
      out_.field(0, "time_limit", {"7d"}, pools_at_, "Vertex's default scheduling.timeout, 7 days");
  }

  // /gcs/data-bucket/imagenet → data_bucket_imagenet, made unique.
  std::string place_name(const std::string& mount) {
    return unique_input_name(mount.substr(mount.find('/', 1) + 1), names_);
  }

  const spec::YamlDoc& doc_;
  const ReadOptions& options_;
  Translation out_;
  std::optional<Found> name_, gpus_, output_dir_, time_;
  Container container_;
  SourceLocation pools_at_, nodes_from_;
  std::vector<Found> env_;
  std::vector<GcsPath> nfs_;
  std::vector<std::string> names_;
  long long nodes_ = 0;
};

}  // namespace

Result<Translation> translate_vertex(const spec::YamlDoc& doc, const ReadOptions& options) {
  return VertexReader(doc, options).read();
}

}  // namespace preflight::formats
