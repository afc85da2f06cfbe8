// Shared by the diagnosis tests: the shipped rules, a Philly-like platform, and dry-run
// outcomes built by hand the way the sandbox and the harness would report them.
#pragma once

#include <gtest/gtest.h>

#include "diagnosis/diagnosis.hpp"
#include "test_support.hpp"

namespace preflight::diagnosis::fixtures {

inline const FailureRules& shipped_rules() { return testing::shipped_policies().failures; }

// philly: code and input read-only, one output, running as uid 1000; this machine's side is
// a laptop under /home/alice.
inline model::PlatformFacts philly() {
  model::PlatformFacts facts;
  facts.platform = "philly";
  facts.image = "pytorch";
  facts.user = "job (uid 1000)";
  facts.uid = 1000;
  facts.home = "/home/job";
  facts.code_container_dir = "/job/code";
  facts.code_host_dir = "/home/alice/mnist";
  facts.mounts = {
      {model::MountFact::Kind::Code, "", "/job/code", "/home/alice/mnist", true},
      {model::MountFact::Kind::Input, "mnist", "/job/inputs/mnist", "/home/alice/mnist/data", true},
      {model::MountFact::Kind::Output, "model", "/job/outputs/model", "/tmp/run/outputs/model", false},
      {model::MountFact::Kind::Writable, "", "/tmp", "", false},
  };
  return facts;
}

inline harness::Frame user_frame(const std::string& file = "/job/code/main.py", int line = 42) {
  return harness::Frame{file, line, "main", true};
}

inline harness::Frame library_frame(
    const std::string& file = "/usr/lib/python3/dist-packages/torch/nn/functional.py") {
  return harness::Frame{file, 100, "f", false};
}

// A command that died on an uncaught exception in the main process, in stage `stage`.
inline model::RunOutcome crashed(const std::string& type, const std::string& message,
                                 const std::string& stage = "train",
                                 std::vector<harness::Frame> frames = {user_frame()}) {
  model::RunOutcome outcome;
  outcome.exit_code = 1;
  outcome.events.started = true;
  outcome.events.stages = {{"init", 0.1, 10, "", std::nullopt}, {stage, 0.5, 10, "", std::nullopt}};
  harness::ExceptionEvent event;
  event.type = type;
  event.message = message;
  event.stage = stage;
  event.t = 0.6;
  event.pid = 10;
  event.frames = std::move(frames);
  outcome.events.exceptions.push_back(event);
  return outcome;
}

inline model::OutputLine line(const std::string& text, bool setup = false,
                              model::OutputLine::Stream stream = model::OutputLine::Stream::Stderr) {
  return model::OutputLine{stream, setup, text};
}

// A setup step that failed with `exit` after printing `lines` on stderr.
inline model::RunOutcome setup_failed(int exit, const std::vector<std::string>& lines) {
  model::RunOutcome outcome;
  outcome.exit_code = exit;
  outcome.setup_exit = exit;
  for (const std::string& text : lines) outcome.output.push_back(line(text, true));
  return outcome;
}

// The one finding of a failed run (a failed assertion if there is not exactly one).
inline model::Finding only_finding(const model::RunOutcome& outcome,
                                   const model::PlatformFacts& facts = philly()) {
  std::vector<model::Finding> findings = diagnose(testing::shipped_policies(), outcome, facts);
  EXPECT_EQ(findings.size(), 1u);
  return findings.empty() ? model::Finding{} : findings.front();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace preflight::diagnosis::fixtures
