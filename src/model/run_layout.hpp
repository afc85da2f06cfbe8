// The run folder: one per dry run (under the cache's runs/) or per run of the image's Python
// (checks/), holding all that the run writes on the host. Its parts are named here only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace preflight::model {

// The folders of an overlay mount kept in `dir`: its upper layer (what was written through
// it), the kernel's work folder and the merged view.
struct OverlayLayout {
  std::filesystem::path dir;

  std::filesystem::path upper() const { return dir / "upper"; }
  std::filesystem::path work() const { return dir / "work"; }
  std::filesystem::path merged() const { return dir / "merged"; }
};

class RunLayout {
 public:
  explicit RunLayout(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& dir() const { return dir_; }

  // The container's root is an overlay over the image: its upper layer and work folder are
  // the run folder's own, its merged view the OCI bundle's rootfs.
  std::filesystem::path upper() const { return dir_ / "upper"; }
  std::filesystem::path overlay_work() const { return dir_ / "work"; }
  std::filesystem::path bundle() const { return dir_ / "bundle"; }
  std::filesystem::path rootfs() const { return bundle() / "rootfs"; }
  std::filesystem::path container_pid() const { return dir_ / "container.pid"; }
  // Written when Preflight stopped the job (its disk, its time): such a run's outputs are the
  // first pruned when a later run needs room.
  std::filesystem::path stopped() const { return dir_ / "stopped"; }
  // The copy-on-write code folder of a profile with code_writable.
  OverlayLayout code_overlay() const { return {dir_ / "code"}; }

  // Mounted for the harness to write (docs/harness.md): its events, and where each process
  // was when a timed-out job was asked (stacks-PID.txt).
  std::filesystem::path harness() const { return dir_ / "harness"; }
  std::filesystem::path events() const { return harness() / "events.jsonl"; }
  std::filesystem::path stacks(int pid) const {
    return harness() / ("stacks-" + std::to_string(pid) + ".txt");
  }

  // The sample of a large input, the job's output folders and the profile's kept folders,
  // and the files the platform puts in the container, each under its container path.
  std::filesystem::path input_sample(const std::string& input) const { return dir_ / "inputs" / input; }
  std::filesystem::path output(const std::string& name) const { return dir_ / "outputs" / name; }
  std::filesystem::path kept(const std::filesystem::path& container_dir) const {
    return dir_ / "kept" / container_dir.relative_path();
  }
  std::filesystem::path platform_file(const std::filesystem::path& container_path) const {
    return dir_ / "platform" / container_path.relative_path();
  }

  // What the job wrote that is kept after the run: its outputs and the profile's kept folders.
  std::vector<std::filesystem::path> kept_writes() const { return {dir_ / "outputs", dir_ / "kept"}; }

  // What is removed once the run is read: the container's layers, not its outputs or events.
  std::vector<std::filesystem::path> scratch() const {
    return {upper(), overlay_work(), rootfs(), code_overlay().dir};
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace preflight::model
