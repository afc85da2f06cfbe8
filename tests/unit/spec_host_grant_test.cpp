#include <gtest/gtest.h>
#include <sys/stat.h>

#include "formats/job_formats.hpp"
#include "pipeline/job_context.hpp"
#include "spec/host_grant.hpp"
#include "spec/job_spec.hpp"
#include "test_support.hpp"

namespace preflight::spec {
namespace {

using preflight::testing::ScopedEnv;
using preflight::testing::TempDir;
namespace fs = std::filesystem;

// A job in TempDir/repo/jobs/train/ (repo/ a git work tree), its code in repo/src, and a
// secret in another folder of the host, outside the tree.
struct Tree {
  TempDir dir;
  fs::path repo = dir.path() / "repo";
  fs::path job_dir = repo / "jobs" / "train";
  fs::path secret = dir.write("secrets/key", "TOPSECRET-LINE\n");

  Tree() {
    dir.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    dir.write("repo/src/train.py", "print('train')\n");
    dir.write("repo/data/train.csv", "x,y\n");
  }

  Result<JobSpec> load(const std::string& yaml, const LoadOptions& options = {}) const {
    return load_job(dir.write("repo/jobs/train/job.yaml", yaml), options);
  }
};

void expect_refused(const Result<JobSpec>& job, int line, const std::string& part) {
  ASSERT_FALSE(job.ok()) << "loaded without error";
  EXPECT_EQ(job.error().exit_status(), 2);
  EXPECT_EQ(job.error().where.line, line) << job.error().str();
  EXPECT_NE(job.error().message.find(part), std::string::npos) << job.error().message;
  // Nothing of the file it points at reaches the message.
  EXPECT_EQ(job.error().message.find("TOPSECRET"), std::string::npos) << job.error().message;
}

TEST(HostGrant, TheJobsTreeIsItsWorkTreeElseItsFolderButNeverTheHomeOrTheRoot) {
  Tree tree;
  fs::create_directories(tree.job_dir);
  EXPECT_EQ(job_tree(tree.job_dir), fs::canonical(tree.repo));
  const fs::path loose = tree.dir.path() / "loose";
  fs::create_directories(loose);
  EXPECT_EQ(job_tree(loose), fs::canonical(loose));
  EXPECT_EQ(job_tree("/"), std::nullopt);
  // A home folder that is a work tree (dotfiles) grants a job in it only the job's folder.
  tree.dir.write("home/.git/HEAD", "ref: refs/heads/main\n");
  const fs::path project = tree.dir.path() / "home" / "project";
  fs::create_directories(project);
  ScopedEnv home("HOME", (tree.dir.path() / "home").c_str());
  EXPECT_EQ(job_tree(project), fs::canonical(project));
  EXPECT_EQ(job_tree(tree.dir.path() / "home"), std::nullopt);
}

TEST(HostGrant, AJobNamesFilesOfItsOwnTreeOnly) {
  Tree tree;
  auto inside = tree.load("code: ../../src\ncommand: python train.py\ninputs: {d: ../../data}\n");
  ASSERT_TRUE(inside.ok()) << inside.error().str();
  EXPECT_EQ(inside->code_dir, tree.repo / "src");

  expect_refused(tree.load("command: cat x\ninputs:\n  k: " + tree.secret.string() + "\n"), 3,
                 "input \"k\": " + tree.secret.string() + " is outside the job's folder tree " +
                     fs::canonical(tree.repo).string() +
                     "; a job file names only files of its own repository");
  expect_refused(tree.load("command: cat x\ninputs: {sh: /etc/shadow}\n"), 2, "--allow /etc");
  expect_refused(tree.load("code: " + tree.secret.parent_path().string() + "\ncommand: ls\n"), 1,
                 "code: " + tree.secret.parent_path().string() + " is outside");
}

TEST(HostGrant, ALinkInTheTreeIsFollowedBeforeItIsJudged) {
  Tree tree;
  fs::create_directories(tree.job_dir);
  fs::create_symlink(tree.secret, tree.job_dir / "key");
  fs::create_symlink(tree.secret.parent_path(), tree.job_dir / "secrets");
  expect_refused(tree.load("command: cat x\ninputs: {k: ./key}\n"), 2, "after its links) is outside");
  expect_refused(tree.load("code: secrets\ncommand: ls\n"), 1, "after its links) is outside");
  // A profile file linked to a file outside: refused before it is read, so its first value
  // never reaches a message.
  fs::create_symlink(tree.secret, tree.job_dir / "tok.yaml");
  expect_refused(tree.load("platform: ./tok.yaml\ncommand: ls\n"), 1, "platform: ");
}

TEST(HostGrant, TheUserGrantsFoldersOnTheCommandLine) {
  Tree tree;
  LoadOptions options;
  options.grant.folders.push_back(tree.secret.parent_path());
  auto granted = tree.load("command: cat x\ninputs:\n  k: " + tree.secret.string() + "\n", options);
  ASSERT_TRUE(granted.ok()) << granted.error().str();
  // So does a --map: its local side, not what the job joins to it.
  LoadOptions mapped;
  mapped.maps.push_back(*parse_path_map("s3://bucket=" + tree.secret.parent_path().string(), "/"));
  auto in_map = tree.load("command: cat x\ninputs: {k: s3://bucket/key}\n", mapped);
  ASSERT_TRUE(in_map.ok()) << in_map.error().str();
}

TEST(HostGrant, ACloudPathOrSubPathThatClimbsIsRefused) {
  Tree tree;
  EXPECT_TRUE(climbs_out("s3://bucket/../../etc"));
  EXPECT_TRUE(climbs_out("../x"));
  EXPECT_FALSE(climbs_out("s3://bucket/a..b/c"));
  expect_refused(tree.load("command: ls\npaths: {\"s3://bucket\": ../../data}\n"
                           "inputs: {d: \"s3://bucket/../../../../etc\"}\n"),
                 3, "has a \"..\" component");
  // paths: entries are the job's: their local side is confined as inputs are.
  expect_refused(tree.load("command: ls\npaths: {\"s3://bucket\": " + tree.secret.parent_path().string() +
                           "}\ninputs: {d: \"s3://bucket/key\"}\n"),
                 2, "paths: \"s3://bucket\": ");
}

TEST(HostGrant, AKubernetesSubPathStaysInItsVolume) {
  Tree tree;
  formats::ReadOptions options;
  options.code_dir = tree.repo / "src";
  options.load.maps.push_back(*parse_path_map("pvc://c=" + (tree.repo / "data").string(), "/"));
  const std::string job = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: escape}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          volumes: [{name: data, persistentVolumeClaim: {claimName: c}}]
          containers:
            - name: pytorch
              image: team/x:1
              command: [python, train.py]
              volumeMounts: [{name: data, mountPath: /data, subPath: "../../../../../../etc"}]
)";
  auto refused = formats::load_any_job(tree.dir.write("repo/jobs/train/pytorchjob.yaml", job), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().exit_status(), 2);
  EXPECT_EQ(refused.error().where.line, 15) << refused.error().str();
  EXPECT_NE(refused.error().message.find("Kubernetes refuses"), std::string::npos) << refused.error().message;
}

