#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/html_assets.hpp"
#include "report/html_text.hpp"
#include "report/trace_timeline.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

using model::Finding;

// The lines shown around a finding's line.
constexpr int kContextLines = 3;

// The page asks for nothing from anywhere: inline style and script only, images only as data.
constexpr const char* kContentPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

// The span categories the timeline colours, for its key; "merged" is the grey of merged runs.
const char* const kSpanCategories[] = {"stage", "data",       "forward", "backward", "optimizer", "step",
                                       "layer", "checkpoint", "failure", "other",    "merged"};

// What the colours of the stage blocks mean.
constexpr const char* kStageKey =
    "<ul class=\"key\">"
    "<li><i style=\"background:var(--pass)\"></i>passed</li>"
    "<li><i style=\"background:var(--fail)\"></i>failed</li>"
    "<li><i style=\"background:var(--line)\"></i>not reached</li>"
    "<li><i style=\"border:1px dashed var(--line)\"></i>absent: the job has no such stage</li>"
    "</ul>\n";

// "sha256:0123456789ab": enough of a digest to tell images apart.
std::string short_digest(const std::string& digest) {
  const auto colon = digest.find(':');
  const std::size_t keep = (colon == std::string::npos ? 0 : colon + 1) + 12;
  return digest.size() > keep ? digest.substr(0, keep) : digest;
}

std::string fact(const char* name, const std::string& html) {
  return fmt::format("<div><dt>{}</dt><dd>{}</dd></div>", name, html);
}

std::string page_header(const Report& report) {
  std::size_t errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    errors += f.severity == model::Severity::Error;
    warnings += f.severity == model::Severity::Warning;
  }
  std::string image = html_escape(report.image_ref);
  if (!report.image_digest.empty())
    image += fmt::format(" <span class=\"mono\" title=\"{0}\">@{1}</span>", html_escape(report.image_digest),
                         html_escape(short_digest(report.image_digest)));
  std::string facts = fact("platform", html_escape(report.platform)) + fact("image", image) +
                      fact("job file", "<span class=\"mono\">" + html_escape(report.job_file) + "</span>") +
                      fact("duration", html_escape(human_duration(report.duration_s))) +
                      fact("findings", fmt::format("{} error{}, {} warning{}", errors, errors == 1 ? "" : "s",
                                                   warnings, warnings == 1 ? "" : "s")) +
                      fact("run", report.dry_run ? "dry run" : "static checks only") +
                      fact("Preflight", html_escape(PREFLIGHT_VERSION));
  return fmt::format(
      "<header class=\"page-head\">\n<div class=\"title\"><h1>{} <span class=\"on\">on {}</span></h1>"
      "<span id=\"verdict\">{}</span></div>\n<dl class=\"facts\">{}</dl>\n<nav class=\"toc\"><a "
      "href=\"#stages\">Stages</a><a href=\"#findings\">Findings</a><a href=\"#estimate\">Estimate</a><a "
      "href=\"#trace\">Trace</a><a href=\"#clamps\">Clamps</a><a "
      "href=\"#notes\">Notes</a></nav>\n</header>\n",
      html_escape(report.job_name), html_escape(report.platform), html_escape(report.verdict), facts);
}

// A block per stage, as wide as its share of the run; a minimum width keeps short ones visible.
std::string stage_timeline(const Report& report) {
  std::string out = "<section id=\"stages\">\n<h2>Stages</h2>\n";
  if (report.stages.empty())
    return out +
           "<p class=\"empty\">No stage ran: these are the static checks' findings alone.</p>\n</section>\n";
  const double total =
      std::accumulate(report.stages.begin(), report.stages.end(), 0.0,
                      [](double sum, const StageResult& s) { return sum + std::max(s.seconds, 0.0); });
  out += "<div class=\"stages\">\n";
  for (const auto& stage : report.stages) {
    const double grow = total > 0 ? std::max(stage.seconds, 0.0) / total * 100 : 1;
    const bool ran = stage.status == "passed" || stage.status == "failed";
    const std::string name = html_escape(stage.name), status = html_escape(stage.status);
    const std::string seconds = html_escape(human_duration(stage.seconds));
    out += fmt::format(
        "<div class=\"stage\" data-stage=\"{0}\" data-status=\"{1}\" style=\"flex-grow:{2:.3f}\" "
        "title=\"{0}: {1}, {3}\"><span class=\"name\">{0}</span><span class=\"secs\">{4}</span></div>\n",
        name, status, grow, seconds,
        ran                        ? seconds
        : stage.status == "absent" ? "absent"
                                   : "not reached");
  }
  out += "</div>\n";
  out += kStageKey;
  out += "</section>\n";
  return out;
}

