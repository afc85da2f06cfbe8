#include "check/image_python.hpp"

#include <fmt/format.h>

#include <cstring>
#include <random>
#include <sstream>

#include "image/image_store.hpp"
#include "sandbox/run_folder.hpp"
#include "spec/seccomp_policy.hpp"
#include "util/text.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

// The sandbox of the image's python: nobody's ids, and bounds no check comes near.
constexpr unsigned kNobody = 65534;
constexpr std::uint64_t kMemoryBytes = 4ull << 30;
constexpr int kPids = 256;
constexpr std::chrono::minutes kTimeout{5};

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr int kMaxLinks = 40;  // as the kernel's limit on symlinks in one lookup

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  std::istringstream in(path);
  std::string part;
  while (std::getline(in, part, '/'))
    if (!part.empty() && part != ".") parts.push_back(part);
  return parts;
}

}  // namespace

std::optional<fs::path> resolve_in_root(const fs::path& root, const std::string& path) {
  std::vector<std::string> pending = components(path);
  std::reverse(pending.begin(), pending.end());
  std::vector<std::string> resolved;  // components below root, all existing
  int links = 0;
  while (!pending.empty()) {
    std::string part = pending.back();
    pending.pop_back();
    if (part == "..") {
      if (!resolved.empty()) resolved.pop_back();
      continue;
    }
    fs::path here = root;
    for (const auto& r : resolved) here /= r;
    here /= part;
    std::error_code ec;
    const auto status = fs::symlink_status(here, ec);
    if (ec || !fs::exists(status)) return std::nullopt;
    if (!fs::is_symlink(status)) {
      resolved.push_back(part);
      continue;
    }
    if (++links > kMaxLinks) return std::nullopt;
    const std::string target = fs::read_symlink(here, ec).string();
    if (ec) return std::nullopt;
    if (!target.empty() && target[0] == '/') resolved.clear();
    auto more = components(target);
    for (auto it = more.rbegin(); it != more.rend(); ++it) pending.push_back(*it);
  }
  fs::path result = root;
  for (const auto& r : resolved) result /= r;
  return result;
}

std::optional<ImagePython> ImagePython::find(const fs::path& rootfs, const std::vector<std::string>& env,
                                             sandbox::ContainerRuntime& runtime) {
  std::string search_path = kDefaultPath;
  for (const auto& entry : env)
    if (entry.rfind("PATH=", 0) == 0) search_path = entry.substr(5);
  std::vector<std::string> dirs;
  std::istringstream path_list(search_path);
  for (std::string dir; std::getline(path_list, dir, ':');)
    if (!dir.empty() && dir[0] == '/') dirs.push_back(dir);
  for (const char* name : {"python3", "python"}) {
    for (const auto& dir : dirs) {
      const std::string candidate = dir + "/" + name;
      auto host = resolve_in_root(rootfs, candidate);
      std::error_code ec;
      if (host && fs::is_regular_file(*host, ec)) return ImagePython(rootfs, candidate, search_path, runtime);
    }
  }
  return std::nullopt;
}

Result<PythonRun> ImagePython::run(const std::string& program, const std::string& input,
                                   bool with_site) const {
  // The image's interpreter, its sitecustomize and .pth files are the image's code: they run
  // in a container like the job's (docs/security.md), as nobody, without network, over an
  // overlay so that the cached root is never written, in a folder of its own that goes after.
  std::random_device random;
  const std::string id = fmt::format("check-{:08x}", random());
  const fs::path checks = image::default_cache_dir() / "checks";
  sandbox::reap_abandoned(checks, 0);
  auto folder = sandbox::RunFolder::create(checks / id);
  if (!folder) return std::move(folder).error();
  const fs::path dir = folder->path();
  struct Remove {
    fs::path dir;
    ~Remove() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove{dir};
  plan::RunPlan plan;
  plan.job_name = plan.job_id = id;
  plan.container_id = "preflight-" + id;
  plan.hostname = "preflight-check";
  plan.run_dir = dir;
  plan.process.args = {path_, "-I", "-B"};
  if (!with_site) plan.process.args.push_back("-S");
  plan.process.args.insert(plan.process.args.end(), {"-c", program});
  plan.process.env = {"PATH=" + search_path_, "LANG=C.UTF-8"};
  plan.process.cwd = "/";
  plan.process.uid = plan.process.gid = kNobody;
  plan.limits.memory_bytes = kMemoryBytes;
  plan.limits.pids = kPids;
  plan.timeout = kTimeout;
  plan.harness = false;
  auto seccomp = spec::load_seccomp_policy(spec::kFloorSeccompPolicy, spec::shipped_seccomp_dir());
  if (!seccomp) return std::move(seccomp).error();
  plan.seccomp = std::move(*seccomp);
  plan.stdin_file = dir / "input";
  plan.files.push_back({plan.stdin_file, input});

  PythonRun run;
  bool cut = false;
  auto exit = runtime_->run(
      plan, rootfs_,
      [&](model::OutputLine::Stream stream, std::string_view line) {
        std::string& to = stream == model::OutputLine::Stream::Stdout ? run.out : run.err;
        if (to.size() + line.size() >= kMaxReadBytes) return static_cast<void>(cut = true);
        to.append(line).push_back('\n');
      },
      kMaxReadBytes);
  if (!exit) return std::move(exit).error().context("running the image's python");
  if (exit->interrupted_by)
    return Error{ErrorKind::Interrupted,
                 fmt::format("interrupted by {} while the image's python ran; its container was removed",
                             strsignal(exit->interrupted_by)),
                 {}};
  if (exit->timed_out)
    return Error::runtime(fmt::format("the image's python did not finish within {} s",
                                      std::chrono::duration_cast<std::chrono::seconds>(kTimeout).count()));
  if (cut) return Error::runtime("the image's python printed more than " + human_size(kMaxReadBytes));
  run.exit_code = exit->exit_code;
  return run;
}

}  // namespace preflight::check
