// What every command about a job starts from: the job file, the platform profile it runs on
// and its image, resolved (built or unpacked into the cache when missing).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "diagnosis/policies.hpp"
#include "estimate/gpu_table.hpp"
#include "formats/job_formats.hpp"
#include "image/image_store.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

struct JobChoices {
  std::filesystem::path job_file = "job.yaml";
  std::optional<std::string> platform;  // --platform NAME|FILE
  std::optional<std::string> image;     // --image REF
  formats::ReadOptions read;            // --as, --code, --map
};

struct JobContext {
  spec::JobSpec job;
  spec::PlatformProfile profile;
  std::string image_text;  // the reference as chosen: --image, the job's, the profile's default
  image::UnpackedImage image;
  diagnosis::Policies policies;  // policies/rules/
  estimate::GpuTable gpus;       // policies/gpus.yaml
};

// Work that needs neither the shipped policies nor anything that follows them, given the
// resolved image: done on the calling thread while the policies' thread is still reading them.
using WhilePoliciesLoad = std::function<Status(const image::UnpackedImage&)>;

// The job, its profile, its image and the shipped policies and GPU table, each error at its
// file:line; `meanwhile`, when given, runs once the image is resolved, and its error is the
// load's.
Result<JobContext> load_job_context(const JobChoices& choices, const image::ProgressSink& progress,
                                    const WhilePoliciesLoad& meanwhile = {});

// Whether a job file (or a profile it names) may choose the image `text`: a path (rootfs:,
// oci:, docker-archive:) in its folder tree or a granted folder, a registry the user allows.
Status check_image_grant(const std::string& text, const std::filesystem::path& base_dir,
                         const spec::HostGrant& grant, const SourceLocation& where);

// The image `text` names (relative paths against `base_dir`), built or unpacked when missing;
// a malformed reference is an error at `written_at`, where the reference was written if known.
Result<image::UnpackedImage> resolve_image(const std::string& text, const std::filesystem::path& base_dir,
                                           const SourceLocation& written_at,
                                           const image::ProgressSink& progress);

}  // namespace preflight::pipeline
