// The manifests that run a batch of dry runs on Kubernetes (docs/cli.md "preflight export k8s",
// docs/scale-out.md "Kubernetes"): one Indexed Job per image and platform user, whose pod I
// runs `preflight run --in-pod` on job I of its list, in the job's image as the platform's
// user, with a read-only root, an emptyDir at each of the platform's places, no network (a
// NetworkPolicy that allows nothing) and a podFailurePolicy that retries Preflight's own
// failures (exit 3) and not the verdicts (1, 2); and the ConfigMap of the job lists. Pure:
// the same inputs give the same bytes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/export_slurm.hpp"
#include "pipeline/job_context.hpp"
#include "spec/platform_profile.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

// A folder of the platform's that the pod gives as an emptyDir: one the job only reads is
// filled by the init container and mounted readOnly in the job's container.
struct PodPlace {
  std::string path;
  bool read_only = false;
  bool operator==(const PodPlace&) const = default;
  bool operator<(const PodPlace& other) const {
    return path != other.path ? path < other.path : read_only < other.read_only;
  }
};

// What a job's pod must give it (docs/scale-out.md "What the pod must give"), from its plan.
struct PodNeeds {
  unsigned uid = 0;
  unsigned gid = 0;
  std::vector<PodPlace> places;  // sorted, each once
  spec::ResourceLimits limits;
  std::vector<std::filesystem::path> reads;  // what the pod reads here: the code, the inputs
};

// The needs of `context`'s job on its platform, from its plan (made here; nothing runs).
Result<PodNeeds> pod_needs(const JobContext& context);

// Jobs that share a pod template: one image (as the cluster pulls it), one user, one set of
// limits, no folder read-only for one and written by another. Their places are the union of
// theirs.
struct PodGroup {
  std::string image;  // the cluster's reference to the image
  std::string shown;  // the image as Preflight named it, and its digest
  PodNeeds needs;
  std::vector<std::filesystem::path> jobs;  // in index order: pod I runs jobs[I]
};

struct K8sExport {
  std::string name;              // the objects' names begin with it; their label's value
  std::string claim;             // the PersistentVolumeClaim that holds the jobs, the bundle, the export
  std::filesystem::path mount;   // where the pods mount it: the path it has here
  std::filesystem::path out;     // the export's folder, below `mount` (reports/ is written by the pods)
  std::filesystem::path bundle;  // Preflight for the pods, below `mount`: bin/, lib/ (its loader), data/
  std::string loader;            // the loader's file name in bundle/lib
  std::string queue;             // Kueue's LocalQueue; empty: none
  std::string platform, image;   // each run's --platform and --image, when not empty
  std::vector<std::string> read_args;  // and its --as, --code and --map, paths absolute
  int parallel = 4;                    // pods of each Job at once, clamped to its jobs
  std::vector<PodGroup> groups;
};

inline constexpr int kDefaultK8sParallel = 4;

// Adds `needs` of `job` (image `image`, shown as `shown`) to the group it shares a template
// with, or to a new one.
void add_to_group(std::vector<PodGroup>& groups, const std::string& image, const std::string& shown,
                  const PodNeeds& needs, const std::filesystem::path& job);

// Preflight for the pods, in `bundle`: bin/preflight (this binary, `preflight`), lib/ (the
// loader and libraries it was linked with, as ldd lists them: the image's C library may be any
// or none) and data/ (policies/ and emulator/ of `data`). The loader's file name.
Result<std::string> write_bundle(const std::filesystem::path& bundle, const std::filesystem::path& preflight,
                                 const std::filesystem::path& data);

// Bad input: no job; a job, the export or the bundle not below the mount, or what a job reads
// (its code, its inputs); a path with a line break; a name Kubernetes cannot take.
Status check_k8s_export(const K8sExport& batch);

// `preflight.yaml`: the ConfigMap, the NetworkPolicy and a Job per group, as one YAML stream
// for `kubectl apply -f`; check_k8s_export first.
Result<std::vector<ExportedFile>> export_k8s(const K8sExport& batch);

}  // namespace preflight::pipeline
