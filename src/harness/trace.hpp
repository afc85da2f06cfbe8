// The harness's trace files (emulator/, docs/harness.md "Trace"): Chrome Trace Event records
// that each process of the job appended to trace-PID.jsonl, read back as untrusted input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::harness {

// One record as the harness wrote it: times in microseconds, `ts` on the wall clock (seconds
// since the epoch × 10⁶, the events' `started + t`).
struct TraceRecord {
  char phase = 'X';  // 'X' a complete span, 'C' a counter, 'M' a name, 'i' an instant
  std::string name;
  std::string category;
  std::int64_t ts = 0;
  std::int64_t dur = 0;  // 'X' only
  int pid = 0;
  std::int64_t tid = 0;
  nlohmann::json args = nlohmann::json::object();
};

struct HarnessTrace {
  std::vector<TraceRecord> records;
  // Events the harness left out at its bound (its `preflight_dropped` records, the largest of
  // each process) and those this reader left out at its own.
  std::uint64_t dropped = 0;
};

// Bounds of what is read: the job may write these files as it likes.
inline constexpr std::size_t kMaxTraceFileBytes = 16 << 20;
inline constexpr std::size_t kMaxTraceBytes = 64 << 20;  // all files together
inline constexpr std::size_t kMaxTraceRecords = 200000;
inline constexpr std::size_t kMaxTraceArgsBytes = 4096;  // a record's args as JSON text
inline constexpr std::size_t kMaxTraceName = 200;

// Reads every trace-PID.jsonl in the harness folder `dir` (no link followed, regular files
// only, bounded). A missing folder or file gives an empty trace.
HarnessTrace read_trace(const std::filesystem::path& dir);
// Adds the records of one file's text; malformed lines and records are skipped.
void parse_trace(std::string_view text, HarnessTrace& into);

}  // namespace preflight::harness
