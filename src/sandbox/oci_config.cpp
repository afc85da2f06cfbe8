#include "sandbox/oci_config.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace {

using nlohmann::json;

json mount(const std::string& destination, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return {{"destination", destination}, {"type", type}, {"source", source}, {"options", options}};
}

// /sys: a sysfs of the container's own network namespace. Without root on the host, a container
// that shares the host's network (--network) may not mount one, so it gets the host's /sys
// bound read-only, every mount below it too, as rootless Podman does for --network=host.
json sys_mount(const plan::RunPlan& plan, bool host_root) {
  if (plan.network && !host_root)
    return mount("/sys", "bind", "/sys", {"rbind", "rro", "nosuid", "noexec", "nodev"});
  return mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"});
}

// The kernel file systems every container has, as runc's own default spec lays them out.
json system_mounts(const plan::RunPlan& plan, bool host_root) {
  json mounts = json::array();
  mounts.push_back(mount("/proc", "proc", "proc", {}));
  mounts.push_back(mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}));
  mounts.push_back(mount("/dev/pts", "devpts", "devpts",
                         {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}));
  mounts.push_back(
      mount("/dev/shm", "tmpfs", "shm",
            {"nosuid", "noexec", "nodev", "mode=1777", "size=" + std::to_string(plan.limits.shm_bytes)}));
  mounts.push_back(mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}));
  mounts.push_back(sys_mount(plan, host_root));
  return mounts;
}

json plan_mount(const plan::MountPlan& m) {
  std::vector<std::string> options{"rbind", "nosuid", "nodev", m.read_only ? "ro" : "rw"};
  return mount(m.destination, "bind", m.bound_source().string(), options);
}

json resources(const plan::RunPlan& plan) {
  json r = json::object();
  if (plan.limits.memory_bytes > 0) {
    // Swap is part of the limit, as on platforms that run without swap.
    r["memory"] = {{"limit", plan.limits.memory_bytes}, {"swap", plan.limits.memory_bytes}};
  }
  if (plan.limits.pids > 0) r["pids"] = {{"limit", plan.limits.pids}};
  if (plan.limits.cpus > 0) {
    constexpr long period = 100000;
    r["cpu"] = {{"period", period}, {"quota", static_cast<long>(plan.limits.cpus * period)}};
  }
  return r;
}

// The host's own system-call ABI, in libseccomp's name.
const char* native_abi() {
#if defined(__x86_64__)
  return "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
  return "SCMP_ARCH_AARCH64";
#else
  return nullptr;  // libseccomp's native one
#endif
}

// The host's ABI first, then `compat` (no name twice). A call of any other ABI meets
// libseccomp's bad-architecture action and kills the thread: nothing slips past by ABI.
json seccomp_architectures(const std::vector<std::string>& compat) {
  json names = json::array();
  if (native_abi() == nullptr) return names;
  names.push_back(native_abi());
  for (const std::string& name : compat)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

// A condition as runtime-spec argument tests, one list per filter rule: the rules of a call
// are alternatives, while the tests of one rule must all hold, so "any bit" and "one of" become
// one rule per bit or value, and "no bit" a single masked comparison with zero.
std::vector<json> argument_tests(const spec::SeccompCondition& when) {
  const auto masked = [&](std::uint64_t mask, std::uint64_t value) {
    return json::array(
        {{{"index", when.arg}, {"value", mask}, {"valueTwo", value}, {"op", "SCMP_CMP_MASKED_EQ"}}});
  };
  std::vector<json> alternatives;
  switch (when.test) {
    case spec::SeccompCondition::Test::AnyBit:
      for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
        if ((when.mask & bit) != 0) alternatives.push_back(masked(bit, bit));
      break;
    case spec::SeccompCondition::Test::NoBit:
      alternatives.push_back(masked(when.mask, 0));
      break;
    case spec::SeccompCondition::Test::OneOf:
      for (const std::uint64_t value : when.values)
        alternatives.push_back(json::array({{{"index", when.arg}, {"value", value}, {"op", "SCMP_CMP_EQ"}}}));
      break;
  }
  return alternatives;
}

// The policy as runc takes it (runtime-spec "Seccomp"): an allow list whose other calls fail
// with the policy's error, or every call allowed but the refused ones.
json seccomp(const spec::SeccompPolicy& policy, const std::vector<std::string>& compat_abis) {
  json syscalls = json::array();
  for (const spec::SeccompRule& rule : policy.rules) {
    json entry = {{"names", rule.syscalls}};
    if (rule.allow) {
      entry["action"] = "SCMP_ACT_ALLOW";
    } else {
      entry["action"] = "SCMP_ACT_ERRNO";
      entry["errnoRet"] = rule.errno_value;
    }
    if (!rule.when) {
      syscalls.push_back(entry);
      continue;
    }
    for (json& tests : argument_tests(*rule.when)) {
      entry["args"] = std::move(tests);
      syscalls.push_back(entry);
    }
  }
  json filter = {{"defaultAction", "SCMP_ACT_ALLOW"},
                 {"architectures", seccomp_architectures(compat_abis)},
                 {"syscalls", syscalls}};
  if (policy.otherwise_errno) {
    filter["defaultAction"] = "SCMP_ACT_ERRNO";
    filter["defaultErrnoRet"] = *policy.otherwise_errno;
  }
  return filter;
}

}  // namespace

