// The jobs of a batch (docs/cli.md "preflight batch"): the JOB arguments expanded into job
// files, and a stable share of them for one runner among several (`--shard I/N`).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::pipeline {

// The most job files one batch may name, and the most entries a folder searched for them may
// hold: a bound, not a target.
inline constexpr std::size_t kMaxBatchJobs = 100'000;
inline constexpr std::uint64_t kMaxJobSearchEntries = 1'000'000;

// Each argument in turn:
// - a file ending in `.yaml` or `.yml`: a job file;
// - a folder: every `job.yaml` below it, sorted by path; links are not followed and folders
//   whose names begin with '.' (`.git`, `.venv`) or that are `node_modules` are not searched;
// - any other file: a list of jobs, one path per line relative to the list's folder (a job
//   file or a folder, not another list); blank lines and lines beginning with '#' are skipped.
// Each job once (the first time its absolute, normalised path is met), in the order found.
// Bad input, naming the argument or the list's line: a path that does not exist, a folder with
// no job.yaml, a list that names a list, and more than kMaxBatchJobs jobs.
Result<std::vector<std::filesystem::path>> expand_jobs(const std::vector<std::string>& args);

// One runner's share of a batch: `index` of `count`, from 1.
struct Shard {
  int index = 1;
  int count = 1;
};

// "I/N" with 1 <= I <= N <= 10000; anything else is bad input.
Result<Shard> parse_shard(const std::string& text);

// The jobs of `jobs` in `shard`: each job belongs to the shard its path, relative to `base`,
// hashes to (SHA-256), so that every runner given the same jobs, wherever it checked them out,
// takes the same ones, and adding a job moves no other. The order of `jobs` is kept.
std::vector<std::filesystem::path> shard_of(const std::vector<std::filesystem::path>& jobs, Shard shard,
                                            const std::filesystem::path& base);

// The jobs a batch or an export runs: expand_jobs(args), then, when `shard` ("I/N") is not
// empty, shard_of them relative to `base`. A shard may hold no job; the caller says what
// that means.
Result<std::vector<std::filesystem::path>> select_jobs(const std::vector<std::string>& args,
                                                       const std::string& shard,
                                                       const std::filesystem::path& base);

// The --platform and --image every job of a batch or an export runs with, checked once before
// any job starts: `platform` a shipped name or a profile file, which is made absolute so that
// a run started in any folder finds it; `image` a reference, relative to the working folder.
// Either may be empty (each job's own). The error names the option.
Status check_batch_options(std::string& platform, const std::string& image);

}  // namespace preflight::pipeline
