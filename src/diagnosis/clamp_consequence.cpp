#include "diagnosis/clamp_consequence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace preflight::diagnosis {

namespace {

namespace fs = std::filesystem;

bool digit(char c) { return c >= '0' && c <= '9'; }

std::optional<long long> whole(const std::optional<std::string>& json_text) {
  if (!json_text || json_text->empty() || json_text->size() > 9) return std::nullopt;
  if (!std::all_of(json_text->begin(), json_text->end(), digit)) return std::nullopt;
  return std::stoll(*json_text);
}

// "argparse --nEpochs" → "nEpochs": the key job.yaml's dryrun.args matches it by.
std::string option_name(const std::string& what) {
  std::string name = what.substr(what.find_last_of(' ') + 1);
  return name.substr(std::min(name.find_first_not_of('-'), name.size()));
}

// The exception behind a missing-path failure: the last one whose path its message quotes.
const harness::ExceptionEvent* failed_exception(const model::Finding& failure,
                                                const harness::HarnessEvents& events) {
  for (auto it = events.exceptions.rbegin(); it != events.exceptions.rend(); ++it) {
    if (!it->path.empty() && failure.message.find(it->path) != std::string::npos) return &*it;
  }
  return nullptr;
}

// Whether what process `a_pid` did at its time `a_t` came before `b_t` in `b_pid`: by their
// wall-clock times where both processes' starts are known, else by the order they started.
bool before(const harness::HarnessEvents& events, int a_pid, double a_t, int b_pid, double b_t) {
  if (a_pid == b_pid) return a_t <= b_t;
  const auto a = events.wall_time(a_pid, a_t);
  const auto b = events.wall_time(b_pid, b_t);
  if (a && b) return *a <= *b;
  auto index = [&](int pid) {
    const auto& all = events.processes;
    return std::find_if(all.begin(), all.end(), [&](const harness::ProcessRun& p) { return p.pid == pid; }) -
           all.begin();
  };
  const auto ia = index(a_pid);
  return ia < index(b_pid) && ia < static_cast<std::ptrdiff_t>(events.processes.size());
}

// A path the job wrote.
struct Written {
  std::string path;  // absolute, in the container
  std::optional<harness::Frame> where;
};

// The number `written` has where `path` has `count` at [at, at + length): the same path at
// another count. A relative `path` is matched against the end of `written`, from a folder's
// start. nullopt when they differ elsewhere, or the number there is `count` itself.
std::optional<long long> other_count(const std::string& path, std::size_t at, std::size_t length,
                                     const std::string& written) {
  const std::string prefix = path.substr(0, at);
  const std::string suffix = path.substr(at + length);
  if (written.size() < prefix.size() + suffix.size() + 1 || !written.ends_with(suffix)) return std::nullopt;
  std::size_t end = written.size() - suffix.size();
  std::size_t start = end;
  while (start > 0 && digit(written[start - 1])) --start;
  if (start == end || end - start > 12 || start < prefix.size()) return std::nullopt;
  if (written.compare(start - prefix.size(), prefix.size(), prefix) != 0) return std::nullopt;
  const std::size_t head = start - prefix.size();
  const bool whole_path = path.starts_with('/') ? head == 0 : head == 0 || written[head - 1] == '/';
  if (!whole_path) return std::nullopt;
  const long long number = std::stoll(written.substr(start, end - start));
  const std::string original = path.substr(at, length);
  if (number == std::stoll(original)) return std::nullopt;
  return number;
}

struct Chain {
  const Written* written = nullptr;
  long long count = 0;  // the full run's number in the failing path
  long long other = 0;  // the number in its place in the path the job wrote
};

// The last path the job wrote (the nearest to the full run's) that is `path` with one
// whole-number occurrence of a count in `counts` replaced by another number.
std::optional<Chain> written_at_other_count(const std::string& path, const std::vector<long long>& counts,
                                            const std::vector<Written>& written) {
  std::optional<Chain> found;
  for (std::size_t at = 0; at < path.size(); ++at) {
    if (!digit(path[at]) || (at > 0 && digit(path[at - 1]))) continue;
    std::size_t length = 0;
    while (at + length < path.size() && digit(path[at + length])) ++length;
    if (length > 12) continue;
    const long long number = std::stoll(path.substr(at, length));
    if (std::find(counts.begin(), counts.end(), number) == counts.end()) continue;
    for (const Written& w : written) {
      if (auto other = other_count(path, at, length, w.path)) found = Chain{&w, number, *other};
    }
  }
  return found;
}

// What the job wrote before `failed`: the files now in the failing path's folder where that
// folder is one the job writes (an output, a writable or scratch folder: it started empty or
// as the user's, and what is there now the job left), then its torch.save files in the order
// it wrote them.
std::vector<Written> written_before(const harness::ExceptionEvent& failed,
                                    const harness::HarnessEvents& events, const model::PlatformFacts& facts) {
  std::vector<Written> out;
  if (facts.host_folder_names && failed.path.starts_with('/')) {
    const fs::path folder = fs::path(failed.path).lexically_normal().parent_path();
    for (const model::MountFact& mount : facts.mounts) {
      using Kind = model::MountFact::Kind;
      if (mount.host_path.empty() || mount.read_only ||
          (mount.kind != Kind::Output && mount.kind != Kind::Writable && mount.kind != Kind::Scratch))
        continue;
      const fs::path relative = folder.lexically_relative(mount.container_path);
      if (relative.empty() || *relative.begin() == "..") continue;
      for (const std::string& name : facts.host_folder_names(mount.host_path, relative.string()))
        out.push_back({(folder / name).string(), std::nullopt});
    }
  }
  for (const harness::SaveEvent& save : events.saves) {
    if (before(events, save.pid, save.t, failed.pid, failed.t)) out.push_back({save.path, save.where});
  }
  return out;
}

std::string place(const std::optional<harness::Frame>& where, const std::string& code_dir) {
  const SourceLocation at = harness::location_in_code(where, code_dir);
  return at.known() ? at.str() : "";
}

}  // namespace

