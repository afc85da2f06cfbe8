// Runs a RunPlan in the container Preflight itself runs in: a Kubernetes pod made to stand for
// the platform (docs/scale-out.md "Kubernetes"), whose image, user, read-only root, missing
// network and limits are the platform's already. Nothing is mounted or entered: each of the
// plan's places is a folder the pod gives it (an emptyDir at the mount's destination). The
// read-only ones (the code, the inputs, the harness, the platform's files) are filled by the
// pod's init container (stage) and mounted readOnly in the job's container; the folders the
// job writes (its outputs, the harness's events) are copied back into the run folder
// afterwards, where the diagnosis reads them. The job runs as a child in a process group of its own, followed
// as a container is (sandbox/process_watch.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "image/image_store.hpp"
#include "sandbox/runtime.hpp"

namespace preflight::sandbox {

// The image of a run in a pod: the pod's own root.
inline constexpr const char* kPodImage = "rootfs:/";

class InPod final : public ContainerRuntime {
 public:
  // `image_rootfs` must be "/"; a plan of the platform's must be the pod's user's (check_user).
  Result<ContainerExit> run(const plan::RunPlan& plan, const std::filesystem::path& image_rootfs,
                            const LineSink& on_line, std::size_t max_line_bytes = kMaxLineBytes) override;
  // The init container's part: fills the places the platform gives the job read-only (the
  // code, the inputs, the harness, the platform's files), which the job's container then
  // mounts readOnly, as the platform's are.
  Status stage(const plan::RunPlan& plan) const;
  // The pod must run as the platform's user: no process in it can become another.
  Status check_user(unsigned uid, unsigned gid) const override;
};

// Bad input unless this process runs in a Kubernetes pod (KUBERNETES_SERVICE_HOST is set) or
// in a container that stands for one (PREFLIGHT_IN_POD=1): `preflight run --in-pod` copies
// into the folders a plan names, which on a machine of its own would be the machine's.
Status check_in_pod();

// The image configuration as a process in the pod sees it: its environment (the image's ENV
// and the pod's env:) without what Kubernetes adds (service variables, JOB_COMPLETION_INDEX,
// HOSTNAME) and Preflight's own PREFLIGHT_ variables.
image::ImageConfig pod_image_config(const std::vector<std::string>& environment);

}  // namespace preflight::sandbox
