// Reads the harness's trace files (docs/harness.md "Trace"). The job may have written them,
// replaced them or forged them: every record is checked field by field, and what is read is
// bounded in bytes and in records.
#include "harness/trace.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "util/json_fields.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::harness {

namespace {

using nlohmann::json;

constexpr double kMaxTimestamp = 9007199254740992.0;  // 2^53 µs: exact as a double
constexpr double kMaxDuration = 1e13;                 // µs, about 115 days
constexpr std::int64_t kMaxPid = 1 << 22;             // the kernel's pid_max at most
constexpr std::int64_t kMaxTid = 0x7fffffff;
constexpr std::size_t kMaxCategory = 64;
constexpr std::uint64_t kMaxFolderEntries = 4096;

// A number field within [low, high], else nothing.
std::optional<double> bounded(const json& record, const char* key, double low, double high) {
  auto it = record.find(key);
  if (it == record.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < low || value > high) return std::nullopt;
  return value;
}

// The args of a record, kept only when small; a counter keeps only its numeric series.
json checked_args(const json& record, char phase) {
  auto it = record.find("args");
  if (it == record.end() || !it->is_object()) return json::object();
  json args = json::object();
  for (const auto& [key, value] : it->items()) {
    if (phase == 'C' && !(value.is_number() && std::isfinite(value.get<double>()))) continue;
    args[cut_utf8(key, kMaxTraceName)] = value;
  }
  if (args.dump().size() > kMaxTraceArgsBytes) return json::object();
  return args;
}

std::optional<TraceRecord> checked(const json& record) {
  if (!record.is_object()) return std::nullopt;
  const std::string phase = json_fields::text(record, "ph");
  if (phase.size() != 1 || phase.find_first_of("XCMi") != 0) return std::nullopt;
  TraceRecord out;
  out.phase = phase[0];
  out.name = cut_utf8(json_fields::text(record, "name"), kMaxTraceName);
  out.category = cut_utf8(json_fields::text(record, "cat"), kMaxCategory);
  const auto pid = bounded(record, "pid", 1, kMaxPid);
  const auto tid = bounded(record, "tid", 0, kMaxTid);
  if (!pid || !tid || out.name.empty()) return std::nullopt;
  out.pid = static_cast<int>(*pid);
  out.tid = static_cast<std::int64_t>(*tid);
  out.args = checked_args(record, out.phase);
  if (out.phase == 'M') {
    if (out.name != "process_name" && out.name != "thread_name" && out.name != "preflight_dropped")
      return std::nullopt;
    return out;
  }
  const auto ts = bounded(record, "ts", 0, kMaxTimestamp);
  if (!ts) return std::nullopt;
  out.ts = static_cast<std::int64_t>(*ts);
  if (out.phase == 'X') {
    const auto dur = bounded(record, "dur", 0, kMaxDuration);
    if (!dur) return std::nullopt;
    out.dur = static_cast<std::int64_t>(*dur);
  }
  if (out.phase == 'C' && out.args.empty()) return std::nullopt;
  return out;
}

}  // namespace

void parse_trace(std::string_view text, HarnessTrace& into) {
  std::map<int, std::uint64_t> dropped;  // the largest count each process said it dropped
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (into.records.size() >= kMaxTraceRecords) {
      ++into.dropped;
      continue;
    }
    auto record = checked(json_fields::parse_bounded(line));
    if (!record) continue;
    if (record->phase == 'M' && record->name == "preflight_dropped") {
      const double count = json_fields::number(record->args, "dropped");
      if (count > 0 && count < kMaxTimestamp)
        dropped[record->pid] = std::max(dropped[record->pid], static_cast<std::uint64_t>(count));
      continue;
    }
    into.records.push_back(std::move(*record));
  }
  for (const auto& [pid, count] : dropped) into.dropped += count;
}

HarnessTrace read_trace(const std::filesystem::path& dir) {
  HarnessTrace trace;
  std::vector<std::string> names;
  static const re2::RE2 file_name(R"(trace-\d{1,7}\.jsonl)");
  walk_job_tree(dir, kMaxFolderEntries, [&](const std::string& relative, const struct stat& st) {
    if (S_ISREG(st.st_mode) && re2::RE2::FullMatch(relative, file_name)) names.push_back(relative);
  });
  std::sort(names.begin(), names.end());
  std::size_t budget = kMaxTraceBytes;
  for (const auto& name : names) {
    if (budget == 0) break;
    auto text = read_job_file(dir, name, std::min(budget, kMaxTraceFileBytes));
    if (!text) continue;  // replaced by a link, a FIFO, or over its bound: not the harness's
    budget -= text->size();
    parse_trace(*text, trace);
  }
  return trace;
}

}  // namespace preflight::harness