void soften_clamp_consequence(model::Finding& failure, const harness::HarnessEvents& events,
                              const model::PlatformFacts& facts) {
  if (failure.category != "Path Not Found" || failure.severity != model::Severity::Error) return;
  const harness::ExceptionEvent* failed = failed_exception(failure, events);
  if (failed == nullptr) return;
  const std::vector<Written> written = written_before(*failed, events, facts);
  const std::string& code_dir = facts.code_container_dir;
  for (const harness::ClampEvent& clamp : events.clamps) {
    if (clamp.kind != "epochs" && clamp.kind != "steps") continue;
    const auto original = whole(clamp.original);
    if (!original || clamp.value == *clamp.original) continue;
    if (!before(events, clamp.pid, clamp.t, failed->pid, failed->t)) continue;
    std::vector<long long> counts{*original};
    if (clamp.last) counts.push_back(*clamp.last);
    const auto chain = written_at_other_count(failed->path, counts, written);
    if (!chain) continue;
    const std::string clamp_at = place(clamp.where, code_dir);
    const std::string what =
        clamp.cut ? fmt::format("the {}{} was ended after {} of its {} iterations", clamp.what,
                                clamp_at.empty() ? "" : " at " + clamp_at, clamp.value, *original)
                  : fmt::format("the run was clamped to {} {} instead of {} ({}{})", clamp.value, clamp.kind,
                                *original, clamp.what, clamp_at.empty() ? "" : " at " + clamp_at);
    const std::string written_at = place(chain->written->where, code_dir);
    failure.severity = model::Severity::Warning;
    failure.message = fmt::format(
        "{} — a consequence of the dry run, not of the job: {}, and the job wrote {}{}, the same path with "
        "{} "
        "in place of {}, so what the full run writes under that count was never written",
        failure.message, what, chain->written->path, written_at.empty() ? "" : " at " + written_at,
        chain->other, chain->count);
    failure.hint = clamp.cut
                       ? "On the platform the full run writes it first: nothing to change in the job."
                       : fmt::format(
                             "On the platform the full run writes it first. To run this step too, keep the "
                             "count in the dry run (each epoch still samples a few batches): "
                             "dryrun: {{args: {{{}: {}}}}} in job.yaml.",
                             option_name(clamp.what), *original);
    return;
  }
}

}  // namespace preflight::diagnosis
