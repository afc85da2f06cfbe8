// A Kubeflow PyTorchJob (kubeflow.org/v1) as job.yaml: the Master's pod (else the Worker's) is
// the one the dry run runs; its container named "pytorch" (else the first) gives the image,
// command, working folder, environment and GPUs; its volume mounts give the inputs (read-only
// claims and host folders, through --map) and outputs (writable ones, emptyDirs) where the
// pod has them. docs/formats.md "Kubeflow PyTorchJob" has the table.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <optional>

#include "formats/readers.hpp"
#include "spec/job_io.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::formats {

namespace {

namespace fs = std::filesystem;
using spec::YamlField;

// An input or output the pod's volume mounts give.
struct Place {
  std::string name;
  std::string path;  // the cluster location (pvc://claim/sub) of an input; empty for an output
  std::string mount;
  Found from;
};

// Why a field the dry run does not use is left out, by its key (generic otherwise).
const std::map<std::string, std::string, std::less<>> kWhy = {
    {"runPolicy", "the operator's retries and clean-up; the profile's retry: applies"},
    {"elasticPolicy", "elastic training; the dry run runs one node"},
    {"nprocPerNode", "torchrun's processes per node; the harness runs torchrun's ranks as one process"},
    {"restartPolicy", "the profile's retry: applies"},
    {"imagePullPolicy", "images are resolved locally"},
    {"imagePullSecrets", "images are resolved locally"},
    {"securityContext", "the platform profile's user applies (policies/platforms/kubeflow.yaml)"},
    {"nodeSelector", "scheduling; the dry run runs on this machine"},
    {"tolerations", "scheduling; the dry run runs on this machine"},
    {"affinity", "scheduling; the dry run runs on this machine"},
    {"priorityClassName", "scheduling; the dry run runs on this machine"},
    {"schedulerName", "scheduling; the dry run runs on this machine"},
    {"serviceAccountName", "no cluster API is reachable from the dry run"},
    {"initContainers", "only the training container runs"},
    {"ports", "the dry run has no network"},
    {"livenessProbe", "no probes run"},
    {"readinessProbe", "no probes run"},
    {"startupProbe", "no probes run"},
    {"envFrom", "a ConfigMap's or Secret's values are not known here; give them in env: with value:"},
    {"metadata", "labels and annotations do not change what the job meets"},
};

std::string why_not(const std::string& key) {
  auto found = kWhy.find(key);
  return found != kWhy.end() ? found->second : "not used by the dry run";
}

// A Kubernetes object's top level, as both of Kubeflow's kinds have it: where kind: is, the
// name in metadata, and the spec; any other field is a note. `needs` says what a missing spec
// lacks ("a TrainJob needs spec.trainer").
struct KubernetesObject {
  SourceLocation kind_at;
  std::optional<Found> name;
  std::optional<YamlField> spec;  // always set once read
};

Result<KubernetesObject> read_object(const spec::YamlDoc& doc, Translation& out, const std::string& needs) {
  auto top = doc.fields(doc.root(), "", {});
  if (!top) return std::move(top).error();
  KubernetesObject object;
  for (const YamlField& field : *top) {
    if (field.key == "kind") {
      object.kind_at = doc.at(field);
    } else if (field.key == "spec") {
      object.spec.emplace(field);
    } else if (field.key == "metadata") {
      auto fields = doc.fields(field, {});
      if (!fields) return std::move(fields).error();
      for (const YamlField& entry : *fields) {
        if (entry.key != "name") {
          out.unmapped(doc.at(entry.key_node), entry.path,
                       entry.key == "namespace" ? "the dry run is not in a cluster" : why_not("metadata"));
          continue;
        }
        auto name = doc.string(entry);
        if (!name) return std::move(name).error();
        object.name = Found{*name, doc.at(entry), entry.path};
      }
    } else if (field.key != "apiVersion") {
      out.unmapped(doc.at(field.key_node), field.path, "not part of a job's definition");
    }
  }
  if (!object.spec) return Error::bad_input(needs, doc.at(doc.root()));
  return object;
}

class PyTorchJobReader {
 public:
  PyTorchJobReader(const spec::YamlDoc& doc, const ReadOptions& options)
      : doc_(doc), options_(options), out_(doc.file()) {}

