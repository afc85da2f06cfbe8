// `preflight export ENGINE JOB... --out DIR`: the plain files that run a batch of dry runs on a
// cluster's own scheduler, one subcommand per engine (docs/cli.md "preflight export slurm",
// docs/scale-out.md). The engine then runs them with no operator of ours; `preflight collect`
// merges the reports its tasks wrote.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <system_error>

#include "cli/command.hpp"
#include "formats/job_formats.hpp"
#include "pipeline/export_k8s.hpp"
#include "pipeline/export_slurm.hpp"
#include "pipeline/job_list.hpp"
#include "util/data_dir.hpp"
#include "util/text.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

// What every engine's export takes.
struct ExportArgs : ReadArgs {
  std::vector<std::string> jobs;
  std::string out, image, platform, shard;
};

struct SlurmArgs : ExportArgs {
  SandboxArgs sandbox;
  std::string shared;
  int parallel = pipeline::kDefaultSlurmParallel;
};

struct K8sArgs : ExportArgs {
  std::string claim, mount, name = "preflight", queue;
  std::vector<std::string> registry_images;
  int parallel = pipeline::kDefaultK8sParallel;
};

void add_export_options(CLI::App& app, ExportArgs& args) {
  app.add_option("JOB", args.jobs, "job files, folders searched for job.yaml, or lists of jobs")->required();
  app.add_option("--out", args.out, "the folder to write the files into (and the tasks' logs and reports)")
      ->required();
  add_read_options(app, args);
  app.add_option("--image", args.image, "run every job on this image (as `preflight run --image`)");
  app.add_option("--platform", args.platform, "run every job on this platform: a shipped name or a file");
  app.add_option("--shard", args.shard, "export only share I of N of the jobs (for example 2/8)");
}

// The jobs of an export, each loaded as `preflight run` would read it, with --platform and
// --image checked.
Result<std::vector<fs::path>> export_jobs(ExportArgs& args, const formats::ReadOptions& read) {
  auto jobs = pipeline::select_jobs(args.jobs, args.shard, fs::current_path());
  if (!jobs) return std::move(jobs).error();
  if (jobs->empty())
    return Error::bad_input("--shard " + args.shard + " holds none of the jobs: nothing to export");
  for (const fs::path& job : *jobs)
    if (auto loaded = formats::load_any_job(job, read); !loaded) return std::move(loaded).error();
  if (auto checked = pipeline::check_batch_options(args.platform, args.image); !checked)
    return std::move(checked).error();
  return jobs;
}

// The export folder, absolute; one holding an earlier export's reports is refused, since
// `preflight collect` would merge them with the new ones.
Result<fs::path> export_folder(const std::string& out) {
  const fs::path folder = fs::absolute(out).lexically_normal();
  std::error_code ec;
  if (fs::exists(folder / "reports", ec) && !fs::is_empty(folder / "reports", ec))
    return Error::bad_input("--out " + out + ": " + (folder / "reports").string() +
                            " holds the reports of an earlier export; remove them or choose another folder");
  return folder;
}

int export_slurm(SlurmArgs& args) {
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  auto jobs = export_jobs(args, *read);
  if (!jobs) return report_error(jobs.error());
  auto out = export_folder(args.out);
  if (!out) return report_error(out.error());
  pipeline::SlurmExport batch;
  batch.jobs = std::move(*jobs);
  batch.out = *out;
  std::error_code ec;
  batch.preflight = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return report_error(Error::runtime("cannot find the preflight binary: " + ec.message()));
  batch.data_dir = fs::absolute(data_dir()).lexically_normal();
  if (!args.shared.empty()) batch.shared = fs::absolute(args.shared).lexically_normal();
  batch.platform = args.platform;
  batch.image = args.image;
  batch.read_args = read_arguments(*read);
  if (auto seccomp = sandbox_seccomp(args.sandbox); !seccomp) return report_error(seccomp.error());
  batch.sandbox_args = sandbox_arguments(args.sandbox);
  batch.parallel = args.parallel;
  auto files = pipeline::export_slurm(batch);
  if (!files) return report_error(files.error());
  if (auto written = pipeline::write_exported_files(batch.out, *files, pipeline::kSlurmExportFolders);
      !written)
    return report_error(written.error());
  if (!batch.shared.empty() && batch.preflight.lexically_relative(batch.shared).string().starts_with(".."))
    std::cerr << "preflight: note: the tasks run " << batch.preflight.string()
              << ", which is not below --shared " << batch.shared.string()
              << ": every node must see it at that path\n";
  std::cout << "exported " << batch.jobs.size() << " job(s) to " << batch.out.string() << "\n"
            << "  submit:  sbatch " << quote_shell_word((batch.out / "preflight-array.sbatch").string())
            << "\n"
            << "  collect: preflight collect " << quote_shell_word((batch.out / "reports").string()) << "\n";
  return 0;
}

