// The manifests of `preflight export k8s`: preflight.yaml against its golden file
// (tests/golden/preflight-k8s.yaml, which tests/integration/k8s.sh also checks against the
// Kubernetes schema), the grouping of jobs into Indexed Jobs, and what is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pipeline/export_k8s.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using pipeline::PodNeeds;
using pipeline::PodPlace;

PodNeeds philly_needs(std::vector<PodPlace> places) {
  spec::ResourceLimits limits;
  limits.memory_bytes = 16ull << 30;
  limits.cpus = 8;
  return {1000, 1000, std::move(places), limits, {"/shared/jobs/mnist"}};
}

// Two philly jobs on one image, one SageMaker job (root) on another, a Kueue queue.
pipeline::K8sExport golden_export() {
  pipeline::K8sExport batch;
  batch.name = "gate-1234";
  batch.claim = "team-data";
  batch.mount = "/shared";
  batch.out = "/shared/exports/gate-1234";
  batch.bundle = "/shared/exports/gate-1234/bundle";
  batch.loader = "ld-linux-x86-64.so.2";
  batch.queue = "team-queue";
  batch.parallel = 8;
  const std::string pytorch = "registry.example/team/pytorch:2.1";
  pipeline::add_to_group(batch.groups, pytorch, "pytorch sha256:4a37",
                         philly_needs({{"/philly/code", true}, {"/tmp", false}}),
                         "/shared/jobs/mnist/job.yaml");
  spec::ResourceLimits sagemaker;
  sagemaker.disk_bytes = 30ull << 30;
  pipeline::add_to_group(batch.groups, "registry.example/team/python:3.11", "python sha256:7e21",
                         {0,
                          0,
                          {{"/opt/ml/code", true}, {"/opt/ml/input/config", true}, {"/opt/ml/model", false}},
                          sagemaker,
                          {}},
                         "/shared/jobs/sagemaker/job.yaml");
  pipeline::add_to_group(batch.groups, pytorch, "pytorch sha256:4a37",
                         philly_needs({{"/hdfs/data/train", true}, {"/tmp", false}, {"/tmp/scratch", false}}),
                         "/shared/jobs/vae/job.yaml");
  return batch;
}

std::string manifest(const pipeline::K8sExport& batch) {
  auto files = pipeline::export_k8s(batch);
  if (!files) return "error: " + files.error().message;
  return files->at(0).text;
}

TEST(PipelineExportK8s, TheManifestMatchesItsGoldenFile) {
  const std::string text = manifest(golden_export());
  const fs::path golden = testing::source_dir() / "tests" / "golden" / "preflight-k8s.yaml";
  // PREFLIGHT_UPDATE_GOLDEN=1 rewrites the golden after a change meant to alter the manifest.
  if (const char* update = std::getenv("PREFLIGHT_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(golden, std::ios::binary) << text;
  EXPECT_EQ(text, read_file(golden).value_or("missing " + golden.string()));
}

TEST(PipelineExportK8s, JobsShareAnIndexedJobWhenTheirImageUserAndLimitsAreOne) {
  const auto batch = golden_export();
  ASSERT_EQ(batch.groups.size(), 2u);
  EXPECT_EQ(batch.groups[0].jobs,
            (std::vector<fs::path>{"/shared/jobs/mnist/job.yaml", "/shared/jobs/vae/job.yaml"}));
  // The union of the places.
  EXPECT_EQ(
      batch.groups[0].needs.places,
      (std::vector<PodPlace>{
          {"/hdfs/data/train", true}, {"/philly/code", true}, {"/tmp", false}, {"/tmp/scratch", false}}));
  EXPECT_EQ(batch.groups[1].needs.uid, 0u);
  const std::string text = manifest(batch);
  EXPECT_NE(text.find("job-0-1: \"/shared/jobs/vae/job.yaml\\n\""), std::string::npos) << text;
  EXPECT_NE(text.find("completions: 2\n"), std::string::npos);
  // A root platform's pod does not claim to run as non-root.
  EXPECT_EQ(text.find("runAsNonRoot"), text.rfind("runAsNonRoot"));
}

TEST(PipelineExportK8s, AFolderOneJobReadsAndAnotherWritesSplitsThem) {
  auto batch = golden_export();
  // /philly/code is the first job's read-only code; a job that writes it (a platform whose code
  // folder is writable) needs a pod of its own.
  pipeline::add_to_group(batch.groups, "registry.example/team/pytorch:2.1", "pytorch sha256:4a37",
                         philly_needs({{"/philly/code", false}}), "/shared/jobs/writes-code/job.yaml");
  ASSERT_EQ(batch.groups.size(), 3u);
  EXPECT_EQ(batch.groups[2].jobs, (std::vector<fs::path>{"/shared/jobs/writes-code/job.yaml"}));
}

TEST(PipelineExportK8s, TheInitContainerFillsWhatTheJobsContainerMountsReadOnly) {
  const std::string text = manifest(golden_export());
  EXPECT_NE(text.find("initContainers:"), std::string::npos);
  EXPECT_NE(text.find("- --stage\n"), std::string::npos);
  EXPECT_NE(text.find("mountPath: /philly/code\n              readOnly: true"), std::string::npos) << text;
  EXPECT_NE(text.find("mountPath: /tmp\n"), std::string::npos);
}

TEST(PipelineExportK8s, RefusesWhatThePodsCouldNotSeeOrKubernetesCouldNotName) {
  auto batch = golden_export();
  batch.groups[0].jobs.push_back("/home/ana/jobs/laptop/job.yaml");
  EXPECT_NE(manifest(batch).find("not below --mount /shared"), std::string::npos) << manifest(batch);

  batch = golden_export();
  batch.groups[0].needs.reads.push_back("/data/imagenet");
  EXPECT_NE(manifest(batch).find("a job's code or input /data/imagenet is not below"), std::string::npos);

  batch = golden_export();
  batch.mount = "/";
  EXPECT_NE(manifest(batch).find("over its root"), std::string::npos);

  batch = golden_export();
  batch.name = "Gate_1234";
  EXPECT_NE(manifest(batch).find("--name Gate_1234"), std::string::npos);

  batch = golden_export();
  batch.groups[1].jobs[0] = "/shared/jobs/line\nbreak/job.yaml";
  EXPECT_NE(manifest(batch).find("line break"), std::string::npos);

  batch = golden_export();
  batch.groups.clear();
  EXPECT_NE(manifest(batch).find("no job to export"), std::string::npos);
}

}  // namespace
}  // namespace preflight