  Result<Translation> read() {
    auto object = read_object(doc_, out_, "a PyTorchJob needs spec.pytorchReplicaSpecs");
    if (!object) return std::move(object).error();
    name_ = object->name;
    if (auto ok = read_spec(*object->spec); !ok) return std::move(ok).error();
    if (auto ok = write(object->kind_at); !ok) return std::move(ok).error();
    return std::move(out_);
  }

 private:
  Status read_spec(const YamlField& spec) {
    auto fields = doc_.fields(spec, {});
    if (!fields) return std::move(fields).error();
    std::optional<YamlField> replicas;
    for (const YamlField& field : *fields) {
      if (field.key == "pytorchReplicaSpecs") {
        replicas = field;
      } else if (field.key == "runPolicy") {
        if (auto ok = read_run_policy(field); !ok) return ok;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    if (!replicas) return Error::bad_input("spec: a PyTorchJob needs pytorchReplicaSpecs", doc_.at(spec));
    auto roles = doc_.fields(*replicas, {});
    if (!roles) return std::move(roles).error();
    // The dry run is the Master's pod, or a Worker's when there is no Master.
    const YamlField* run = nullptr;
    for (const YamlField& role : *roles) {
      if (role.key != "Master" && role.key != "Worker") {
        out_.unmapped(doc_.at(role.key_node), role.path, "a PyTorchJob has Master and Worker replicas");
        continue;
      }
      if (!run || role.key == "Master") run = &role;
    }
    if (!run) return Error::bad_input(replicas->path + ": needs a Master or a Worker", doc_.at(*replicas));
    nodes_from_ = doc_.at(run->key_node);
    for (const YamlField& role : *roles)
      if (role.key == "Master" || role.key == "Worker")
        if (auto ok = read_replica(role, &role == run); !ok) return ok;
    return Ok{};
  }

  Status read_replica(const YamlField& role, bool runs) {
    auto fields = doc_.fields(role, {});
    if (!fields) return std::move(fields).error();
    long long count = 1;
    std::optional<YamlField> pod;
    for (const YamlField& field : *fields) {
      if (field.key == "replicas") {
        auto value = doc_.integer(field);
        if (!value) return std::move(value).error();
        if (*value < 0) return doc_.error(field, "must not be negative");
        count = *value;
      } else if (field.key == "template") {
        pod = field;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    nodes_ += count;
    if (!pod) return Error::bad_input(role.path + ": needs a template (the pod)", doc_.at(role));
    if (!runs) {
      out_.unmapped(doc_.at(pod->key_node), pod->path,
                    "the dry run runs the Master's pod; this one only counts towards the nodes");
      return Ok{};
    }
    auto parts = doc_.fields(*pod, {});
    if (!parts) return std::move(parts).error();
    for (const YamlField& part : *parts) {
      if (part.key == "spec") {
        if (auto ok = read_pod(part); !ok) return ok;
      } else {
        out_.unmapped(doc_.at(part.key_node), part.path, why_not(part.key));
      }
    }
    if (!container_path_) return Error::bad_input(pod->path + ": needs spec.containers", doc_.at(*pod));
    return Ok{};
  }

  Status read_pod(const YamlField& pod) {
    auto fields = doc_.fields(pod, {});
    if (!fields) return std::move(fields).error();
    std::optional<YamlField> containers;
    for (const YamlField& field : *fields) {
      if (field.key == "containers") {
        containers = field;
      } else if (field.key == "volumes") {
        if (auto ok = read_volumes(field); !ok) return ok;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    if (!containers || !containers->value.IsSequence() || containers->value.size() == 0)
      return Error::bad_input(pod.path + ".containers: needs a list of at least one container",
                              doc_.at(containers ? containers->value : pod.value));
    // The operator runs the container named "pytorch"; the others are sidecars.
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < containers->value.size(); ++i)
      if (containers->value[i].IsMap() && containers->value[i]["name"] &&
          containers->value[i]["name"].IsScalar() && containers->value[i]["name"].Scalar() == "pytorch")
        chosen = i;
    for (std::size_t i = 0; i < containers->value.size(); ++i) {
      const std::string path = fmt::format("{}[{}]", containers->path, i);
      if (i != chosen) {
        out_.unmapped(doc_.at(containers->value[i]), path,
                      "only the training container (named pytorch) runs");
        continue;
      }
      container_path_ = path;
      if (auto ok = read_container(containers->value[i], path); !ok) return ok;
    }
    return Ok{};
  }

  Status read_volumes(const YamlField& volumes) {
    if (!volumes.value.IsSequence()) return doc_.error(volumes, "expected a list of volumes");
    for (std::size_t i = 0; i < volumes.value.size(); ++i) {
      const YAML::Node volume = volumes.value[i];
      const std::string path = fmt::format("{}[{}]", volumes.path, i);
      if (!volume.IsMap() || !volume["name"] || !volume["name"].IsScalar())
        return Error::bad_input(path + ": a volume needs a name", doc_.at(volume));
      volumes_[volume["name"].Scalar()] = {volume, path};
    }
    return Ok{};
  }

  Status read_container(const YAML::Node& container, const std::string& path) {
    auto fields = doc_.fields(container, path, {});
    if (!fields) return std::move(fields).error();
    std::optional<YamlField> mounts;  // after resources:, whose memory limit sizes a /dev/shm
    for (const YamlField& field : *fields) {
      if (field.key == "name") continue;
      auto taken = container_.read(doc_, field, {"image"});
      if (!taken) return std::move(taken).error();
      if (*taken) continue;
      if (field.key == "workingDir") {
        auto dir = doc_.string(field);
        if (!dir) return std::move(dir).error();
        working_dir_ = Found{*dir, doc_.at(field), field.path};
      } else if (field.key == "env") {
        auto env = read_env_list(doc_, field, out_);
        if (!env) return std::move(env).error();
        env_ = std::move(*env);
      } else if (field.key == "resources") {
        if (auto ok = read_resources(field); !ok) return ok;
      } else if (field.key == "volumeMounts") {
        mounts = field;
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
      }
    }
    if (mounts)
      if (auto ok = read_mounts(*mounts); !ok) return ok;
    if (!container_.command_from)
      return Error::bad_input(path +
                                  ": gives no command:, so the image's ENTRYPOINT would run; Preflight needs "
                                  "the command the pod runs: add command: (e.g. [python, train.py])",
                              doc_.at(container));
    command_ = expand_references(container_.words());
    return Ok{};
  }

  // Kubernetes replaces $(NAME) in command and args by the container's variable NAME when it
  // is defined, and $$ by $; anything else stays as written.
  std::vector<std::string> expand_references(const std::vector<std::string>& words) const {
    std::vector<std::string> out;
    for (const std::string& word : words) {
      std::string expanded;
      for (std::size_t i = 0; i < word.size(); ++i) {
        if (word.compare(i, 2, "$$") == 0) {
          expanded += '$', ++i;
          continue;
        }
        const auto close = word.compare(i, 2, "$(") == 0 ? word.find(')', i) : std::string::npos;
        if (close != std::string::npos) {
          const std::string name = word.substr(i + 2, close - i - 2);
          auto value = std::find_if(env_.begin(), env_.end(), [&](const Found& f) { return f.said == name; });
          if (value != env_.end()) {
            expanded += value->text, i = close;
            continue;
          }
        }
        expanded += word[i];
      }
      out.push_back(std::move(expanded));
    }
    return out;
  }

  Status read_resources(const YamlField& resources) {
    auto kinds = doc_.fields(resources, {});
    if (!kinds) return std::move(kinds).error();
    for (const YamlField& kind : *kinds) {
      auto amounts = doc_.fields(kind, {});
      if (!amounts) return std::move(amounts).error();
      if (kind.key != "limits" && kind.key != "requests") {
        out_.unmapped(doc_.at(kind.key_node), kind.path, why_not(kind.key));
        continue;
      }
      for (const YamlField& amount : *amounts) {
        if (amount.key == "nvidia.com/gpu") {
          // A GPU's limit and request must be equal; the limit is what the device plugin gives.
          if (gpus_ && kind.key == "requests") continue;
          auto count = doc_.string(amount);
          if (!count) return std::move(count).error();
          gpus_ = Found{*count, doc_.at(amount), amount.path};
        } else if (kind.key == "limits" && amount.key == "memory") {
          auto size = doc_.string(amount);
          if (!size) return std::move(size).error();
          memory_ = *size;
          out_.unmapped(doc_.at(amount.key_node), amount.path,
                        "the platform profile's memory limit applies (policies/platforms/kubeflow.yaml "
                        "limits.memory); a profile of your own can match it");
        } else {
          out_.unmapped(doc_.at(amount.key_node), amount.path,
                        "the platform profile's limits apply (policies/platforms/kubeflow.yaml)");
        }
      }
    }
    return Ok{};
  }

  Status read_mounts(const YamlField& mounts) {
    if (!mounts.value.IsSequence()) return doc_.error(mounts, "expected a list of volume mounts");
    for (std::size_t i = 0; i < mounts.value.size(); ++i) {
      const std::string path = fmt::format("{}[{}]", mounts.path, i);
      auto fields = doc_.fields(mounts.value[i], path, {});
      if (!fields) return std::move(fields).error();
      std::string name, mount_path, sub_path;
      SourceLocation mount_at = doc_.at(mounts.value[i]);
      bool read_only = false;
      for (const YamlField& field : *fields) {
        if (field.key == "readOnly") {
          auto value = doc_.boolean(field);
          if (!value) return std::move(value).error();
          read_only = *value;
          continue;
        }
        auto text = doc_.string(field);
        if (!text) return std::move(text).error();
        if (field.key == "name") {
          name = *text;
        } else if (field.key == "mountPath") {
          mount_path = *text, mount_at = doc_.at(field);
        } else if (field.key == "subPath") {
          // Kubernetes refuses a subPath that is absolute or has "..": it would leave the volume.
          if (text->starts_with('/') || spec::climbs_out(*text))
            return doc_.error(field,
                              "\"" + *text +
                                  "\" is not a relative path inside the volume (Kubernetes refuses an "
                                  "absolute subPath or one with \"..\"); give the folder inside the volume");
          sub_path = *text;
        } else {
          out_.unmapped(doc_.at(field.key_node), field.path, why_not(field.key));
        }
      }
      auto volume = volumes_.find(name);
      if (volume == volumes_.end())
        return Error::bad_input(fmt::format("{}: volume \"{}\" is not among the pod's volumes", path, name),
                                doc_.at(mounts.value[i]));
      if (auto ok =
              place_volume(volume->second, name, mount_path, sub_path, read_only, Found{"", mount_at, path});
          !ok)
        return ok;
    }
    return Ok{};
  }

  // What a mounted volume is in job.yaml: a claim, host folder or NFS export the job reads is
  // an input, reached through --map; one it may write, or an emptyDir, a fresh output; a
  // memory emptyDir on /dev/shm, the size of shared memory.
  // A volume mounted twice (two subPaths) gives two places: name, name_2.
  Status place_volume(const std::pair<YAML::Node, std::string>& volume, const std::string& name,
                      const std::string& mount, const std::string& sub_path, bool read_only,
                      const Found& at) {
    const YAML::Node& node = volume.first;
    const std::string sub = sub_path.empty() ? "" : "/" + sub_path;
    // The volume's source: a key of it that is present (its value may be empty: emptyDir: {}).
    const auto source_of = [&](const char* key) {
      const YAML::Node source = node[key];
      return source.IsDefined() ? std::optional<YAML::Node>(source) : std::nullopt;
    };
    const auto text_of = [](const YAML::Node& map, const char* key) {
      return map.IsMap() && map[key] && map[key].IsScalar() ? map[key].Scalar() : std::string();
    };
    const auto flag_of = [](const YAML::Node& map) {
      return map.IsMap() && map["readOnly"] && map["readOnly"].IsScalar() &&
             map["readOnly"].Scalar() == "true";
    };
    std::string cloud;
    if (auto claim = source_of("persistentVolumeClaim")) {
      cloud = "pvc://" + text_of(*claim, "claimName") + sub, read_only = read_only || flag_of(*claim);
    } else if (auto host = source_of("hostPath")) {
      cloud = "hostpath://" + text_of(*host, "path") + sub;
    } else if (auto nfs = source_of("nfs")) {
      cloud = "nfs://" + text_of(*nfs, "server") + text_of(*nfs, "path") + sub,
      read_only = read_only || flag_of(*nfs);
    } else if (auto empty_dir = source_of("emptyDir")) {
      const YAML::Node& empty = *empty_dir;
      if (mount == "/dev/shm") {
        const std::string size = text_of(empty, "sizeLimit").empty() ? memory_ : text_of(empty, "sizeLimit");
        if (size.empty()) {
          out_.unmapped(at.from, volume.second,
                        "shared memory as large as the node's: give the emptyDir a sizeLimit (the profile's "
                        "limits.shm applies)");
        } else {
          shm_ = Found{size, at.from,
                       volume.second + (text_of(empty, "sizeLimit").empty()
                                            ? " on /dev/shm, as large as the memory limit"
                                            : ".emptyDir.sizeLimit on /dev/shm")};
        }
        return Ok{};
      }
      places_.push_back(Place{unique_input_name(name, place_names_), "", mount,
                              Found{"", at.from, volume.second + " (an emptyDir)"}});
      return Ok{};
    } else {
      out_.unmapped(at.from, volume.second,
                    fmt::format("its files are not known here: the job sees nothing at {}", mount));
      return Ok{};
    }
    if (!read_only) {
      out_.unmapped(
          at.from, volume.second,
          fmt::format("mounted writable: the dry run gives the job an empty folder at {} instead of {} "
                      "(mount it readOnly, and --map it, for data the job reads)",
                      mount, cloud));
      places_.push_back(
          Place{unique_input_name(name, place_names_), "", mount, Found{"", at.from, volume.second}});
      return Ok{};
    }
    places_.push_back(
        Place{unique_input_name(name, place_names_), cloud, mount, Found{"", at.from, volume.second}});
    return Ok{};
  }

  Status write(const SourceLocation& kind_at) {
    out_.comment(
        fmt::format("The job.yaml that stands for {} (a Kubeflow PyTorchJob), written by preflight "
                    "convert.",
                    out_.source().filename().string()));
    out_.comment("Each field names where it came from; what could not be mapped is listed at the end.");
    if (name_) out_.field(0, "name", {name_->text}, name_->from, name_->said);
    out_.field(0, "platform", {"kubeflow"}, kind_at, "kind: PyTorchJob");
    // The code is at the container's workingDir, else where the script the command names is.
    write_container(out_, options_, container_, command_, working_dir_);
    write_places(true);
    write_places(false);
    write_paths(out_, options_);
    if (!env_.empty()) {
      out_.open(0, "environment_variables", env_.front().from, "the container's env");
      for (const Found& variable : env_)
        out_.field(1, variable.said, {variable.text}, variable.from, "env " + variable.said);
    }
    out_.open(0, "resources", nodes_from_);
    const bool typed = true;
    if (gpus_) out_.field(1, "gpus", {gpus_->text, typed}, gpus_->from, gpus_->said);
    out_.field(1, "nodes", {std::to_string(std::max<long long>(1, nodes_)), typed}, nodes_from_,
               "the replicas of Master and Worker");
    if (shm_) out_.field(1, "shm_size", {shm_->text}, shm_->from, shm_->said);
    if (deadline_) out_.field(0, "time_limit", {deadline_->text}, deadline_->from, deadline_->said);
    return Ok{};
  }

  // runPolicy.activeDeadlineSeconds is the job's time limit; its other fields are notes.
  Status read_run_policy(const YamlField& policy) {
    auto fields = doc_.fields(policy, {});
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      if (field.key != "activeDeadlineSeconds") {
        out_.unmapped(doc_.at(field.key_node), field.path, why_not("runPolicy"));
        continue;
      }
      auto seconds = doc_.integer(field);
      if (!seconds) return std::move(seconds).error();
      if (*seconds < 1) return doc_.error(field, "must be at least 1 (seconds)");
      deadline_ = Found{duration_text(std::chrono::seconds(*seconds)), doc_.at(field), field.path};
    }
    return Ok{};
  }

  void write_places(bool inputs) {
    bool opened = false;
    for (const Place& place : places_) {
      if (place.path.empty() == inputs) continue;
      if (!opened) out_.open(0, inputs ? "inputs" : "outputs", place.from.from), opened = true;
      out_.open(1, place.name, place.from.from, place.from.said);
      if (inputs)
        out_.field(2, "path", {place.path}, place.from.from, "the volume (--map it to a local copy)");
      out_.field(2, "mount", {place.mount}, place.from.from, "its mountPath");
    }
  }

  const spec::YamlDoc& doc_;
  const ReadOptions& options_;
  Translation out_;
  std::optional<Found> name_, working_dir_, gpus_, shm_, deadline_;
  Container container_;
  SourceLocation nodes_from_;
  std::optional<std::string> container_path_;  // the container that runs
  std::vector<std::string> command_;
  std::vector<Found> env_;  // said: the variable's name
  std::map<std::string, std::pair<YAML::Node, std::string>> volumes_;
  std::vector<Place> places_;
  std::vector<std::string> place_names_;
  std::string memory_;  // the container's memory limit, as written
  long long nodes_ = 0;
};

// A Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1): spec.trainer gives the node's
// image, command, environment, nodes and GPUs; the dataset and model initializers' storage is
// an input where they put it (/workspace/dataset, /workspace/model). The runtime it refers to
// lives in the cluster: its defaults are not known here.
class TrainJobReader {
 public:
  TrainJobReader(const spec::YamlDoc& doc, const ReadOptions& options)
      : doc_(doc), options_(options), out_(doc.file()) {}

  Result<Translation> read() {
    auto object = read_object(doc_, out_, "a TrainJob needs spec.trainer");
    if (!object) return std::move(object).error();
    name_ = object->name;
    const SourceLocation kind_at = object->kind_at;
    const YamlField& spec = *object->spec;
    auto fields = doc_.fields(spec, {});
    if (!fields) return std::move(fields).error();
    std::optional<YamlField> trainer;
    for (const YamlField& field : *fields) {
      if (field.key == "trainer")
        trainer = field;
      else if (field.key == "initializer") {
        if (auto ok = read_initializer(field); !ok) return std::move(ok).error();
      } else {
        out_.unmapped(
            doc_.at(field.key_node), field.path,
            field.key == "runtimeRef"
                ? "the runtime is the cluster's: its image, command and policies are not known here "
                  "(spec.trainer gives them)"
                : why_not(field.key));
      }
    }
    if (!trainer)
      return Error::bad_input("spec: a TrainJob needs trainer (its image and command)", doc_.at(spec));
    if (auto ok = read_trainer(*trainer); !ok) return std::move(ok).error();
    write(kind_at);
    return std::move(out_);
  }

 private:
  Status read_trainer(const YamlField& trainer) {
    auto fields = doc_.fields(trainer, {});
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      auto taken = container_.read(doc_, field, {"image"});
      if (!taken) return std::move(taken).error();
      if (*taken) continue;
      if (field.key == "env") {
        auto env = read_env_list(doc_, field, out_);
        if (!env) return std::move(env).error();
        env_ = std::move(*env);
      } else if (field.key == "numNodes") {
        auto nodes = doc_.string(field);
        if (!nodes) return std::move(nodes).error();
        nodes_ = Found{*nodes, doc_.at(field), field.path};
      } else if (field.key == "resourcesPerNode") {
        for (const char* kind : {"limits", "requests"}) {
          const YAML::Node gpus = field.value[kind] ? field.value[kind]["nvidia.com/gpu"] : YAML::Node();
          if (!gpus_ && gpus && gpus.IsScalar())
            gpus_ = Found{gpus.Scalar(), doc_.at(gpus), field.path + "." + kind + ".nvidia.com/gpu"};
        }
        out_.unmapped(doc_.at(field.key_node), field.path + " (memory, cpu)",
                      "the platform profile's limits apply (policies/platforms/kubeflow.yaml)");
      } else {
        out_.unmapped(doc_.at(field.key_node), field.path,
                      field.key == "numProcPerNode" ? why_not("nprocPerNode") : why_not(field.key));
      }
    }
    if (!container_.command_from)
      return Error::bad_input(trainer.path +
                                  ": gives no command:, so the runtime's would run, which is the "
                                  "cluster's; add command: (e.g. [torchrun, train.py])",
                              doc_.at(trainer));
    return Ok{};
  }

  // initializer: {dataset: {storageUri: hf://..., env: [...]}, model: {...}}: each downloads
  // into /workspace/<dataset|model>, which the node reads.
  Status read_initializer(const YamlField& initializer) {
    auto parts = doc_.fields(initializer, {});
    if (!parts) return std::move(parts).error();
    for (const YamlField& part : *parts) {
      auto fields = doc_.fields(part, {});
      if (!fields) return std::move(fields).error();
      for (const YamlField& field : *fields) {
        if (field.key != "storageUri" || (part.key != "dataset" && part.key != "model")) {
          out_.unmapped(doc_.at(field.key_node), field.path,
                        "the initializer's settings; --map gives its data");
          continue;
        }
        auto uri = doc_.string(field);
        if (!uri) return std::move(uri).error();
        inputs_.push_back({part.key, Found{*uri, doc_.at(field), field.path}});
      }
    }
    return Ok{};
  }

  void write(const SourceLocation& kind_at) {
    out_.comment(
        fmt::format("The job.yaml that stands for {} (a Kubeflow TrainJob), written by preflight convert.",
                    out_.source().filename().string()));
    out_.comment("Each field names where it came from; what could not be mapped is listed at the end.");
    if (name_) out_.field(0, "name", {name_->text}, name_->from, name_->said);
    out_.field(0, "platform", {"kubeflow"}, kind_at, "kind: TrainJob");
    if (!container_.image)
      out_.unmapped(kind_at, "spec.trainer.image",
                    "not given, so the runtime's: the profile's default image stands in");
    write_container(out_, options_, container_, container_.words());
    if (!inputs_.empty()) {
      out_.open(0, "inputs", inputs_.front().second.from);
      for (const auto& [name, uri] : inputs_) {
        out_.open(1, name, uri.from, uri.said);
        out_.field(2, "path", {uri.text}, uri.from, "the initializer's storage (--map gives its local copy)");
        out_.field(2, "mount", {"/workspace/" + name}, uri.from, "where the initializer puts it");
      }
    }
    write_paths(out_, options_);
    write_environment(out_, env_, "env");
    out_.open(0, "resources", kind_at);
    if (gpus_) out_.field(1, "gpus", {gpus_->text, true}, gpus_->from, gpus_->said);
    if (nodes_) out_.field(1, "nodes", {nodes_->text, true}, nodes_->from, nodes_->said);
  }

  const spec::YamlDoc& doc_;
  const ReadOptions& options_;
  Translation out_;
  std::optional<Found> name_, gpus_, nodes_;
  Container container_;
  std::vector<Found> env_;
  std::vector<std::pair<std::string, Found>> inputs_;
};

}  // namespace

Result<Translation> translate_trainjob(const spec::YamlDoc& doc, const ReadOptions& options) {
  return TrainJobReader(doc, options).read();
}

Result<Translation> translate_pytorchjob(const spec::YamlDoc& doc, const ReadOptions& options) {
  return PyTorchJobReader(doc, options).read();
}

}  // namespace preflight::formats
