#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "report/palette.hpp"
#include "report/report.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

std::string stage_mark(const StageResult& stage, const Palette& p) {
  if (stage.status == "passed") return p.green(stage.name + " ok");
  if (stage.status == "failed") return p.red(stage.name + " FAILED");
  if (stage.status == "not_reached") return p.dim(stage.name + " not reached");
  return p.dim(stage.name + " -");
}

std::string severity_label(model::Severity severity, const Palette& p) {
  switch (severity) {
    case model::Severity::Error:
      return p.red("error");
    case model::Severity::Warning:
      return p.yellow("warning");
    case model::Severity::Info:
      return p.dim("info");
  }
  return "";
}

// "--epochs 14 → 2, lightning Trainer limit_val_batches → 2": argparse options by their own
// name, values the job never set without an original.
std::string clamp_list(const std::vector<Clamp>& clamps) {
  std::string out;
  for (const auto& c : clamps) {
    std::string label = c.what.rfind("argparse ", 0) == 0 ? c.what.substr(9) : c.what;
    if (!c.original.is_null()) label += " " + c.original.dump();
    out += (out.empty() ? "" : ", ") + label + " → " + c.value.dump();
  }
  return out;
}

void print_estimate(const Estimate& e, std::ostream& out, const Palette& p) {
  std::string step = "a training step";
  if (e.shape_only) {
    if (e.batch_size) step += fmt::format(" at batch size {}", *e.batch_size);
    step += " ran on shape-only tensors here";
  } else if (e.sampled_batch) {
    step += fmt::format(" at batch size {} (sampled from {}) took {} here", *e.sampled_batch,
                        e.batch_size.value_or(0), human_duration(e.step_seconds_here));
  } else {
    if (e.batch_size) step += fmt::format(" at batch size {}", *e.batch_size);
    step += " took " + human_duration(e.step_seconds_here) + " here";
  }
  if (e.data_seconds)
    step += " (its DataLoader delivers a batch every " + human_duration(*e.data_seconds) + ")";
  if (e.projection) {
    const StepProjection& p = *e.projection;
    step += fmt::format(", {}–{} on a {} ({}-bound)", human_duration(p.step_low), human_duration(p.step_high),
                        e.gpu_name, p.bound);
  } else if (e.step_seconds != e.step_seconds_here && !e.gpu_name.empty()) {
    step += ", about " + human_duration(e.step_seconds) + " on a " + e.gpu_name;
  }
  if (e.gpu_needed_bytes)
    step += fmt::format("; it needs about {} of the GPU's {}", human_size(*e.gpu_needed_bytes),
                        human_size(e.gpu_available_bytes));
  out << p.dim("measured:") << " " << step << "\n";
  const std::string on = e.gpus > 0 ? fmt::format(" on {} GPU{}", e.gpus, e.gpus == 1 ? "" : "s") : "";
  if (e.total_steps && e.run_hours) {
    std::string run = fmt::format("the whole run is {} training steps", *e.total_steps);
    if (e.epochs && e.steps_per_epoch)
      run += fmt::format(" ({:g} epochs of {})", *e.epochs, *e.steps_per_epoch);
    out << p.dim("estimate:") << " " << run << ", about " << human_duration(*e.run_hours * 3600) << on;
    if (e.projection && e.projection->cost_usd)
      out << fmt::format(" (about ${:.0f} at {})", *e.projection->cost_usd, e.projection->price_source);
    if (e.time_limit_hours) out << "; the time limit is " << human_duration(*e.time_limit_hours * 3600);
    out << "\n";
  }
  if (e.steps_per_hour)
    out << p.dim("estimate:") << " "
        << fmt::format(
               "the job has no end of its own: about {:.0f} training steps an hour{}, until the "
               "platform's time limit\n",
               *e.steps_per_hour, on);
  if (e.failure_stage && e.failure_after_hours && e.gpu_hours_saved) {
    out << p.dim("saved:") << " "
        << fmt::format("on the platform this failure strikes at {} after about {} steps, {} into the run",
                       *e.failure_stage, *e.failure_after_steps,
                       human_duration(*e.failure_after_hours * 3600));
    if (e.gpus > 0) {
      const double hours = *e.gpu_hours_saved;
      out << ": this dry run saved "
          << (hours >= 1        ? fmt::format("about {:.1f} GPU-hours", hours)
              : hours * 60 >= 1 ? fmt::format("about {:.0f} GPU-minutes", hours * 60)
                                : std::string("under a GPU-minute"));
    }
    out << "\n";
  }
}

bool same_place(const SourceLocation& a, const SourceLocation& b) {
  return a.file == b.file && a.line == b.line;
}

}  // namespace

bool use_color(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !(term && std::string(term) == "dumb");
}

void print_summary(const Report& report, std::ostream& out, bool color) {
  Palette p{color};
  std::string stages;
  for (const auto& stage : report.stages) {
    if (stage.status == "absent") continue;
    stages += (stages.empty() ? "" : ", ") + stage_mark(stage, p);
  }
  if (report.dry_run) out << p.bold("stages") << ": " << (stages.empty() ? "none reached" : stages) << "\n";
  for (const auto& f : report.findings) {
    out << severity_label(f.severity, p) << ": " << p.bold(f.category) << model::where_text(f) << "\n  "
        << plain_text(f.message) << "\n";
    for (const auto& evidence : f.predicted)
      out << "  " << p.dim("predicted by the static checks:") << " " << plain_text(evidence.message)
          << (same_place(evidence.location, f.location) ? "" : " (" + evidence.location.str() + ")") << "\n";
    if (!f.hint.empty() && f.prediction != model::Prediction::Refuted)
      out << "  " << p.dim("hint:") << " " << plain_text(f.hint) << "\n";
    if (f.severity == model::Severity::Error && f.retry == model::Retry::Useless)
      out << "  " << p.dim("retry: useless, the failure is deterministic") << "\n";
  }
  for (const auto& note : report.notes) out << p.dim("note:") << " " << plain_text(note) << "\n";
  if (!report.clamps.empty()) out << p.dim("clamped:") << " " << clamp_list(report.clamps) << "\n";
  if (report.estimate) print_estimate(*report.estimate, out, p);
  int errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    errors += f.severity == model::Severity::Error;
    warnings += f.severity == model::Severity::Warning;
  }
  std::string verdict = report.verdict == "pass"   ? p.green("PASS")
                        : report.verdict == "fail" ? p.red("FAIL")
                                                   : p.red("ERROR");
  out << fmt::format("verdict: {} — {} on {} ({} error{}, {} warning{}, {:.1f} s)\n", verdict,
                     report.job_name, report.platform, errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s", report.duration_s);
}

}  // namespace preflight::report
