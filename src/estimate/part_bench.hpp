// The training step's parts benchmarked one at a time on this machine, in the job's image
// (emulator/bench/layer_bench.py, docs/estimate.md "Benchmarking the parts"), with the results
// cached by signature, image and machine: a second job, or a second model with the same
// layers, benchmarks nothing new.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/image_python.hpp"
#include "harness/step_parts.hpp"
#include "util/error.hpp"

namespace preflight::estimate {

// One part's times alone, per call, medians of `repeats`; or why it could not be rebuilt.
struct PartTime {
  double forward = 0;
  double backward = 0;
  int repeats = 0;
  std::string error;
};

// Results kept in <cache>/layers/<image digest>/<machine>-t<threads>/<part id>.json.
class PartCache {
 public:
  explicit PartCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The cache of this image on this machine with this many threads, under Preflight's cache
  // folder.
  static PartCache of_image(const std::string& image_digest, int threads);

  std::optional<PartTime> find(const std::string& id) const;
  // Written whole under a temporary name, then renamed: a reader never sees half a result.
  Status store(const std::string& id, const PartTime& time) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// What decides a part's speed here besides its signature: the CPU's model and how many CPUs
// this process may use. "cpu-" and 12 hex digits.
std::string machine_key();

struct BenchRun {
  std::map<std::string, PartTime> times;  // by part id
  int benchmarked = 0;                    // parts run now
  int cached = 0;                         // parts found in the cache
  int failed = 0;                         // parts that could not be rebuilt (now or before)
  double seconds = 0;                     // wall time spent benchmarking
};

// Each distinct part with a signature: from the cache, else benchmarked for about `budget`
// seconds in `python`'s image, with the step's threads. `progress` hears how far it is.
Result<BenchRun> bench_parts(const check::ImagePython& python, const harness::StepParts& parts,
                             const PartCache& cache, double budget,
                             const std::function<void(const std::string&)>& progress);

// One result line of layer_bench.py for the part `id` asked for; nullopt when it is not one.
std::optional<std::pair<std::string, PartTime>> parse_bench_line(std::string_view line);

}  // namespace preflight::estimate
