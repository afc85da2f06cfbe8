// Which evidence wins: how the run was stopped, then the job's exception (main process
// first), then output lines, then the exit status; setup failures; the harness-less fallback.
#include <gtest/gtest.h>

#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

TEST(DiagnosisPrecedence, APassingRunHasNoFinding) {
  model::RunOutcome outcome;
  outcome.output = {line("epoch 1 loss 0.3", false, model::OutputLine::Stream::Stdout)};
  EXPECT_TRUE(diagnose(testing::shipped_policies(), outcome, philly()).empty());
}

TEST(DiagnosisPrecedence, OomKillBeatsTheExceptionItCaused) {
  model::RunOutcome outcome =
      crashed("RuntimeError", "DataLoader worker (pid 77) is killed by signal: Killed.");
  outcome.exit_code = 137;
  outcome.oom_killed = true;
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.rule, "oom-killed");
  EXPECT_EQ(finding.category, "CPU Out of Memory");
  EXPECT_EQ(finding.stage, "train");
  EXPECT_TRUE(contains(finding.message, "exit status 137")) << finding.message;
}

TEST(DiagnosisPrecedence, AKillWithoutExceptionIsLocatedWhereTheJobWasLastSeen) {
  model::RunOutcome outcome;
  outcome.exit_code = 137;
  outcome.signal = 9;
  outcome.oom_killed = true;
  outcome.events.started = outcome.events.command_started = true;
  harness::Frame where{"/job/code/train.py", 19, "main", true};
  outcome.events.stages = {{"data", 0.5, 10, "Dataset created: Frames", where}};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "CPU Out of Memory");
  EXPECT_EQ(finding.stage, "data");
  EXPECT_EQ(finding.location.file, "train.py");
  EXPECT_EQ(finding.location.line, 19);
}

TEST(DiagnosisPrecedence, ALibraryFailingWithNoFrameOfTheJobIsLocatedInsideIt) {
  const std::string api = "/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py";
  model::RunOutcome outcome =
      crashed("AttributeError", "'NoneType' object has no attribute 'get'", "init",
              {{"/usr/bin/torchrun", 33, "<module>", false}, {api, 162, "to_map", false}});
  outcome.events.python_version = "3.11.2";
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Null Reference");
  EXPECT_EQ(finding.location.file, api);
  EXPECT_EQ(finding.location.line, 162);
  EXPECT_TRUE(contains(finding.message, "raised inside torch with no frame of the job's code"))
      << finding.message;
  EXPECT_TRUE(contains(finding.hint, "torch and Python 3.11.2 work together")) << finding.hint;

  // One frame of the job's code on the stack: the job's line, and nothing said of the library.
  outcome.events.exceptions[0].frames.insert(outcome.events.exceptions[0].frames.begin(),
                                             {"/job/code/launch.py", 5, "main", true});
  finding = only_finding(outcome);
  EXPECT_EQ(finding.location.file, "launch.py");
  EXPECT_FALSE(contains(finding.message, "raised inside")) << finding.message;
}

TEST(DiagnosisPrecedence, TimeoutIsItsOwnCategoryWithTheLastStage) {
  model::RunOutcome outcome;
  outcome.exit_code = 137;
  outcome.signal = 9;
  outcome.timed_out = true;
  outcome.timeout_s = 600;
  outcome.events.started = true;
  outcome.events.stages = {{"init", 0.1, 10, "", std::nullopt},
                           {"data", 1.0, 10, "DataLoader iterated", std::nullopt}};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Timeout/Hang");
  EXPECT_EQ(finding.rule, "dryrun-timeout");
  EXPECT_EQ(finding.retry, model::Retry::Useless);
  EXPECT_EQ(finding.stage, "data");
  EXPECT_TRUE(contains(finding.message, "within 10m")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "dryrun")) << finding.hint;
}

// Preflight stops a job whose files outgrow the platform's disk (SIGKILL, like the timeout);
// one that outgrew it between two measures and then exited 0 has failed all the same.
TEST(DiagnosisPrecedence, ADiskFullStopIsTheFailureWhateverTheExitStatus) {
  for (int exit_code : {137, 0}) {
    model::RunOutcome outcome;
    outcome.exit_code = exit_code;
    outcome.signal = exit_code ? 9 : 0;
    outcome.disk_full = true;
    outcome.written_bytes = 80 << 20;
    outcome.events.started = outcome.events.command_started = true;
    harness::Frame where{"/job/code/train.py", 24, "__init__", true};
    outcome.events.stages = {{"data", 0.5, 10, "Dataset created: Shards", where}};
    model::PlatformFacts facts = philly();
    facts.disk_bytes = 64 << 20;
    model::Finding finding = only_finding(outcome, facts);
    EXPECT_EQ(finding.rule, "disk-quota");
    EXPECT_EQ(finding.category, "Disk Full");
    EXPECT_EQ(finding.stage, "data");
    EXPECT_EQ(finding.location.file, "train.py");
    EXPECT_TRUE(
        contains(finding.message, "the platform's disk of 64.0 MiB (limits.disk): 80.0 MiB by stage data"))
        << finding.message;
    EXPECT_TRUE(contains(finding.message, "No space left on device")) << finding.message;
  }
}

