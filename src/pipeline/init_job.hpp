// `preflight init`: reads a repository's code with the chosen image's Python (the static
// checks' code scanner) and drafts its job.yaml (job_draft.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "image/image_store.hpp"
#include "sandbox/runtime.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

struct InitChoices {
  std::filesystem::path dir = ".";
  std::optional<std::string> platform;  // --platform NAME|FILE; default philly
  std::optional<std::string> image;     // --image REF; default the profile's image
};

struct InitDraft {
  std::string yaml;     // the job.yaml text
  std::string command;  // what it runs, for the user
};

// The repository's job.yaml, drafted; the image's Python runs in containers of `runtime`. Bad
// input (no such folder, no entry script, unknown platform or image) is an error with exit 2.
Result<InitDraft> init_job(const InitChoices& choices, const image::ProgressSink& progress,
                           sandbox::ContainerRuntime& runtime);

}  // namespace preflight::pipeline
