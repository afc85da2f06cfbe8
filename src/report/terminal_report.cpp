#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "report/report.hpp"

namespace preflight::report {
namespace {

struct Palette {
  bool on;
  std::string paint(const std::string& text, const char* code) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  }
  std::string red(const std::string& t) const { return paint(t, "31"); }
  std::string green(const std::string& t) const { return paint(t, "32"); }
  std::string yellow(const std::string& t) const { return paint(t, "33"); }
  std::string dim(const std::string& t) const { return paint(t, "2"); }
  std::string bold(const std::string& t) const { return paint(t, "1"); }
};

std::string stage_mark(const StageResult& stage, const Palette& p) {
  if (stage.status == "passed") return p.green(stage.name + " ok");
  if (stage.status == "failed") return p.red(stage.name + " FAILED");
  if (stage.status == "not_reached") return p.dim(stage.name + " not reached");
  return p.dim(stage.name + " -");
}

std::string severity_label(Severity severity, const Palette& p) {
  switch (severity) {
    case Severity::Error:
      return p.red("error");
    case Severity::Warning:
      return p.yellow("warning");
    case Severity::Info:
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
  out << p.bold("stages") << ": " << (stages.empty() ? "none reached" : stages) << "\n";
  for (const auto& f : report.findings) {
    std::string where = f.location.str();
    out << severity_label(f.severity, p) << ": " << p.bold(f.category);
    if (!f.stage.empty()) out << " in stage " << f.stage;
    if (!where.empty()) out << " at " << where;
    out << "\n  " << f.message << "\n";
    if (!f.hint.empty()) out << "  " << p.dim("hint:") << " " << f.hint << "\n";
    if (f.severity == Severity::Error && f.retry == Retry::Useless)
      out << "  " << p.dim("retry: useless, the failure is deterministic") << "\n";
  }
  for (const auto& note : report.notes) out << p.dim("note:") << " " << note << "\n";
  if (!report.clamps.empty()) out << p.dim("clamped:") << " " << clamp_list(report.clamps) << "\n";
  int errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    errors += f.severity == Severity::Error;
    warnings += f.severity == Severity::Warning;
  }
  std::string verdict = report.verdict == "pass"   ? p.green("PASS")
                        : report.verdict == "fail" ? p.red("FAIL")
                                                   : p.red("ERROR");
  out << fmt::format("verdict: {} — {} on {} ({} error{}, {} warning{}, {:.1f} s)\n", verdict,
                     report.job_name, report.platform, errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s", report.duration_s);
}

}  // namespace preflight::report
