#include "pipeline/outputs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr size_t kListed = 5;  // paths named in the message

struct Written {
  std::string path;  // in the container
  std::uintmax_t bytes = 0;
};

// Writes that are the platform's business and lost on purpose: caches and per-user installs
// under the home, Python's bytecode, Preflight's own folders and the /etc/hosts it writes as
// container engines do.
bool expected_scratch(const std::string& path, const std::string& home) {
  for (const char* dir : {"/.cache/", "/.local/", "/.config/"})
    if (!home.empty() && path.rfind(home + dir, 0) == 0) return true;
  return path.rfind("/opt/preflight/", 0) == 0 || path.find("/__pycache__/") != std::string::npos ||
         path == "/etc/hosts";
}

// The files the platform writes for the job are bound over empty files the runtime creates.
bool platform_file(const std::string& path, const plan::RunPlan& plan) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const plan::MountPlan& m) {
    return m.kind == diagnosis::MountFact::Kind::PlatformFile && m.destination == path;
  });
}

// The files in an upper layer, `upper` standing for `at` in the container.
void add_written(const fs::path& upper, const std::string& at, const plan::RunPlan& plan,
                 std::vector<Written>& written) {
  const std::string& home = plan.facts.home;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(upper, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (!fs::is_regular_file(status) && !fs::is_symlink(status)) continue;  // folders, whiteouts
    std::string path = (fs::path(at) / fs::relative(it->path(), upper, ec)).generic_string();
    if (expected_scratch(path, home) || platform_file(path, plan)) continue;
    written.push_back({path, fs::is_regular_file(status) ? it->file_size(ec) : 0});
  }
}

// What the job wrote in the container's root and in its copy-on-write code folder (the
// platform's kept folders inside the code are mounts of their own, so not in its layer).
std::vector<Written> written_outside(const fs::path& upper, const plan::RunPlan& plan) {
  std::vector<Written> written;
  add_written(upper, "/", plan, written);
  for (const auto& m : plan.mounts)
    if (!m.overlay_dir.empty()) add_written(m.overlay_dir / "upper", m.destination, plan, written);
  std::sort(written.begin(), written.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return written;
}

report::Finding lost(std::string rule, std::string message, std::string hint) {
  report::Finding f;
  f.rule = std::move(rule);
  f.category = "Output Lost";
  f.dimension = "Execution Environment";
  f.root_cause = "Environment Difference";
  f.severity = report::Severity::Warning;
  f.message = std::move(message);
  f.hint = std::move(hint);
  return f;
}

std::string outputs_hint(const plan::RunPlan& plan) {
  std::vector<std::string> outputs;
  for (const auto& m : plan.mounts)  // a kept folder of the platform's own has no name
    if (m.kind == diagnosis::MountFact::Kind::Output)
      outputs.push_back(m.name.empty() ? m.destination : fmt::format("${{{{outputs.{}}}}}", m.name));
  if (outputs.empty())
    return "declare an output in job.yaml (outputs: {model: {}}) and write results under ${{outputs.model}}";
  return fmt::format("write results under {}", fmt::join(outputs, " or "));
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
void at_save(report::Finding& finding, const harness::SaveEvent* save, const plan::RunPlan& plan) {
  if (!save) return;
  finding.location = harness::location_in_code(save->where, plan.facts.code_container_dir);
  finding.stage = "checkpoint";
}

}  // namespace

std::vector<report::Finding> output_findings(const plan::RunPlan& plan, const fs::path& upper,
                                             const harness::HarnessEvents& events) {
  std::vector<report::Finding> findings;
  auto written = written_outside(upper, plan);
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
    if (m.kind != diagnosis::MountFact::Kind::Output || m.name.empty() || !fs::is_empty(m.source, ec))
      continue;
    findings.push_back(
        lost("output-left-empty",
             fmt::format("the job trained but left output \"{}\" ({}) empty: nothing of this run "
                         "would be kept",
                         m.name, m.destination),
             fmt::format("save the model or checkpoints under ${{{{outputs.{}}}}}", m.name)));
    at_save(findings.back(), saved_elsewhere, plan);
  }
  return findings;
}

}  // namespace preflight::pipeline
