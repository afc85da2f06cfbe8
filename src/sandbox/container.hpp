// Runs a RunPlan in a real container: an overlay root over the cached image (the image is
// never written), an OCI bundle, and runc. Whatever it creates — overlay mount, container,
// cgroup — is gone when Runc::run returns, on every path (success, failure, timeout and
// Ctrl-C), but for the runtime's deletion of a container whose processes have all ended,
// which goes on until the next run or the end of the Runc.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "sandbox/runtime.hpp"

namespace preflight::sandbox {

// The runtime's `delete --force` of a container, started and left to run while this process
// goes on; `finish` (or the destructor) waits for it, then removes the container's cgroups as
// root, and says whether the runtime exited 0. Empty (nothing to finish) when default-made.
class ContainerDeletion {
 public:
  ContainerDeletion();
  explicit ContainerDeletion(std::string id);
  ContainerDeletion(ContainerDeletion&& other) noexcept;
  ContainerDeletion& operator=(ContainerDeletion&& other) noexcept;
  ~ContainerDeletion();

  bool finish();

 private:
  struct Runtime;  // the runtime's process
  std::string id_;
  std::unique_ptr<Runtime> runtime_;
};

// Deletes the container `id` with whatever is left of it (processes, cgroup); true when it
// existed and is gone. Safe to call for a container that never was.
bool delete_container(const std::string& id);

// Whether the runtime knows the container `id` (`runc state`): one this process could not
// delete, without root, is still there.
bool container_exists(const std::string& id);

// The OCI runtime to use: $PREFLIGHT_RUNTIME, else runc on PATH. Empty when none.
std::filesystem::path find_runtime();

// runc, or the runtime find_runtime() names.
class Runc final : public ContainerRuntime {
 public:
  Runc();
  Runc(const Runc&) = delete;
  Runc& operator=(const Runc&) = delete;
  ~Runc() override;

  Result<ContainerExit> run(const plan::RunPlan& plan, const std::filesystem::path& image_rootfs,
                            const LineSink& on_line, std::size_t max_line_bytes = kMaxLineBytes) override;

 private:
  ContainerDeletion deleting_;  // the last run's container
};

}  // namespace preflight::sandbox
