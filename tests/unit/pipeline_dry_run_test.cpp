// The dry run's own logic over a fake container runtime: what it does with a certain static
// error, the launcher's setup marker, the harness's events of a failed stage, an interrupted
// run and the files a job leaves behind. The real runtime is the integration tests' business.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/dry_run.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using Stream = model::OutputLine::Stream;

// Plays back a job: its output lines, what it leaves in the run folder, its exit. It records
// the plans it was given and checks that the run folder exists while the job "runs".
class FakeRuntime final : public sandbox::ContainerRuntime {
 public:
  std::vector<std::pair<Stream, std::string>> lines;
  std::function<void(const model::RunLayout&)> leave = [](const model::RunLayout&) {};
  sandbox::ContainerExit exit;
  std::vector<plan::RunPlan> plans;

  Result<sandbox::ContainerExit> run(const plan::RunPlan& plan, const fs::path& image_rootfs,
                                     const sandbox::LineSink& on_line, std::size_t) override {
    plans.push_back(plan);
    EXPECT_TRUE(fs::is_directory(plan.run_dir)) << plan.run_dir;
    EXPECT_TRUE(fs::is_directory(image_rootfs)) << image_rootfs;
    leave(plan.layout());
    for (const auto& [stream, line] : lines) on_line(stream, line);
    return exit;
  }
};

// A job on the philly profile whose image is an empty root file system: it has no Python, so
// the static checks run nothing in a container, and a command that names python is a
// certain error (image-without-python).
class DryRunTest : public ::testing::Test {
 protected:
  TempDir dir;
  FakeRuntime runtime;

  Result<pipeline::JobContext> context(const std::string& job_yaml) {
    dir.write("job/job.yaml", job_yaml);
    fs::create_directories(dir.path() / "rootfs");
    auto job = spec::load_job(dir.path() / "job" / "job.yaml");
    if (!job) return std::move(job).error();
    auto profile = spec::load_platform("philly", spec::shipped_platforms_dir());
    if (!profile) return std::move(profile).error();
    image::UnpackedImage image;
    image.ref = "empty";
    image.digest = "sha256:" + std::string(64, '0');
    image.rootfs = dir.path() / "rootfs";
    auto gpus = estimate::load_gpu_table(estimate::shipped_gpu_table());
    if (!gpus) return std::move(gpus).error();
    return pipeline::JobContext{std::move(*job),  std::move(*profile),         "empty",
                                std::move(image), testing::shipped_policies(), std::move(*gpus)};
  }

  Result<report::Report> run(const std::string& job_yaml, pipeline::DryRunOptions options = {}) {
    auto loaded = context(job_yaml);
    if (!loaded) return std::move(loaded).error();
    options.runs_dir = dir.path() / "runs";
    return pipeline::dry_run_loaded(*loaded, options, {}, runtime);
  }

  // The folder of the one run made.
  model::RunLayout layout() const { return runtime.plans.at(0).layout(); }
};

const report::StageResult* stage(const report::Report& report, const std::string& name) {
  for (const auto& s : report.stages)
    if (s.name == name) return &s;
  return nullptr;
}

