#include "diagnosis/clamp_consequence.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <set>

namespace preflight::diagnosis {

namespace {

// The whole numbers inside the quoted strings of a message ('model_epoch_30.pth' gives 30).
std::set<long long> numbers_in_quotes(const std::string& message) {
  static const re2::RE2 quoted(R"re(['"]([^'"\n]{1,400})['"])re");
  static const re2::RE2 number(R"((?:^|\D)(\d{1,9})(?:\D|$))");
  std::set<long long> out;
  re2::StringPiece rest(message);
  std::string inside;
  while (re2::RE2::FindAndConsume(&rest, quoted, &inside)) {
    re2::StringPiece digits(inside);
    std::string value;
    while (re2::RE2::FindAndConsume(&digits, number, &value)) out.insert(std::stoll(value));
  }
  return out;
}

std::optional<long long> whole(const std::optional<std::string>& json_text) {
  if (!json_text || json_text->empty() || json_text->size() > 9) return std::nullopt;
  for (char c : *json_text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoll(*json_text);
}

// "argparse --nEpochs" → "nEpochs": the key job.yaml's dryrun.args matches it by.
std::string option_name(const std::string& what) {
  std::string name = what.substr(what.find_last_of(' ') + 1);
  return name.substr(std::min(name.find_first_not_of('-'), name.size()));
}

}  // namespace

void soften_clamp_consequence(model::Finding& failure, const harness::HarnessEvents& events,
                              const std::string& code_dir) {
  if (failure.category != "Path Not Found" || failure.severity != model::Severity::Error) return;
  const auto numbers = numbers_in_quotes(failure.message);
  for (const harness::ClampEvent& clamp : events.clamps) {
    if (clamp.kind != "epochs" && clamp.kind != "steps") continue;
    const auto original = whole(clamp.original);
    if (!original || !numbers.count(*original) || clamp.value == *clamp.original) continue;
    const SourceLocation at = harness::location_in_code(clamp.where, code_dir);
    failure.severity = model::Severity::Warning;
    failure.message = fmt::format(
        "{} — a consequence of the dry run, not of the job: the run was clamped to {} {} instead of {} "
        "({}{}), "
        "so what the full run writes under that count was never written",
        failure.message, clamp.value, clamp.kind, *original, clamp.what, at.known() ? " at " + at.str() : "");
    failure.hint = fmt::format(
        "On the platform the full run writes it first. To run this step too, keep the count in the dry run "
        "(each epoch still samples a few batches): dryrun: {{args: {{{}: {}}}}} in job.yaml.",
        option_name(clamp.what), *original);
    return;
  }
}

}  // namespace preflight::diagnosis
