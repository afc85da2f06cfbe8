#include <fstream>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/init_job.hpp"
#include "report/progress.hpp"
#include "sandbox/container.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

struct InitArgs {
  std::string dir = ".";
  std::string platform, image;
  bool force = false;
};

int init(const InitArgs& args) {
  if (auto exit_status = enter_user_namespace())
    return *exit_status;  // the image's python runs in a container
  const fs::path job_file = fs::path(args.dir) / "job.yaml";
  std::error_code ec;
  if (fs::exists(job_file, ec) && !args.force)
    return report_error(Error::bad_input("a job file is already there; preflight init --force replaces it",
                                         {job_file, 0, 0}));
  pipeline::InitChoices choices;
  choices.dir = args.dir;
  if (!args.platform.empty()) choices.platform = args.platform;
  if (!args.image.empty()) choices.image = args.image;
  auto progress = report::progress_on_stderr(false);
  sandbox::Runc runc;
  auto draft = pipeline::init_job(
      choices, [&](const std::string& line) { progress->note(line); }, runc);
  progress->clear();
  if (!draft) return report_error(draft.error());
  std::ofstream out(job_file, std::ios::trunc);
  out << draft->yaml;
  out.close();
  if (!out) return report_error(Error::runtime("cannot write " + job_file.string()));
  std::cout << "wrote " << job_file.string() << ": " << draft->command << "\n"
            << "next: preflight check " << job_file.string() << "\n";
  return 0;
}

}  // namespace

Command init_command() {
  return {"init", "Write a job.yaml for a repository: its entry script, options, data and outputs",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<InitArgs>();
            app.add_option("dir", args->dir, "the repository (the job's code folder)")->capture_default_str();
            app.add_option("--platform", args->platform, "platform profile: a shipped name or a file");
            app.add_option("--image", args->image,
                           "image: built-in name, docker-archive:PATH, oci:PATH[:TAG], rootfs:PATH");
            app.add_flag("--force", args->force, "replace an existing job.yaml");
            return [args] { return init(*args); };
          }};
}

}  // namespace preflight::cli
