#include "pipeline/stage_watch.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "harness/events.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

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
        UniqueFd events;       // the job may write the folder: opened as read_events opens it
        std::size_t read = 0;  // bytes so far, at most kMaxReadBytes
        std::string pending;   // a line the harness has not finished writing yet
        std::string shown;
        std::unique_lock lock(mutex);
        while (!wake.wait_for(lock, stop, kPoll, [&] { return stop.stop_requested(); })) {
          if (!events.valid()) {
            auto opened = open_job_file(file.parent_path(), file.filename().string());
            if (!opened) continue;  // the harness has not started yet
            events = std::move(*opened);
          }
          // Only what was appended since the last reading: the file grows all through the run.
          char buffer[65536];
          for (ssize_t n; read < kMaxReadBytes && (n = ::read(events.get(), buffer, sizeof buffer)) > 0;) {
            pending.append(buffer, static_cast<std::size_t>(n));
            read += static_cast<std::size_t>(n);
          }
          const auto end = pending.rfind('\n');
          if (end == std::string::npos) continue;
          const auto parsed = harness::parse_events(pending.substr(0, end + 1));
          pending.erase(0, end + 1);
          if (parsed.stages.empty() || parsed.stages.back().stage == shown) continue;
          shown = parsed.stages.back().stage;
          step("stage " + shown);
        }
      }) {}

}  // namespace preflight::pipeline
