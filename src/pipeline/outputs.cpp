#include "pipeline/outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "diagnosis/job_words.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr size_t kListed = 5;  // paths named in the message
// Entries looked at per folder the job wrote: a job of millions of files costs a bounded walk.
constexpr std::uint64_t kWalkedEntries = 100'000;

struct Written {
  std::string path;  // in the container
  std::uintmax_t bytes = 0;
};

// Writes that are the platform's business and lost on purpose: caches and per-user installs
// under the home, Python's bytecode, the kernels torch.compile builds (TorchInductor's cache,
// /tmp/torchinductor_USER, and Triton's, ~/.triton), Preflight's own folders and the /etc/hosts
// it writes as container engines do.
bool expected_scratch(const std::string& path, const std::string& home) {
  for (const char* dir : {"/.cache/", "/.local/", "/.config/", "/.triton/"})
    if (!home.empty() && path.rfind(home + dir, 0) == 0) return true;
  return path.rfind("/opt/preflight/", 0) == 0 || path.find("/__pycache__/") != std::string::npos ||
         path.rfind("/tmp/torchinductor_", 0) == 0 || path == "/etc/hosts";
}

// A mount point the runtime created in the root: the files the platform writes for the job and
// inputs that are single files (AzureML's uri_file) are bound over empty files.
bool mount_point(const std::string& path, const plan::RunPlan& plan) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                     [&](const plan::MountPlan& m) { return m.destination == path; });
}

// The files in an upper layer, `upper` standing for `at` in the container.
void add_written(const fs::path& upper, const std::string& at, const plan::RunPlan& plan,
                 std::vector<Written>& written) {
  const std::string& home = plan.facts.home;
  walk_job_tree(upper, kWalkedEntries, [&](const std::string& relative, const struct stat& st) {
    // Only files: not folders, whiteouts or symbolic links (`ln -s` holds no result).
    if (!S_ISREG(st.st_mode)) return;
    std::string path = (fs::path(at) / relative).generic_string();
    if (expected_scratch(path, home) || mount_point(path, plan)) return;
    written.push_back({path, static_cast<std::uintmax_t>(st.st_size)});
  });
}

// The name and size of every file in the outputs and kept folders.
std::set<std::pair<std::string, std::uintmax_t>> kept_files(const plan::RunPlan& plan) {
  std::set<std::pair<std::string, std::uintmax_t>> kept;
  for (const auto& m : plan.mounts) {
    if (m.kind != model::MountFact::Kind::Output) continue;
    walk_job_tree(m.source, kWalkedEntries, [&](const std::string& relative, const struct stat& st) {
      if (S_ISREG(st.st_mode)) kept.emplace(fs::path(relative).filename().string(), st.st_size);
    });
  }
  return kept;
}

bool under(const std::string& path, model::MountFact::Kind kind, const plan::RunPlan& plan) {
  return std::any_of(plan.facts.mounts.begin(), plan.facts.mounts.end(), [&](const model::MountFact& m) {
    return m.kind == kind && is_under(path, m.container_path);
  });
}

// What the job wrote in the container's root and in its copy-on-write code folder (the
// platform's kept folders inside the code are mounts of their own, so not in its layer), less
// what is not lost: a file also copied into an output (the same name and size: a working
// folder exported at the end), and in the platform's scratch folder, made for intermediate
// files, all but what torch.save wrote there.
std::vector<Written> written_outside(const fs::path& upper, const plan::RunPlan& plan,
                                     const harness::HarnessEvents& events) {
  std::vector<Written> all, written;
  add_written(upper, "/", plan, all);
  for (const auto& m : plan.mounts)
    if (!m.overlay_dir.empty()) add_written(m.overlay().upper(), m.destination, plan, all);
  const auto kept = kept_files(plan);
  for (Written& w : all) {
    const bool saved = std::any_of(events.saves.begin(), events.saves.end(),
                                   [&](const harness::SaveEvent& save) { return save.path == w.path; });
    if (kept.count({fs::path(w.path).filename().string(), w.bytes}) ||
        (!saved && under(w.path, model::MountFact::Kind::Scratch, plan)))
      continue;
    written.push_back(std::move(w));
  }
  std::sort(written.begin(), written.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return written;
}

// A warning of `rule`, which checks.yaml classifies (its stage is checkpoint's: keeping results
// is that stage's business); a torch.save that wrote a lost file gives its line.
model::Finding lost(std::string rule, std::string message, std::string hint) {
  model::Finding f;
  f.rule = std::move(rule);
  f.severity = model::Severity::Warning;
  f.message = std::move(message);
  f.hint = std::move(hint);
  return f;
}

std::string outputs_hint(const plan::RunPlan& plan) {
  return "write results under " + diagnosis::output_words(plan.facts);
}

// The first torch.save that wrote one of `written` (any torch.save when `written` is empty).
const harness::SaveEvent* first_save(const harness::HarnessEvents& events,
                                     const std::vector<Written>& written) {
  for (const auto& save : events.saves) {
    if (written.empty() ||
        std::any_of(written.begin(), written.end(), [&](const Written& w) { return w.path == save.path; }))
      return &save;
  }
  return nullptr;
}

// Points `finding` at the torch.save line that wrote a lost file.
void at_save(model::Finding& finding, const harness::SaveEvent* save, const plan::RunPlan& plan) {
  if (save) finding.location = harness::location_in_code(save->where, plan.facts.code_container_dir);
}

}  // namespace

std::vector<model::Finding> output_findings(const plan::RunPlan& plan, const fs::path& upper,
                                            const harness::HarnessEvents& events) {
  std::vector<model::Finding> findings;
  auto written = written_outside(upper, plan, events);
  const harness::SaveEvent* saved_elsewhere = first_save(events, written);
  if (!written.empty()) {
    std::uintmax_t total = 0;
    std::vector<std::string> named;
    for (const auto& w : written) total += w.bytes;
    for (size_t i = 0; i < std::min(kListed, written.size()); ++i)
      named.push_back(fmt::format("{} ({})", written[i].path, human_size(written[i].bytes)));
    if (written.size() > kListed) named.push_back(fmt::format("and {} more", written.size() - kListed));
    findings.push_back(lost("written-outside-outputs",
                            fmt::format("the job wrote {} file{} ({}) outside its output folders, which the "
                                        "platform discards when the job ends: {}",
                                        written.size(), written.size() == 1 ? "" : "s", human_size(total),
                                        fmt::join(named, ", ")),
                            outputs_hint(plan)));
    at_save(findings.back(), saved_elsewhere, plan);
  }
  const bool trained = std::any_of(events.stages.begin(), events.stages.end(),
                                   [](const auto& stage) { return stage.stage == "train"; });
  if (!trained) return findings;
  for (const auto& m : plan.mounts) {
    std::error_code ec;
    // The platform's kept folders are there whether the job uses them or not.
    if (m.kind != model::MountFact::Kind::Output || m.name.empty() || !fs::is_empty(m.source, ec)) continue;
    findings.push_back(
        lost("output-left-empty",
             fmt::format("the job trained but left output \"{}\" ({}) empty: nothing of this run "
                         "would be kept",
                         m.name, m.destination),
             "save the model or checkpoints under " + (plan.facts.job_kind == model::JobKind::JobYaml
                                                           ? fmt::format("${{{{outputs.{}}}}}", m.name)
                                                           : m.destination)));
    at_save(findings.back(), saved_elsewhere, plan);
  }
  return findings;
}

}  // namespace preflight::pipeline
