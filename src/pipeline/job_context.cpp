#include "pipeline/job_context.hpp"

#include <future>

#include "util/data_dir.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultPlatform = "philly";

}  // namespace

Result<JobContext> load_job_context(const JobChoices& choices, const image::ProgressSink& progress,
                                    const WhilePoliciesLoad& meanwhile) {
  // The shipped tables are most of the reading (failures.yaml alone is 48 KB of YAML), and
  // depend on nothing the job says: the policies are read on a thread beside the job, its
  // profile, its image and then the GPU table, which take this thread less time.
  std::future<Result<diagnosis::Policies>> policies =
      std::async(std::launch::async, [] { return diagnosis::load_policies(diagnosis::shipped_rules_dir()); });
  auto job = formats::load_any_job(fs::absolute(choices.job_file), choices.read);
  if (!job) return std::move(job).error();

  const std::string platform_name =
      choices.platform.value_or(job->platform.empty() ? kDefaultPlatform : job->platform);
  auto profile = spec::load_platform(platform_name, spec::shipped_platforms_dir());
  if (!profile) {
    // An unknown name has no place of its own: it is the job's `platform:` entry.
    if (!choices.platform && !job->platform.empty() && !profile.error().where.known())
      profile.error().where = job->platform_where;
    return std::move(profile).error();
  }

  std::string image_text = choices.image.value_or(job->image.empty() ? profile->default_image : job->image);
  const bool written = !choices.image && !job->image.empty();
  // A profile file the job names is the job's too: its default image is chosen by the file.
  const bool job_profile =
      !choices.platform && !job->platform.empty() && platform_name.find('/') != std::string::npos;
  const bool chosen_by_file = written || (!choices.image && job_profile);
  const SourceLocation where = written       ? job->image_where
                               : job_profile ? job->platform_where
                                             : SourceLocation{};
  // A path in job.yaml is the job's, relative to its folder; one on the command line (--image)
  // is relative to where the command was typed, so that a batch's --image is one image.
  const fs::path base_dir = chosen_by_file ? job->file.parent_path() : fs::current_path();
  if (chosen_by_file)
    if (auto granted = check_image_grant(image_text, base_dir, choices.read.load.grant, where); !granted)
      return std::move(granted).error();
  auto image = resolve_image(image_text, base_dir, where, progress);
  if (!image) return std::move(image).error();
  auto gpus = estimate::load_gpu_table(estimate::shipped_gpu_table());
  if (meanwhile)
    if (auto done = meanwhile(*image); !done) return std::move(done).error();
  auto read_policies = policies.get();
  if (!read_policies) return std::move(read_policies).error();
  if (!gpus) return std::move(gpus).error();
  return JobContext{std::move(*job),   std::move(*profile),       std::move(image_text),
                    std::move(*image), std::move(*read_policies), std::move(*gpus)};
}

Status check_image_grant(const std::string& text, const fs::path& base_dir, const spec::HostGrant& grant,
                         const SourceLocation& where) {
  auto ref = image::parse_image_ref(text, base_dir);
  if (!ref) return Ok{};  // resolve_image says what is wrong with it, at the same place
  if (ref->kind == image::ImageRef::Kind::Registry) return spec::check_registry(ref->name, grant, where);
  if (ref->path.empty()) return Ok{};
  auto confined = spec::confine_host_path(ref->path, base_dir, grant, "image", where);
  if (!confined) return std::move(confined).error();
  return Ok{};
}

Result<image::UnpackedImage> resolve_image(const std::string& text, const fs::path& base_dir,
                                           const SourceLocation& written_at,
                                           const image::ProgressSink& progress) {
  auto ref = image::parse_image_ref(text, base_dir);
  if (!ref) {
    if (written_at.known()) ref.error().where = written_at;
    return std::move(ref).error();
  }
  image::ImageStore store(image::default_cache_dir(), data_dir() / "images");
  auto image = store.resolve(*ref, progress);
  // An image no store has is the reference's fault, at the place it was written.
  if (!image && image.error().kind == ErrorKind::BadInput && !image.error().where.known() &&
      written_at.known())
    image.error().where = written_at;
  return image;
}

}  // namespace preflight::pipeline