TEST(DiagnosisPrecedence, TheExceptionBeatsOutputLines) {
  model::RunOutcome outcome = crashed("KeyError", "'label'");
  outcome.output = {line("sudo: a password is required"), line("Bus error")};
  EXPECT_EQ(only_finding(outcome).category, "Key Not Found");
}

TEST(DiagnosisPrecedence, TheMainProcessExceptionBeatsAWorkers) {
  model::RunOutcome outcome = crashed("ZeroDivisionError", "division by zero");
  harness::ExceptionEvent worker;
  worker.type = "KeyError";
  worker.message = "'x'";
  worker.pid = 11;
  worker.stage = "data";
  worker.t = 0.9;
  outcome.events.exceptions.push_back(worker);
  EXPECT_EQ(only_finding(outcome).category, "Division by Zero");

  // Without a main-process exception, the worker's explains the failure.
  outcome.events.exceptions.erase(outcome.events.exceptions.begin());
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Key Not Found");
  EXPECT_EQ(finding.stage, "data");
}

TEST(DiagnosisPrecedence, AReRaisedWorkerExceptionIsLocatedInTheWorker) {
  model::RunOutcome outcome =
      crashed("KeyError",
              "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
              "last):\n  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py\", line "
              "308, in _worker_loop\n    data = fetcher.fetch(index)\n  File "
              "\"/job/code/dataset.py\", line 21, in __getitem__\n    return row['label']\nKeyError: "
              "'label'\n",
              "train", {user_frame("/job/code/main.py", 60)});
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Key Not Found");
  EXPECT_EQ(finding.location.file, "dataset.py");
  EXPECT_EQ(finding.location.line, 21);
  EXPECT_EQ(finding.message, "KeyError: 'label'");
}

TEST(DiagnosisPrecedence, ASignalWithoutExceptionTakesTheLastStage) {
  model::RunOutcome outcome;
  outcome.exit_code = 135;  // 128 + SIGBUS, as the launcher's shell reports it
  outcome.events.started = true;
  outcome.events.stages = {{"init", 0.1, 10, "", std::nullopt}, {"train", 2.0, 10, "", std::nullopt}};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Shared Memory Exhausted");
  EXPECT_EQ(finding.rule, "bus-error");
  EXPECT_EQ(finding.stage, "train");
  EXPECT_TRUE(contains(finding.message, "SIGBUS")) << finding.message;
}

TEST(DiagnosisPrecedence, SigkillWithoutOomRecordIsLikelyMemory) {
  model::RunOutcome outcome;
  outcome.exit_code = 137;
  outcome.signal = 9;
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.rule, "killed");
  EXPECT_EQ(finding.retry, model::Retry::MayHelp);
  EXPECT_EQ(finding.stage, "init");
}

TEST(DiagnosisPrecedence, ANonZeroExitWithNothingElseIsUnclassified) {
  model::RunOutcome outcome;
  outcome.exit_code = 3;
  outcome.output = {line("giving up")};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.rule, "nonzero-exit");
  EXPECT_EQ(finding.category, "Unclassified");
  EXPECT_TRUE(contains(finding.hint, "status 3")) << finding.hint;
}

TEST(DiagnosisPrecedence, ArgparseUsageErrors) {
  model::RunOutcome outcome;
  outcome.exit_code = 2;
  outcome.output = {line("usage: main.py [-h] [--epochs EPOCHS]"),
                    line("main.py: error: unrecognized arguments: --save-dir /job/outputs/model")};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Illegal Argument");
  EXPECT_EQ(finding.rule, "argparse-error");
  EXPECT_TRUE(contains(finding.message, "unrecognized arguments")) << finding.message;
}

TEST(DiagnosisPrecedence, NaNLossPrintedBeforeAnExit) {
  model::RunOutcome outcome;
  outcome.exit_code = 1;
  outcome.output = {line("step 3 loss: nan", false, model::OutputLine::Stream::Stdout)};
  EXPECT_EQ(only_finding(outcome).category, "Loss NaN");
}