TEST(HostGrant, AnImageAJobNamesIsInItsTreeOrARegistryTheUserAllows) {
  Tree tree;
  fs::create_directories(tree.job_dir);
  const HostGrant none;
  const SourceLocation at{tree.job_dir / "job.yaml", 3, 8};
  auto root = pipeline::check_image_grant("rootfs:/", tree.job_dir, none, at);
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().where.line, 3);
  EXPECT_NE(root.error().message.find("image: / is outside"), std::string::npos) << root.error().message;
  fs::create_directories(tree.repo / "rootfs");
  EXPECT_TRUE(pipeline::check_image_grant("rootfs:../../rootfs", tree.job_dir, none, at).ok());
  EXPECT_TRUE(pipeline::check_image_grant("pytorch", tree.job_dir, none, at).ok());

  auto hub = pipeline::check_image_grant("docker://pytorch/pytorch:2.1", tree.job_dir, none, at);
  ASSERT_FALSE(hub.ok());
  EXPECT_NE(hub.error().message.find("--allow-registry docker.io"), std::string::npos) << hub.error().message;
  HostGrant registries;
  registries.registries = {"docker.io", "127.0.0.1:5000", "localhost:5000"};
  EXPECT_TRUE(pipeline::check_image_grant("docker://pytorch/pytorch:2.1", tree.job_dir, registries, at).ok());
  // This machine's own addresses and its link's never, allowed or not.
  for (const char* local :
       {"docker://127.0.0.1:5000/x:1", "docker://localhost:5000/x:1", "docker://[::1]:5000/x:1",
        "docker://169.254.169.254/latest:1", "docker://[fe80::1]/x:1", "docker://0.0.0.0/x:1"}) {
    auto refused = pipeline::check_image_grant(local, tree.job_dir, registries, at);
    ASSERT_FALSE(refused.ok()) << local;
    EXPECT_NE(refused.error().message.find("an address of this machine or its link"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_EQ(registry_host("pytorch/pytorch:2.1"), "docker.io");
  EXPECT_EQ(registry_host("ubuntu"), "docker.io");
  EXPECT_EQ(registry_host("nvcr.io/nvidia/pytorch:24.01-py3"), "nvcr.io");
  EXPECT_EQ(registry_host("localhost/x"), "localhost");
}

TEST(HostGrant, TheEnvironmentGrantsFoldersAndRegistries) {
  ScopedEnv folders("PREFLIGHT_ALLOW", "/datasets:relative/data:");
  ScopedEnv registries("PREFLIGHT_ALLOW_REGISTRY", "nvcr.io, ghcr.io");
  const HostGrant grant = environment_grant("/work");
  EXPECT_EQ(grant.folders, (std::vector<fs::path>{"/datasets", "/work/relative/data"}));
  EXPECT_EQ(grant.registries, (std::vector<std::string>{"nvcr.io", "ghcr.io"}));
}

}  // namespace
}  // namespace preflight::spec
