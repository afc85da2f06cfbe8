#include "diagnosis/operation_stage.hpp"

#include <re2/re2.h>

#include <algorithm>

#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

using harness::Frame;

bool in_library(const Frame& frame, const char* part) {
  return !frame.user && frame.file.find(part) != std::string::npos;
}

// The torch.serialization function the job called (the outermost frame of that file):
// "save", "load" or empty.
std::string serialization_call(const std::vector<Frame>& frames) {
  for (const Frame& frame : frames)
    if (!frame.user && frame.file.ends_with("torch/serialization.py")) return frame.function;
  return "";
}

// The job's innermost function saves: save_checkpoint, save_model, checkpoint, ckpt_save...
bool user_saves(const std::vector<Frame>& frames) {
  static const re2::RE2 saving(R"((?i)(?:^|_)(?:save|checkpoint|ckpt)(?:_|$|s$))");
  auto innermost =
      std::find_if(frames.rbegin(), frames.rend(), [](const Frame& frame) { return frame.user; });
  return innermost != frames.rend() && re2::RE2::PartialMatch(innermost->function, saving);
}

bool under_input(const std::string& path, const model::PlatformFacts& facts) {
  if (path.empty() || path[0] != '/') return false;
  return std::any_of(facts.mounts.begin(), facts.mounts.end(), [&](const model::MountFact& mount) {
    return mount.kind == model::MountFact::Kind::Input &&
           (path == mount.container_path || is_under(path, mount.container_path));
  });
}

}  // namespace

std::optional<std::string> stage_of_operation(const harness::ExceptionEvent& exception,
                                              const model::PlatformFacts& facts, const std::string& stage,
                                              bool trained) {
  const auto& frames = exception.frames;
  // Reading the data, or writing beside it (a cache next to the input), prepares data.
  if (under_input(exception.path, facts)) return "data";
  const std::string call = serialization_call(frames);
  if (call == "save" || call == "_save") {
    // Before training, a save while the data is prepared writes a cache, not a checkpoint.
    if (!trained && stage == "data") return std::nullopt;
    return "checkpoint";
  }
  if (call == "load") return trained ? std::optional<std::string>("evaluate") : std::nullopt;
  if (user_saves(frames)) return "checkpoint";
  if (std::any_of(frames.begin(), frames.end(),
                  [](const Frame& f) { return in_library(f, "torch/utils/data/"); }))
    return "data";
  return std::nullopt;
}

}  // namespace preflight::diagnosis