// "train.py:18", or the file alone without a line.
std::string file_and_line(const SourceLocation& location) {
  if (!location.known()) return "";
  return location.line > 0 ? fmt::format("{}:{}", location.file.string(), location.line)
                           : location.file.string();
}

// The lines around the location's line, the line itself marked; empty when they cannot be read.
std::string code_excerpt(const SourceLocation& location, const SourceLines& lines) {
  if (!location.known() || location.line <= 0 || !lines) return "";
  const int first = std::max(1, location.line - kContextLines);
  const std::vector<std::string> text = lines(location.file, first, location.line + kContextLines);
  if (static_cast<int>(text.size()) <= location.line - first) return "";  // the file is shorter now
  std::string out = "<pre class=\"code\"><code>";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int number = first + static_cast<int>(i);
    const std::string line = fmt::format("<span class=\"ln\">{}</span>{}", number, html_escape(text[i]));
    out += number == location.line ? "<span class=\"hit\">" + line + "</span>\n" : line + "\n";
  }
  return out + "</code></pre>\n";
}

std::string evidence_list(const Finding& f, const SourceLines& lines) {
  if (f.predicted.empty()) return "";
  std::string out = "<div class=\"predicted\">Predicted by the static checks:<ul>\n";
  for (const auto& evidence : f.predicted) {
    out += fmt::format("<li><span class=\"mono\">{}</span>: {}", html_escape(evidence.rule),
                       html_escape(evidence.message));
    if (evidence.location.known())
      out += " <span class=\"where\">(" + html_escape(file_and_line(evidence.location)) + ")</span>";
    const auto text = evidence.location.line > 0 && lines
                          ? lines(evidence.location.file, evidence.location.line, evidence.location.line)
                          : std::vector<std::string>{};
    if (!text.empty())
      out += fmt::format("<pre class=\"evidence-code\"><code><span class=\"ln\">{}</span>{}</code></pre>",
                         evidence.location.line, html_escape(text.front()));
    out += "</li>\n";
  }
  return out + "</ul></div>\n";
}

std::string finding_section(const Finding& f, std::size_t index, const SourceLines& lines) {
  const char* severity = to_string(f.severity);
  std::string out = fmt::format(
      "<section class=\"finding\" data-severity=\"{0}\" data-category=\"{1}\" data-stage=\"{2}\" "
      "data-location=\"{3}\" id=\"finding-{4}\">\n"
      "<div><span class=\"badge sev\">{0}</span><h3>{1}</h3><span class=\"where\">{5}</span>",
      severity, html_escape(f.category), html_escape(f.stage), html_escape(file_and_line(f.location)),
      index + 1, html_escape(model::where_text(f)));
  if (const char* prediction = to_string(f.prediction))
    out += fmt::format(" <span class=\"badge prediction\">prediction {}</span>", html_escape(prediction));
  out += "</div>\n<p class=\"message\">" + html_escape(f.message) + "</p>\n";
  out += code_excerpt(f.location, lines);
  // A refuted prediction's advice no longer applies (as in the terminal summary).
  if (!f.hint.empty() && f.prediction != model::Prediction::Refuted)
    out += "<p class=\"hint\"><b>hint:</b> " + html_escape(f.hint) + "</p>\n";
  out += evidence_list(f, lines);
  std::string meta = "<b>rule</b> <span class=\"mono\">" + html_escape(f.rule) + "</span>";
  if (!f.dimension.empty()) meta += " · " + html_escape(f.dimension);
  if (!f.root_cause.empty()) meta += " · <b>root cause</b> " + html_escape(f.root_cause);
  meta += std::string(" · <b>found</b> ") +
          (f.phase == model::Phase::Static ? "by the static checks" : "in the dry run");
  if (f.severity == model::Severity::Error)
    meta += f.retry == model::Retry::Useless ? " · <b>retry</b> useless, the failure is deterministic"
                                             : " · <b>retry</b> may help";
  return out + "<p class=\"meta\">" + meta + "</p>\n</section>\n";
}

