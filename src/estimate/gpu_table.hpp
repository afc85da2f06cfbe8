// The GPU table (policies/gpus.yaml, docs/formats.md "GPU table"): the vendor's peak figures
// for the GPU models platforms rent, and the fraction of a peak each kind of work reaches on
// them, for estimating a training step's time on a GPU that is not here. Data, not code: an
// organisation edits it, so it is read as strictly as a profile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace preflight::estimate {

// A fraction of a peak that a kind of work reaches, as a range (launch: seconds per kernel).
struct Efficiency {
  double low = 0;
  double typical = 0;
  double high = 0;
  std::string source;  // where the range comes from; empty for a modelled one
};

// The on-demand list price of one GPU-hour and the instance it comes from.
struct GpuPrice {
  double usd_per_hour = 0;
  std::string instance;  // "AWS p3.2xlarge"
  std::string source;    // the price list
};

// One GPU model. Peaks are dense TFLOPS; 0: the card lacks the precision, or no vendor figure
// is known (A10G). Bandwidths in GB/s; link is to one peer in the node, one direction.
struct GpuSpec {
  std::string name;  // as nvidia-smi prints it: "Tesla V100-SXM2-16GB"
  std::vector<std::string> aliases;
  std::uint64_t memory_bytes = 0;
  // The CUDA context and cuBLAS's workspaces, measured on the card; 0: not measured (the
  // memory need counts diagnosis's kFrameworkBytes).
  std::uint64_t framework_bytes = 0;
  double fp32 = 0;
  double tf32 = 0;
  double fp16 = 0;
  double bf16 = 0;
  double bandwidth_gb_s = 0;
  double link_gb_s = 0;  // 0: unknown
  std::optional<GpuPrice> price;
  std::vector<std::string> sources;
};

struct GpuTable {
  std::vector<GpuSpec> gpus;
  // By kind of work: matmul, convolution, recurrent, attention, memory (gpu_work_kinds()).
  std::map<std::string, Efficiency> efficiencies;
  Efficiency launch;           // seconds per kernel launch
  Efficiency step_overhead;    // seconds a step's loop takes besides its kernels; 0 when not given
  double internode_gb_s = 0;   // between nodes, one direction
  std::filesystem::path file;  // where it was loaded from

  // The GPU whose name or alias is `name`, ignoring case, surrounding spaces and a leading
  // "NVIDIA "; nullptr when none is.
  const GpuSpec* find(std::string_view name) const;
  // Every name and alias, for a did-you-mean.
  std::vector<std::string> names() const;
  // The efficiency of a kind of work; every kind of gpu_work_kinds() is in a loaded table.
  const Efficiency& efficiency(const std::string& kind) const { return efficiencies.at(kind); }
};

// The kinds of work `efficiency:` must give, in the file's order.
const std::vector<std::string>& gpu_work_kinds();

// Reads and checks a GPU table; every mistake is a bad_input error (exit 2) at its
// file:line:column.
Result<GpuTable> load_gpu_table(const std::filesystem::path& file);

// policies/gpus.yaml in Preflight's data folder.
std::filesystem::path shipped_gpu_table();

}  // namespace preflight::estimate