std::vector<std::string> compat_abis_of_image(const std::filesystem::path& rootfs) {
  std::vector<std::string> names;
  auto root = open_folder(rootfs);
  if (!root) return names;
  for (const plan::CompatAbi& abi : plan::compat_abi_loaders()) {
    if (std::find(names.begin(), names.end(), abi.name) != names.end()) continue;
    if (open_below(root->get(), abi.loader, O_PATH, Links::InRoot)) names.emplace_back(abi.name);
  }
  return names;
}

std::vector<std::string> unenforced_limits(const spec::ResourceLimits& limits) {
  constexpr const char* kWhy =
      "is not enforced: Preflight runs without root and has no cgroup to set it in (docs/rootless.md)";
  std::vector<std::string> notes;
  if (limits.memory_bytes > 0)
    notes.push_back(
        fmt::format("the platform's memory limit of {} {}", human_size(limits.memory_bytes), kWhy));
  if (limits.pids > 0)
    notes.push_back(fmt::format("the platform's limit of {} processes {}", limits.pids, kWhy));
  if (limits.cpus > 0)
    notes.push_back(fmt::format("the platform's limit of {:g} CPUs {}", limits.cpus, kWhy));
  return notes;
}

json make_oci_config(const plan::RunPlan& plan, const std::filesystem::path& rootfs,
                     const std::optional<std::string>& cgroup_path) {
  json mounts = system_mounts(plan, cgroup_path.has_value());  // only root on the host has a cgroup
  for (const auto& m : plan.mounts) mounts.push_back(plan_mount(m));

  json namespaces =
      json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}});
  if (!plan.network) namespaces.push_back({{"type", "network"}});

  json capabilities = {{"bounding", json::array()},
                       {"effective", json::array()},
                       {"permitted", json::array()},
                       {"inheritable", json::array()},
                       {"ambient", json::array()}};
  json linux_section = {
      {"namespaces", namespaces},
      {"maskedPaths",
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}};
  if (!plan.seccomp.rules.empty()) linux_section["seccomp"] = seccomp(plan.seccomp, plan.seccomp_abis);
  if (cgroup_path) {
    linux_section["cgroupsPath"] = *cgroup_path;
    linux_section["resources"] = resources(plan);
  }
  return {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", plan.process.uid}, {"gid", plan.process.gid}}},
        {"args", plan.process.args},
        {"env", plan.process.env},
        {"cwd", plan.process.cwd},
        {"capabilities", capabilities},
        {"noNewPrivileges", true}}},
      {"root", {{"path", rootfs.string()}, {"readonly", false}}},
      {"hostname", plan.hostname},
      {"mounts", mounts},
      {"linux", linux_section},
  };
}

}  // namespace preflight::sandbox
