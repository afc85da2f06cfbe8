// The dry run's trace (docs/formats.md "trace.json.gz"): what the harness recorded in each
// process, with the job's stages and its failure, as one Chrome Trace Event file that
// Perfetto, chrome://tracing and speedscope open.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/events.hpp"
#include "harness/trace.hpp"
#include "report/report.hpp"

namespace preflight::pipeline {

// The bound of a trace file, compressed; events are left out, the latest first, to stay in it.
inline constexpr std::size_t kMaxTraceGzipBytes = 5'000'000;
// The pseudo-process that holds the job's own tracks (its stages and failure): above any pid.
inline constexpr int kJobTrackPid = (1 << 22) + 1;

struct TraceSources {
  const harness::HarnessEvents* events = nullptr;
  harness::HarnessTrace harness;
  double started = 0;  // wall-clock seconds when the container started
  double setup_seconds = 0;
  bool had_setup = false;
  double total_seconds = 0;  // the container's run
};

// (bugprone-exception-escape: nlohmann::json's moves are noexcept; the check cannot see
// through its assertion macro.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunTrace {
  nlohmann::json json;         // {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}
  std::string gzip;            // json, compressed: what trace.json.gz holds
  std::uint64_t left_out = 0;  // by the harness's bound and by this file's
};

// The trace of a run whose report (verdict, stages, first error) is `report`. Times are in
// microseconds since the container started; every thread's spans nest strictly.
RunTrace make_trace(TraceSources sources, const report::Report& report,
                    std::size_t max_gzip_bytes = kMaxTraceGzipBytes);

}  // namespace preflight::pipeline
