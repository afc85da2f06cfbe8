#include "pipeline/stage_watch.hpp"

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
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
        std::ifstream in;
        std::string pending;  // a line the harness has not finished writing yet
        std::string shown;
        std::unique_lock lock(mutex);
        while (!wake.wait_for(lock, stop, kPoll, [&] { return stop.stop_requested(); })) {
          if (!in.is_open() && (in.open(file), !in)) continue;  // the harness has not started yet
          // Only what was appended since the last reading: the file grows all through the run.
          pending.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
          in.clear();
          const auto end = pending.rfind('\n');
          if (end == std::string::npos) continue;
          const auto events = harness::parse_events(pending.substr(0, end + 1));
          pending.erase(0, end + 1);
          if (events.stages.empty() || events.stages.back().stage == shown) continue;
          shown = events.stages.back().stage;
          step("stage " + shown);
        }
      }) {}

}  // namespace preflight::pipeline
