#include "pipeline/job_context.hpp"

#include "util/data_dir.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {
constexpr const char* kDefaultPlatform = "philly";
}

Result<JobContext> load_job_context(const JobChoices& choices, const image::ProgressSink& progress) {
  auto job = spec::load_job(fs::absolute(choices.job_file));
  if (!job) return std::move(job).error();

  const std::string platform_name =
      choices.platform.value_or(job->platform.empty() ? kDefaultPlatform : job->platform);
  auto profile = spec::load_platform(platform_name, spec::shipped_platforms_dir());
  if (!profile) {
    if (!choices.platform && !job->platform.empty()) profile.error().where = job->platform_where;
    return std::move(profile).error();
  }

  std::string image_text = choices.image.value_or(job->image.empty() ? profile->default_image : job->image);
  auto ref = image::parse_image_ref(image_text, job->file.parent_path());
  if (!ref) {
    if (!choices.image && !job->image.empty()) ref.error().where = job->image_where;
    return std::move(ref).error();
  }
  image::ImageStore store(image::default_cache_dir(), data_dir() / "images");
  if (progress) progress("image " + image_text);
  auto image = store.resolve(*ref, progress);
  if (!image) return std::move(image).error();
  return JobContext{std::move(*job), std::move(*profile), std::move(image_text), std::move(*image)};
}

}  // namespace preflight::pipeline
