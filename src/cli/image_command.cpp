#include <fstream>
#include <iostream>
#include <memory>

#include "check/image_diff.hpp"
#include "check/image_inspect.hpp"
#include "cli/command.hpp"
#include "image/image_store.hpp"
#include "util/data_dir.hpp"

namespace preflight::cli {
namespace {

struct ImageArgs {
  std::string name;  // build: the built-in name; inspect, diff: any reference
  std::string other;  // diff: the second image
  bool if_missing = false;
  bool json = false;
};

void progress(const std::string& line) { std::cerr << "preflight: " << line << "\n"; }

image::ImageStore store() { return image::ImageStore(image::default_cache_dir(), data_dir() / "images"); }

int build(const ImageArgs& args) {
  if (args.if_missing) {
    // Resolving builds a missing image and unpacks it, and does nothing when both are done.
    auto ref = image::parse_image_ref(args.name, ".");
    if (!ref) return report_error(ref.error());
    if (ref->kind != image::ImageRef::Kind::Builtin)
      return report_error(Error::bad_input("\"" + args.name + "\" is not a built-in image name"));
    auto image = store().resolve(*ref, progress);
    if (!image) return report_error(image.error());
    std::cout << args.name << " " << image->digest << "\n";
    return 0;
  }
  auto digest = store().build(args.name, progress);
  if (!digest) return report_error(digest.error());
  std::cout << args.name << " " << *digest << "\n";
  return 0;
}

Result<check::ImageInspection> inspected(const std::string& text) {
  auto ref = image::parse_image_ref(text, ".");
  if (!ref) return std::move(ref).error();
  auto image = store().resolve(*ref, progress);
  if (!image) return std::move(image).error();
  return check::inspect_image(*image, image::default_cache_dir());
}

int diff(const ImageArgs& args) {
  auto before = inspected(args.name);
  if (!before) return report_error(before.error());
  auto after = inspected(args.other);
  if (!after) return report_error(after.error());
  const auto changes = check::diff_images(*before, *after);
  if (args.json)
    std::cout << check::to_json(changes).dump(2) << "\n";
  else
    check::print_diff(changes, std::cout);
  return 0;
}

int inspect(const ImageArgs& args) {
  auto inspection = inspected(args.name);
  if (!inspection) return report_error(inspection.error());
  if (args.json)
    std::cout << check::to_json(*inspection).dump(2) << "\n";
  else
    check::print_inspection(*inspection, std::cout);
  return 0;
}

}  // namespace

Command image_command() {
  return {"image", "Build, inspect and compare the images jobs run in", [](CLI::App& app) -> Action {
            auto args = std::make_shared<ImageArgs>();
            app.require_subcommand(1);
            auto* build_cmd =
                app.add_subcommand("build", "build a built-in image from its recipe, images/NAME.yaml");
            build_cmd->add_option("name", args->name, "the built-in image's name")->required();
            build_cmd->add_flag("--if-missing", args->if_missing, "only when it is not built and unpacked yet");
            auto* inspect_cmd = app.add_subcommand(
                "inspect", "what an image offers jobs: OS, Python, distributions, frameworks, CUDA, configuration");
            inspect_cmd->add_option("ref", args->name,
                                    "built-in name, docker-archive:PATH, oci:PATH[:TAG] or rootfs:PATH")
                ->required();
            inspect_cmd->add_flag("--json", args->json, "print JSON (schema preflight.image/v1)");
            auto* diff_cmd = app.add_subcommand(
                "diff", "what changed between two images that matters to jobs: Python, distributions, environment");
            diff_cmd->add_option("before", args->name, "the image jobs run on now")->required();
            diff_cmd->add_option("after", args->other, "the image they would move to")->required();
            diff_cmd->add_flag("--json", args->json, "print JSON (schema preflight.image-diff/v1)");
            return [args, inspect_cmd, diff_cmd] {
              if (inspect_cmd->parsed()) return inspect(*args);
              if (diff_cmd->parsed()) return diff(*args);
              return build(*args);
            };
          }};
}

}  // namespace preflight::cli
