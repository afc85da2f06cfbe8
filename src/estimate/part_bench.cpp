#include "estimate/part_bench.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "util/data_dir.hpp"
#include "util/json_fields.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::estimate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kRunSeconds = 180;  // a container run starts no part after this: inside its 5 minutes
constexpr std::size_t kMaxResultBytes = 4096;  // a cached result
constexpr double kMaxSeconds = 1e4;            // a call's time

std::optional<double> seconds_field(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0 || value > kMaxSeconds) return std::nullopt;
  return value;
}

// A result as layer_bench.py or the cache gives it; nullopt when malformed.
std::optional<PartTime> part_time(const json& object) {
  if (!object.is_object()) return std::nullopt;
  PartTime time;
  if (auto error = object.find("error"); error != object.end() && error->is_string()) {
    time.error = cut_utf8(error->get<std::string>(), 400);
    return time;
  }
  auto forward = seconds_field(object, "forward");
  auto backward = seconds_field(object, "backward");
  if (!forward || !backward) return std::nullopt;
  time.forward = *forward;
  time.backward = *backward;
  time.repeats = json_fields::integer(object, "repeats");
  return time;
}

bool is_part_id(std::string_view id) {
  return id.size() == 64 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

PartCache PartCache::of_image(const std::string& image_digest, int threads) {
  std::string image = image::digest_hex(image_digest);
  if (image.empty()) image = sha256_hex(image_digest);  // a reference without a digest
  return PartCache(image::default_cache_dir() / "layers" / image /
                   fmt::format("{}-t{}", machine_key(), std::max(threads, 0)));
}

std::optional<PartTime> PartCache::find(const std::string& id) const {
  if (!is_part_id(id)) return std::nullopt;
  auto text = read_job_file(dir_, id + ".json", kMaxResultBytes);  // never through a link
  if (!text) return std::nullopt;
  return part_time(json_fields::parse_bounded(*text));
}

Status PartCache::store(const std::string& id, const PartTime& time) const {
  if (!is_part_id(id)) return Error::runtime("not a part id: " + id);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Error::runtime(fmt::format("cannot make {}: {}", dir_.string(), ec.message()));
  json value = time.error.empty()
                   ? json{{"forward", time.forward}, {"backward", time.backward}, {"repeats", time.repeats}}
                   : json{{"error", time.error}};
  std::random_device random;
  const fs::path temp = dir_ / fmt::format(".{}.{:08x}", id, random());
  if (!write_file_whole(temp, dir_ / (id + ".json"), value.dump()))
    return Error::runtime(fmt::format("cannot write the result of part {} in {}", id, dir_.string()));
  return Ok{};
}

std::string machine_key() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 1);
      break;
    }
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int usable = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  return "cpu-" + sha256_hex(fmt::format("{}|{}", trim(model), usable)).substr(0, 12);
}

std::optional<std::pair<std::string, PartTime>> parse_bench_line(std::string_view line) {
  json value = json_fields::parse_bounded(line);
  if (!value.is_object()) return std::nullopt;
  std::string id = json_fields::text(value, "id");
  if (!is_part_id(id)) return std::nullopt;
  auto time = part_time(value);
  if (!time) return std::nullopt;
  return std::make_pair(std::move(id), std::move(*time));
}

Result<BenchRun> bench_parts(const check::ImagePython& python, const harness::StepParts& parts,
                             const PartCache& cache, double budget,
                             const std::function<void(const std::string&)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  BenchRun run;
  std::vector<std::pair<std::string, const harness::StepPart*>> missing;
  std::set<std::string> seen;
  for (const auto& part : parts.parts) {
    if (part.id.empty() || !seen.insert(part.id).second) continue;
    if (auto time = cache.find(part.id)) {
      ++run.cached;
      run.failed += !time->error.empty();
      run.times.emplace(part.id, std::move(*time));
    } else {
      missing.emplace_back(part.id, &part);
    }
  }
  if (missing.empty()) return run;
  const fs::path program_file = data_dir() / "emulator" / "bench" / "layer_bench.py";
  auto program = read_regular_file(program_file, 1 << 20);
  if (!program) return Error::runtime("cannot read " + program_file.string());
  // Each run gets every part left and starts none after its deadline; the parts it answered
  // are a prefix of those asked. A run that dies inside a part (the container's memory limit,
  // a crash in a kernel) fails that part alone, and the next run goes on after it.
  std::size_t next = 0;
  while (next < missing.size()) {
    if (progress) progress(fmt::format("benchmarking the step's parts: {} of {}", next, missing.size()));
    json request = {{"budget", budget}, {"deadline", kRunSeconds}, {"parts", json::array()}};
    if (parts.threads > 0) request["threads"] = parts.threads;
    for (std::size_t i = next; i < missing.size(); ++i) {
      json part = missing[i].second->signature;
      part["id"] = missing[i].first;
      request["parts"].push_back(std::move(part));
    }
    auto result = python.run(*program, request.dump(-1, ' ', true, json::error_handler_t::replace),
                             /*with_site=*/true);
    if (!result) return std::move(result).error().context("benchmarking the step's parts");
    std::istringstream lines(result->out);
    const std::size_t before = next;
    for (std::string line; next < missing.size() && std::getline(lines, line);) {
      auto parsed = parse_bench_line(line);
      if (!parsed || parsed->first != missing[next].first) continue;
      if (auto stored = cache.store(parsed->first, parsed->second); !stored) return stored.error();
      ++run.benchmarked;
      run.failed += !parsed->second.error.empty();
      run.times.insert(std::move(*parsed));
      ++next;
    }
    if (next == missing.size() || result->exit_code == 0) {
      if (next == before)
        return Error::runtime("the parts' benchmark answered nothing in the image: " +
                              cut_utf8(trim(result->err), 2000));
      continue;
    }
    // The run died inside the part after those it answered.
    PartTime died;
    died.error = fmt::format("the benchmark died in it (exit {}): {}", result->exit_code,
                             cut_utf8(trim(result->err), 300));
    if (auto stored = cache.store(missing[next].first, died); !stored) return stored.error();
    ++run.benchmarked;
    ++run.failed;
    run.times.emplace(missing[next].first, std::move(died));
    ++next;
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace preflight::estimate
