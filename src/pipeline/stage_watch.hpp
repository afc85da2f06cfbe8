// Follows the harness's events file while the job runs, to tell the user which stage the job
// is in (the status line of docs/cli.md "Progress"). Reading the file never disturbs the job.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace preflight::pipeline {

class StageWatch {
 public:
  // Calls `step` with "setup" (when the job has one) or "starting the job", then "stage NAME"
  // each time the job enters a stage, from a thread of its own, until destroyed.
  StageWatch(std::filesystem::path events_file, std::function<void(const std::string&)> step, bool has_setup);
  StageWatch(const StageWatch&) = delete;
  StageWatch& operator=(const StageWatch&) = delete;

 private:
  std::jthread thread_;
};

}  // namespace preflight::pipeline
