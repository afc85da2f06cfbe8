#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "image/image_store.hpp"
#include "util/data_dir.hpp"

namespace preflight::cli {
namespace {

struct BuildArgs {
  std::string name;
  bool if_missing = false;
};

int build(const BuildArgs& args) {
  image::ImageStore store(image::default_cache_dir(), data_dir() / "images");
  auto progress = [](const std::string& line) { std::cerr << "preflight: " << line << "\n"; };
  if (args.if_missing) {
    // Resolving builds a missing image and unpacks it, and does nothing when both are done.
    auto ref = image::parse_image_ref(args.name, ".");
    if (!ref) return report_error(ref.error());
    if (ref->kind != image::ImageRef::Kind::Builtin)
      return report_error(Error::bad_input("\"" + args.name + "\" is not a built-in image name"));
    auto image = store.resolve(*ref, progress);
    if (!image) return report_error(image.error());
    std::cout << args.name << " " << image->digest << "\n";
    return 0;
  }
  auto digest = store.build(args.name, progress);
  if (!digest) return report_error(digest.error());
  std::cout << args.name << " " << *digest << "\n";
  return 0;
}

}  // namespace

Command image_command() {
  return {"image", "Build and manage the images jobs run in", [](CLI::App& app) -> Action {
            auto args = std::make_shared<BuildArgs>();
            app.require_subcommand(1);
            auto* sub =
                app.add_subcommand("build", "build a built-in image from its recipe, images/NAME.yaml");
            sub->add_option("name", args->name, "the built-in image's name")->required();
            sub->add_flag("--if-missing", args->if_missing, "only when it is not built and unpacked yet");
            return [args] { return build(*args); };
          }};
}

}  // namespace preflight::cli
