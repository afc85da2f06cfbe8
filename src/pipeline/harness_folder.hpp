// The harness folder a run's container mounts (plan::kEmulatorMount): Preflight's emulator/,
// with the bytecode the image's own interpreter would write beside each of its Python modules.
// The folder is mounted read-only, so without it every run compiled the harness's 6,000 lines
// again (46 ms of a warm run's CPU; docs/harness.md "The harness's bytecode").
#pragma once

#include <filesystem>

#include "image/image_store.hpp"
#include "sandbox/runtime.hpp"

namespace preflight::pipeline {

// The most harness folders kept: a new harness (an edited emulator/) or image makes another.
inline constexpr int kKeptHarnessFolders = 16;

// <cache_dir>/harness/<key>, where the key covers every byte of emulator/ (its __pycache__
// folders aside), the image by digest and its interpreter's path. Made on the first run of an
// image with a harness: the image's Python compiles each module in a container
// (emulator/check/compile.py) into hash-checked bytecode, and the folder, assembled aside, is
// renamed into place whole. A folder is used only when it is this user's and no one else may
// write it. data_dir()/emulator itself, whose modules then compile at each run, for an image
// without Python, one not kept by digest (a rootfs: folder, which can change under its name),
// an interpreter that keeps no bytecode (before 3.7) or sends back what was not asked for
// (both kept as <key>.none, so that its container runs once), a compile that fails, or a
// cache that cannot be written.
std::filesystem::path harness_folder(const image::UnpackedImage& image,
                                     const std::filesystem::path& cache_dir,
                                     sandbox::ContainerRuntime& runtime);

}  // namespace preflight::pipeline