const model::Finding* finding(const report::Report& report, const std::string& rule) {
  for (const auto& f : report.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

TEST_F(DryRunTest, ACertainStaticErrorEndsTheRunBeforeTheContainer) {
  auto report = run("name: t\ncommand: python train.py\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(runtime.plans.empty()) << "the container ran";
  EXPECT_EQ(report->verdict, "fail");
  const auto* no_python = finding(*report, "image-without-python");
  ASSERT_NE(no_python, nullptr);
  EXPECT_EQ(no_python->phase, model::Phase::Static);
  EXPECT_EQ(no_python->stage, "init");
  ASSERT_FALSE(report->notes.empty());
  EXPECT_NE(report->notes.back().find("--run-anyway"), std::string::npos) << report->notes.back();
}

TEST_F(DryRunTest, RunAnywayRunsPastTheStaticError) {
  pipeline::DryRunOptions options;
  options.stop_on_static = false;
  auto report = run("name: t\ncommand: python train.py\n", options);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(runtime.plans.size(), 1u);
  EXPECT_NE(runtime.plans[0].command.find("python train.py"), std::string::npos);
}

TEST_F(DryRunTest, ACleanRunPassesAndLeavesOnlyItsOutputsAndEvents) {
  runtime.lines = {{Stream::Stdout, "training"}};
  runtime.leave = [](const model::RunLayout& run) {
    fs::create_directories(run.upper());
    fs::create_directories(run.harness());
  };
  auto report = run("name: t\ncommand: echo training\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, "pass");
  EXPECT_TRUE(report->findings.empty());
  EXPECT_FALSE(fs::exists(layout().upper())) << "the container's layer was kept";
  EXPECT_TRUE(fs::exists(layout().harness()));
}

TEST_F(DryRunTest, WhatTheJobFileHoldsAndTheRunDoesNotUseIsANoteAtItsLine) {
  auto report = run("name: t\nenvironment: azureml:AzureML-pytorch@latest\ncommand: echo training\n");
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_FALSE(report->notes.empty());
  EXPECT_EQ(
      report->notes.front().substr(report->notes.front().find("job.yaml")),
      "job.yaml:2:1: environment: is AzureML's and is not used; Preflight runs image: (or the platform's "
      "default image)");
}

TEST_F(DryRunTest, TheSetupMarkerSplitsSetupFromCommand) {
  // The launcher ends setup with a marker line on each stream and exits with its status.
  runtime.lines = {{Stream::Stdout, "Collecting nosuchpackage"},
                   {Stream::Stderr, "ERROR: No matching distribution found for nosuchpackage"},
                   {Stream::Stdout, "\036preflight:setup-exit 1"},
                   {Stream::Stderr, "\036preflight:setup-exit 1"}};
  runtime.exit.exit_code = 1;
  auto report = run("name: t\nsetup: pip install nosuchpackage\ncommand: echo training\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, "fail");
  const auto* setup = stage(*report, "setup");
  ASSERT_NE(setup, nullptr);
  EXPECT_EQ(setup->status, "failed");
  const auto* init = stage(*report, "init");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->status, "not_reached");
  bool failed_at_setup = false;
  for (const auto& f : report->findings)
    failed_at_setup |= f.severity == model::Severity::Error && f.stage == "setup";
  EXPECT_TRUE(failed_at_setup) << "no error at stage setup";
}

TEST_F(DryRunTest, TheFailedStageComesFromTheHarnessEvents) {
  // The harness saw data, model, train and validate, then a KeyError in evaluate.
  runtime.leave = [](const model::RunLayout& run) {
    fs::create_directories(run.harness());
    fs::copy_file(testing::source_dir() / "tests/harness/fixtures/mnist_evaluate_keyerror.jsonl",
                  run.events());
  };
  runtime.lines = {{Stream::Stderr, "Traceback (most recent call last):"},
                   {Stream::Stderr, "KeyError: 'top5'"}};
  runtime.exit.exit_code = 1;
  auto report = run("name: t\ncommand: echo training\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->verdict, "fail");
  for (const char* passed : {"init", "data", "model", "train", "validate"}) {
    const auto* s = stage(*report, passed);
    ASSERT_NE(s, nullptr) << passed;
    EXPECT_EQ(s->status, "passed") << passed;
  }
  const auto* evaluate = stage(*report, "evaluate");
  ASSERT_NE(evaluate, nullptr);
  EXPECT_EQ(evaluate->status, "failed");
  ASSERT_FALSE(report->findings.empty());
  EXPECT_EQ(report->findings[0].stage, "evaluate");
  EXPECT_EQ(report->findings[0].category, "Key Not Found");
  EXPECT_EQ(report->findings[0].location.line, 42);
}

TEST_F(DryRunTest, AnInterruptedRunIsAnErrorAndItsLayersAreGone) {
  runtime.leave = [](const model::RunLayout& run) { fs::create_directories(run.upper() / "tmp"); };
  runtime.exit.interrupted_by = SIGINT;
  runtime.exit.exit_code = 137;
  auto report = run("name: t\ncommand: echo training\n");
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, ErrorKind::Interrupted);
  EXPECT_NE(report.error().message.find("interrupted by"), std::string::npos) << report.error().message;
  EXPECT_FALSE(fs::exists(layout().upper()));
}

TEST_F(DryRunTest, FilesWrittenOutsideTheOutputsAreReported) {
  runtime.leave = [](const model::RunLayout& run) {
    fs::create_directories(run.upper() / "results");
    std::ofstream(run.upper() / "results" / "model.pt") << std::string(4096, 'w');
  };
  auto report = run("name: t\ncommand: echo training\noutputs:\n  model: {}\n");
  ASSERT_TRUE(report) << report.error().message;
  const auto* lost = finding(*report, "written-outside-outputs");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->severity, model::Severity::Warning);
  EXPECT_EQ(lost->category, "Output Lost");
  EXPECT_NE(lost->message.find("/results/model.pt (4.0 KiB)"), std::string::npos) << lost->message;
  EXPECT_NE(lost->hint.find("${{outputs.model}}"), std::string::npos) << lost->hint;
}

TEST_F(DryRunTest, WhatTheJobKeepsLosesSetIdBitsAndSpecialFilesInAFolderOfTheUsersOwn) {
  runtime.leave = [](const model::RunLayout& run) {
    fs::create_directories(run.output("o"));
    std::ofstream(run.output("o") / "rootsh") << "#!/bin/sh\n";
    ::chmod((run.output("o") / "rootsh").c_str(), 04755);
    ::mkfifo((run.output("o") / "fifo").c_str(), 0644);
  };
  auto report = run("name: t\ncommand: echo training\noutputs:\n  o: {}\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(fs::status(layout().output("o") / "rootsh").permissions(), static_cast<fs::perms>(0755));
  EXPECT_FALSE(fs::exists(fs::symlink_status(layout().output("o") / "fifo")));
  EXPECT_EQ(fs::status(layout().dir()).permissions(), fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(layout().stopped()));
}

TEST_F(DryRunTest, ARunPreflightStoppedIsMarkedForWhatItWroteToBePrunedFirst) {
  runtime.exit.timed_out = true;
  runtime.exit.exit_code = 137;
  auto report = run("name: t\ncommand: echo training\n");
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(fs::exists(layout().stopped()));
}

TEST_F(DryRunTest, TheRuntimesFailureIsPreflightsError) {
  class Broken final : public sandbox::ContainerRuntime {
   public:
    Result<sandbox::ContainerExit> run(const plan::RunPlan&, const fs::path&, const sandbox::LineSink&,
                                       std::size_t) override {
      return Error::runtime("runc run failed (exit 1): no cgroup");
    }
  } broken;
  auto loaded = context("name: t\ncommand: echo training\n");
  ASSERT_TRUE(loaded) << loaded.error().message;
  pipeline::DryRunOptions options;
  options.runs_dir = dir.path() / "runs";
  auto report = pipeline::dry_run_loaded(*loaded, options, {}, broken);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, ErrorKind::Runtime);
}

}  // namespace
}  // namespace preflight