std::string findings_section(const Report& report, const SourceLines& lines) {
  std::string out =
      fmt::format("<section id=\"findings\">\n<h2>Findings ({})</h2>\n", report.findings.size());
  if (report.findings.empty()) out += "<p class=\"empty\">Nothing would fail.</p>\n";
  for (std::size_t i = 0; i < report.findings.size(); ++i)
    out += finding_section(report.findings[i], i, lines);
  return out + "</section>\n";
}

std::string gpu_time(double hours) {
  if (hours >= 1) return fmt::format("about {:.1f} GPU-hours", hours);
  if (hours * 60 >= 1) return fmt::format("about {:.0f} GPU-minutes", hours * 60);
  return "under a GPU-minute";
}

// "1.2 GiB needed of 16.0 GiB (8%)" and a bar, red when it does not fit.
std::string gpu_memory(std::uint64_t needed, std::uint64_t available) {
  if (available == 0) return human_size(needed) + " needed";
  const double share = static_cast<double>(needed) / static_cast<double>(available);
  const bool over = share > 1;
  return fmt::format(
      "{} needed of {} ({:.0f}%){}<span class=\"bar{}\"><i style=\"width:{:.1f}%\"></i></span>",
      human_size(needed), human_size(available), share * 100,
      over ? " <span class=\"over-text\">does not fit</span>" : "", over ? " over" : "",
      std::min(share, 1.0) * 100);
}

// "strikes at checkpoint after 938 steps, 1.88 s into the run".
std::string failure_on_platform(const Estimate& e) {
  std::string text = "strikes at " + html_escape(e.failure_stage.value_or(""));
  if (e.failure_after_steps) text += " after " + grouped(*e.failure_after_steps) + " steps";
  if (e.failure_after_hours)
    text += ", " + html_escape(human_duration(*e.failure_after_hours * 3600)) + " into the run";
  return text;
}

std::string estimate_section(const Report& report) {
  std::string out = "<section id=\"estimate\">\n<h2>Estimate</h2>\n";
  if (!report.estimate) return out + "<p class=\"empty\">No training step was measured.</p>\n</section>\n";
  const Estimate& e = *report.estimate;
  std::vector<std::pair<std::string, std::string>> rows;  // name, HTML
  if (e.shape_only)
    rows.emplace_back("step time here", "none: the model ran on shape-only tensors");
  else if (e.step_seconds_here > 0)
    rows.emplace_back("step time here", html_escape(human_duration(e.step_seconds_here)));
  if (e.data_seconds)
    rows.emplace_back("data pipeline", "a batch every " + html_escape(human_duration(*e.data_seconds)));
  if (e.step_seconds > 0) {
    std::string platform = html_escape(human_duration(e.step_seconds));
    if (!e.gpu_name.empty() && e.gpus > 0) platform += " on a " + html_escape(e.gpu_name);
    if (!e.step_basis.empty()) platform += "<div class=\"basis\">" + html_escape(e.step_basis) + "</div>";
    rows.emplace_back("step time on the platform", platform);
  }
  if (e.batch_size) rows.emplace_back("batch size", grouped(*e.batch_size));
  if (e.steps_per_epoch) rows.emplace_back("steps per epoch", grouped(*e.steps_per_epoch));
  if (e.epochs) rows.emplace_back("epochs", fmt::format("{:g}", *e.epochs));
  if (e.total_steps) rows.emplace_back("total steps", grouped(*e.total_steps));
  if (e.steps_per_hour)
    rows.emplace_back("steps an hour", grouped(std::llround(*e.steps_per_hour)) +
                                           " (no end of its own: it trains until the platform's time limit)");
  if (e.run_hours) {
    rows.emplace_back("run time", "about " + html_escape(human_duration(*e.run_hours * 3600)));
    if (e.gpus > 0) rows.emplace_back("cost", gpu_time(*e.run_hours * e.gpus));
  }
  if (e.time_limit_hours)
    rows.emplace_back("time limit", html_escape(human_duration(*e.time_limit_hours * 3600)));
  if (e.gpus > 0)
    rows.emplace_back("GPUs",
                      fmt::format("{}{}", e.gpus, e.gpu_name.empty() ? "" : " × " + html_escape(e.gpu_name)));
  if (e.gpu_needed_bytes)
    rows.emplace_back("GPU memory", gpu_memory(*e.gpu_needed_bytes, e.gpu_available_bytes));
  if (e.failure_stage) rows.emplace_back("failure on the platform", failure_on_platform(e));
  if (e.gpu_hours_saved) rows.emplace_back("GPU time saved", gpu_time(*e.gpu_hours_saved));
  out += "<table>\n";
  for (const auto& [name, html] : rows) out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, html);
  return out + "</table>\n</section>\n";
}

