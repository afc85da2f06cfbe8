#include "pipeline/init_job.hpp"

#include "check/code_scan.hpp"
#include "check/image_python.hpp"
#include "check/scan_cache.hpp"
#include "image/image_store.hpp"
#include "pipeline/job_context.hpp"
#include "pipeline/job_draft.hpp"
#include "spec/platform_profile.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

Result<InitDraft> init_job(const InitChoices& choices, const image::ProgressSink& progress,
                           sandbox::ContainerRuntime& runtime) {
  std::error_code ec;
  const fs::path dir = fs::absolute(choices.dir).lexically_normal();
  if (!fs::is_directory(dir, ec))
    return Error::bad_input(choices.dir.string() +
                            ": no such folder; name the repository to write job.yaml for");
  auto profile = spec::load_platform(choices.platform.value_or("philly"), spec::shipped_platforms_dir());
  if (!profile) return std::move(profile).error();
  const std::string image_text = choices.image.value_or(profile->default_image);
  auto image = resolve_image(image_text, dir, {}, progress);
  if (!image) return std::move(image).error();
  auto python = check::ImagePython::find(image->rootfs, image->config.env, runtime);
  if (!python)
    return Error::bad_input("image " + image_text +
                            " has no python3 or python: preflight init reads the code with the image's "
                            "Python; choose another with --image");

  // Two readings: every file, to find the entry script; then the entry, for its parser.
  if (progress) progress("reading the code in " + dir.string());
  const auto cache = check::ScanCache::of_image(*image, image::default_cache_dir());
  auto scan = check::scan_code(*python, dir, check::python_files(dir), std::nullopt, cache);
  if (!scan) return std::move(scan).error();
  const auto entry = choose_entry(*scan);
  if (!entry)
    return Error::bad_input(choices.dir.string() +
                            ": no entry script found (train.py, main.py, run.py, a script with "
                            "`if __name__ == \"__main__\":` or a package's __main__.py); write job.yaml "
                            "by hand (docs/formats.md)");
  auto parser = check::scan_code(*python, dir, {entry->file}, check::EntryPoint{entry->file, {}, 0}, cache);
  if (!parser) return std::move(parser).error();
  scan->argparse = std::move(parser->argparse);

  // A profile of the user's own is named by its path, relative to the job's folder.
  const bool shipped = profile->file.parent_path() == spec::shipped_platforms_dir();
  const std::string platform =
      shipped ? profile->name : fs::absolute(profile->file).lexically_relative(dir).generic_string();
  const DraftChoices draft_choices{platform, image_text, profile->network};
  const JobDraft draft = draft_job(dir, *scan, *entry, draft_choices);
  return InitDraft{job_yaml(draft), draft.command};
}

}  // namespace preflight::pipeline
