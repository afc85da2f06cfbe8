#include "pipeline/stage_watch.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "harness/events.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {
constexpr auto kPoll = std::chrono::milliseconds(250);
}

StageWatch::StageWatch(fs::path events_file, std::function<void(const std::string&)> step, bool has_setup)
    : thread_([file = std::move(events_file), step = std::move(step), has_setup](std::stop_token stop) {
        step(has_setup ? "setup" : "starting the job");
        std::mutex mutex;
        std::condition_variable_any wake;
        std::uintmax_t read_size = 0;
        std::string shown;
        std::unique_lock lock(mutex);
        while (!wake.wait_for(lock, stop, kPoll, [&] { return stop.stop_requested(); })) {
          std::error_code ec;
          const auto size = fs::file_size(file, ec);
          if (ec || size == read_size) continue;  // nothing new since the last reading
          read_size = size;
          const auto events = harness::read_events(file);
          if (events.stages.empty() || events.stages.back().stage == shown) continue;
          shown = events.stages.back().stage;
          step("stage " + shown);
        }
      }) {}

}  // namespace preflight::pipeline