std::string shown_json(const nlohmann::json& value) {
  return html_escape(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string clamps_section(const Report& report) {
  std::string out = "<section id=\"clamps\">\n<h2>Clamped for the dry run</h2>\n";
  if (report.clamps.empty()) return out + "<p class=\"empty\">Nothing was clamped.</p>\n</section>\n";
  out += "<table>\n<tr><th>what</th><th>the job's value → the dry run's</th><th>where</th></tr>\n";
  for (const auto& c : report.clamps)
    out += fmt::format("<tr><td>{}</td><td class=\"mono\">{} → {}</td><td class=\"mono\">{}</td></tr>\n",
                       html_escape(c.what),
                       c.original.is_null() ? "<span class=\"muted\">not set</span>" : shown_json(c.original),
                       shown_json(c.value), html_escape(file_and_line(c.location)));
  return out + "</table>\n</section>\n";
}

std::string notes_section(const Report& report) {
  std::string out = "<section id=\"notes\">\n<h2>Notes</h2>\n";
  if (report.notes.empty()) return out + "<p class=\"empty\">No notes.</p>\n</section>\n";
  out += "<ul>\n";
  for (const auto& note : report.notes) out += "<li>" + html_escape(note) + "</li>\n";
  return out + "</ul>\n</section>\n";
}

std::string trace_section(const nlohmann::json& trace) {
  std::string out = "<section id=\"trace\">\n<h2>Trace</h2>\n" + trace_timeline_html(trace);
  if (trace.is_null()) return out + "</section>\n";
  out += "<ul class=\"key\">";
  for (const char* cat : kSpanCategories)
    out += fmt::format("<li><i style=\"background:var(--c-{0})\"></i>{1}</li>", cat,
                       std::string_view(cat) == "merged" ? "merged small spans" : cat);
  return out + "</ul>\n</section>\n";
}

}  // namespace

std::string to_html(const Report& report, const nlohmann::json& trace, const SourceLines& lines) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n"
      "<title>Preflight: {} on {} — {}</title>\n<style>{}</style>\n</head>\n<body data-verdict=\"{}\">\n",
      kContentPolicy, html_escape(report.job_name), html_escape(report.platform), html_escape(report.verdict),
      html_assets::kStyle, html_escape(report.verdict));
  out += page_header(report);
  out += "<main>\n" + stage_timeline(report) + findings_section(report, lines) + estimate_section(report) +
         trace_section(trace) + clamps_section(report) + notes_section(report) + "</main>\n";
  out += fmt::format(
      "<footer>Written by Preflight {}. This page is self-contained: it loads nothing from the "
      "network.</footer>\n",
      html_escape(PREFLIGHT_VERSION));
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", html_assets::kScript);
  return out;
}

}  // namespace preflight::report