// The image as the cluster pulls it: docker://REF is REF; any other form (a built-in image, an
// archive, a layout) is named by --registry-image, which says where it was pushed.
Result<std::string> cluster_image(const std::string& image, const std::vector<std::string>& registry_images) {
  for (const std::string& pair : registry_images)
    if (pair.starts_with(image + "=") && pair.size() > image.size() + 1) return pair.substr(image.size() + 1);
  if (image.starts_with("docker://")) return image.substr(std::string("docker://").size());
  return Error::bad_input(fmt::format(
      "image {}: the cluster pulls images from a registry, and this one is not in one; push it (for a "
      "built-in "
      "image: skopeo copy oci:$(preflight cache dir)/images/{} docker://REGISTRY/NAME:TAG) and give "
      "--registry-image {}=REGISTRY/NAME:TAG",
      image, image, image));
}

int export_k8s(K8sArgs& args) {
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  auto jobs = export_jobs(args, *read);
  if (!jobs) return report_error(jobs.error());
  auto out = export_folder(args.out);
  if (!out) return report_error(out.error());
  pipeline::K8sExport batch;
  batch.name = args.name;
  batch.claim = args.claim;
  batch.mount = fs::absolute(args.mount).lexically_normal();
  batch.out = *out;
  batch.bundle = *out / "bundle";
  batch.queue = args.queue;
  batch.platform = args.platform;
  batch.read_args = read_arguments(*read);
  batch.parallel = args.parallel;
  for (const fs::path& job : *jobs) {
    pipeline::JobChoices choices{job, std::nullopt, std::nullopt, *read};
    if (!args.platform.empty()) choices.platform = args.platform;
    if (!args.image.empty()) choices.image = args.image;
    auto context =
        pipeline::load_job_context(choices, [](const std::string& line) { std::cerr << line << "\n"; });
    if (!context) return report_error(context.error().context(job.string()));
    auto needs = pipeline::pod_needs(*context);
    if (!needs) return report_error(needs.error().context(job.string()));
    auto image = cluster_image(context->image_text, args.registry_images);
    if (!image) return report_error(image.error().context(job.string()));
    pipeline::add_to_group(batch.groups, *image, context->image_text + " " + context->image.digest, *needs,
                           job);
  }
  if (auto checked = pipeline::check_k8s_export(batch); !checked) return report_error(checked.error());
  std::error_code ec;
  const fs::path preflight = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return report_error(Error::runtime("cannot find the preflight binary: " + ec.message()));
  auto loader = pipeline::write_bundle(batch.bundle, preflight, data_dir());
  if (!loader) return report_error(loader.error());
  batch.loader = *loader;
  auto files = pipeline::export_k8s(batch);
  if (!files) return report_error(files.error());
  if (auto written = pipeline::write_exported_files(batch.out, *files, {"reports"}); !written)
    return report_error(written.error());
  std::cout << "exported " << jobs->size() << " job(s) in " << batch.groups.size() << " Indexed Job(s) to "
            << batch.out.string() << "\n"
            << "  apply:   kubectl apply -f " << quote_shell_word((batch.out / "preflight.yaml").string())
            << "\n"
            << "  collect: preflight collect " << quote_shell_word((batch.out / "reports").string()) << "\n";
  return 0;
}

}  // namespace

Command export_command() {
  return {
      "export", "Write the files that run a batch of dry runs on a cluster's scheduler (Slurm, Kubernetes)",
      [](CLI::App& app) -> Action {
        app.require_subcommand(1);
        auto slurm_args = std::make_shared<SlurmArgs>();
        CLI::App* slurm = app.add_subcommand(
            "slurm", "A Slurm job array: jobs.txt and preflight-array.sbatch, for sbatch on a shared folder");
        add_export_options(*slurm, *slurm_args);
        slurm->add_option("--parallel", slurm_args->parallel, "tasks of the array to run at once")
            ->check(CLI::PositiveNumber)
            ->capture_default_str();
        slurm->add_option("--shared", slurm_args->shared,
                          "a folder every node sees: the tasks' cache is its cache/ folder");
        add_sandbox_options(*slurm, slurm_args->sandbox);
        auto k8s_args = std::make_shared<K8sArgs>();
        CLI::App* k8s = app.add_subcommand(
            "k8s",
            "Kubernetes: an Indexed Job per image, a ConfigMap of the jobs and a NetworkPolicy, in "
            "preflight.yaml for kubectl apply");
        add_export_options(*k8s, *k8s_args);
        k8s->add_option("--claim", k8s_args->claim,
                        "the PersistentVolumeClaim that holds the jobs, their code and inputs, and --out")
            ->required();
        k8s->add_option("--mount", k8s_args->mount,
                        "the folder here that the claim's volume is: the pods mount it at the same path")
            ->required();
        k8s->add_option(
            "--registry-image", k8s_args->registry_images,
            "IMAGE=REF: the job image IMAGE (as Preflight names it) is REF in the cluster's registry");
        k8s->add_option("--name", k8s_args->name, "the objects' names begin with NAME")
            ->capture_default_str();
        k8s->add_option("--queue", k8s_args->queue,
                        "Kueue's LocalQueue for the Jobs (kueue.x-k8s.io/queue-name)");
        k8s->add_option("--parallel", k8s_args->parallel, "pods of each Job to run at once")
            ->check(CLI::PositiveNumber)
            ->capture_default_str();
        return [slurm, slurm_args, k8s, k8s_args]() -> int {
          if (slurm->parsed()) return export_slurm(*slurm_args);
          if (k8s->parsed()) return export_k8s(*k8s_args);
          return 2;
        };
      }};
}

}  // namespace preflight::cli