TEST(DiagnosisPrecedence, SetupFailuresAreStagedSetupAndMatchSetupLines) {
  model::Finding pip = only_finding(setup_failed(
      1, {"Defaulting to user installation because normal site-packages is not writeable",
          "WARNING: Retrying (model::Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
          "after connection broken by 'NewConnectionError(': Failed to establish a new "
          "connection: [Errno -3] Temporary failure in name resolution')'",
          "ERROR: Could not find a version that satisfies the requirement timm (from versions: none)",
          "ERROR: No matching distribution found for timm"}));
  EXPECT_EQ(pip.category, "Library Not Found");
  EXPECT_EQ(pip.rule, "pip-no-network");
  EXPECT_EQ(pip.stage, "setup");
  EXPECT_EQ(pip.retry, model::Retry::Useless);
  EXPECT_TRUE(contains(pip.message, "without network")) << pip.message;
  EXPECT_TRUE(contains(pip.message, "No matching distribution found for timm")) << pip.message;

  model::Finding missing = only_finding(setup_failed(127, {"sh: 1: conda: not found"}));
  EXPECT_EQ(missing.category, "Library Not Found");
  EXPECT_EQ(missing.rule, "setup-command-not-found");
  EXPECT_TRUE(contains(missing.message, "conda")) << missing.message;

  model::Finding sudo = only_finding(setup_failed(127, {"sh: 1: sudo: not found"}));
  EXPECT_EQ(sudo.category, "Permission Denied");
  EXPECT_EQ(sudo.rule, "setup-sudo");
  EXPECT_EQ(sudo.stage, "setup");
}

TEST(DiagnosisPrecedence, NetworkRulesForSetupDoNotFireOnTheCommand) {
  model::RunOutcome outcome;
  outcome.exit_code = 1;
  outcome.output = {line("ERROR: No matching distribution found for timm")};
  EXPECT_EQ(only_finding(outcome).rule, "nonzero-exit");
}

TEST(DiagnosisPrecedence, CommandNotFoundInTheCommand) {
  model::RunOutcome outcome;
  outcome.exit_code = 127;
  outcome.output = {line("/bin/sh: 1: python2: not found")};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Library Not Found");
  EXPECT_EQ(finding.rule, "command-not-found");
  EXPECT_EQ(finding.stage, "init");
}

TEST(DiagnosisPrecedence, SetupThatPassedIsNotBlamed) {
  model::RunOutcome outcome = crashed("NameError", "name 'x' is not defined");
  outcome.setup_exit = 0;
  outcome.output = {line("sudo: something odd", true)};
  EXPECT_EQ(only_finding(outcome).category, "Undefined Variable");
}

TEST(DiagnosisPrecedence, WithoutTheHarnessTheTracebackOnStderrIsRead) {
  model::RunOutcome outcome;
  outcome.exit_code = 1;
  outcome.output = {line("Epoch 1", false, model::OutputLine::Stream::Stdout),
                    line("Traceback (most recent call last):"),
                    line("  File \"/job/code/train.py\", line 12, in <module>"), line("    import timm"),
                    line("ModuleNotFoundError: No module named 'timm'")};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Library Not Found");
  EXPECT_EQ(finding.rule, "module-not-found");
  EXPECT_EQ(finding.location.file, "train.py");
  EXPECT_EQ(finding.location.line, 12);
  EXPECT_EQ(finding.stage, "init");
  EXPECT_TRUE(contains(finding.hint, "timm")) << finding.hint;
}

TEST(DiagnosisPrecedence, APythonScriptInSetupFailsWithATraceback) {
  model::Finding finding = only_finding(setup_failed(
      1, {"Traceback (most recent call last):", "  File \"/job/code/prepare.py\", line 3, in <module>",
          "KeyError: 'label'"}));
  EXPECT_EQ(finding.category, "Key Not Found");
  EXPECT_EQ(finding.stage, "setup");
  EXPECT_EQ(finding.location.file, "prepare.py");
}

TEST(DiagnosisPrecedence, RulesWithoutAFallbackStillReportTheFailure) {
  auto rules = FailureRules::parse("categories: {}\nrules: []\n", "empty.yaml");
  ASSERT_TRUE(rules.ok()) << rules.error().str();
  model::RunOutcome outcome;
  outcome.exit_code = 4;
  std::vector<model::Finding> findings = diagnose(
      {*rules, testing::shipped_policies().variables, testing::shipped_policies().checks}, outcome, philly());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, model::Severity::Error);
  EXPECT_TRUE(contains(findings[0].message, "exit status 4")) << findings[0].message;
}

}  // namespace
}  // namespace preflight::diagnosis
