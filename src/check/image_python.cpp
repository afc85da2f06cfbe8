#include "check/image_python.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/process.hpp>
#include <future>
#include <sstream>

namespace preflight::check {
namespace fs = std::filesystem;
namespace bp = boost::process;

namespace {

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

std::optional<ImagePython> ImagePython::find(const fs::path& rootfs, const std::vector<std::string>& env) {
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
      if (host && fs::is_regular_file(*host, ec)) return ImagePython(rootfs, candidate, search_path);
    }
  }
  return std::nullopt;
}

Result<PythonRun> ImagePython::run(const std::string& program, const std::string& input,
                                   bool with_site) const {
  const auto unshare = bp::search_path("unshare");
  if (unshare.empty())
    return Error::runtime("unshare not found: install util-linux (apt-get install util-linux)");
  std::vector<std::string> args;
  if (::geteuid() != 0) args.push_back("--map-root-user");  // a user namespace lets us chroot
  args.insert(args.end(), {"--root=" + rootfs_.string(), path_, "-I", "-B"});
  if (!with_site) args.push_back("-S");
  args.insert(args.end(), {"-c", program});
  bp::environment env;
  env["PATH"] = search_path_;
  env["LANG"] = "C.UTF-8";
  PythonRun run;
  try {
    boost::asio::io_context io;
    std::future<std::string> out, err;
    bp::child child(unshare, bp::args(args), bp::std_in<boost::asio::buffer(input), bp::std_out> out,
                    bp::std_err > err, env, io);
    io.run();
    child.wait();
    run.exit_code = child.exit_code();
    run.out = out.get();
    run.err = err.get();
  } catch (const bp::process_error& e) {
    return Error::runtime(std::string("cannot run the image's python: ") + e.what());
  }
  return run;
}

}  // namespace preflight::check
