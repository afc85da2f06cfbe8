#include "pipeline/export_k8s.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/process.hpp>
#include <cmath>
#include <sstream>

#include "plan/run_plan.hpp"
#include "util/data_dir.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;
using Kind = model::MountFact::Kind;

// Where the pods keep Preflight's cache (the run folders): an emptyDir of its own.
constexpr const char* kPodCache = "/var/cache/preflight";
// Where the ConfigMap of the job lists is mounted: key job-G-I is group G's job I.
constexpr const char* kPodJobs = "/etc/preflight/jobs";
// What a dry run is given when the platform's limit is larger: a request, not a limit.
constexpr std::uint64_t kRequestMemory = 4ull << 30;
// Retries of an index that failed with exit 3 (Preflight could not run it).
constexpr int kRetriesPerIndex = 2;

// `path` is `folder` or below it.
bool within(const fs::path& path, const fs::path& folder) {
  const auto relative = path.lexically_normal().lexically_relative(folder.lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

// A Kubernetes quantity of bytes: whole GiB or MiB when it is one.
std::string bytes_quantity(std::uint64_t bytes) {
  if (bytes % (1ull << 30) == 0) return fmt::format("{}Gi", bytes >> 30);
  if (bytes % (1ull << 20) == 0) return fmt::format("{}Mi", bytes >> 20);
  return std::to_string(bytes);
}

std::string cpu_quantity(double cpus) {
  const auto milli = static_cast<long>(std::lround(cpus * 1000));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : fmt::format("{}m", milli);
}

bool dns_label(const std::string& name) {
  if (name.empty() || name.size() > 63 || !std::isalnum(static_cast<unsigned char>(name.front())) ||
      !std::isalnum(static_cast<unsigned char>(name.back())))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

YAML::Node labels(const K8sExport& batch) {
  YAML::Node node;
  node["app.kubernetes.io/name"] = "preflight";
  node["app.kubernetes.io/instance"] = batch.name;
  return node;
}

// An object of the export: its kind, its name, the export's labels.
YAML::Node object(const K8sExport& batch, const char* api_version, const char* kind,
                  const std::string& name) {
  YAML::Node node;
  node["apiVersion"] = api_version;
  node["kind"] = kind;
  node["metadata"]["name"] = name;
  node["metadata"]["labels"] = labels(batch);
  return node;
}

YAML::Node config_map(const K8sExport& batch) {
  YAML::Node map = object(batch, "v1", "ConfigMap", batch.name + "-jobs");
  for (std::size_t g = 0; g < batch.groups.size(); ++g)
    for (std::size_t i = 0; i < batch.groups[g].jobs.size(); ++i)
      map["data"][fmt::format("job-{}-{}", g, i)] = batch.groups[g].jobs[i].string() + "\n";
  return map;
}

// Selects the export's pods and allows them nothing, in or out: the platform has no network.
YAML::Node network_policy(const K8sExport& batch) {
  YAML::Node policy = object(batch, "networking.k8s.io/v1", "NetworkPolicy", batch.name + "-no-network");
  policy["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] = batch.name;
  policy["spec"]["policyTypes"].push_back("Ingress");
  policy["spec"]["policyTypes"].push_back("Egress");
  return policy;
}

YAML::Node exit_codes(std::initializer_list<int> codes) {
  YAML::Node node;
  node["containerName"] = "preflight";
  node["operator"] = "In";
  for (const int code : codes) node["values"].push_back(code);
  node["values"].SetStyle(YAML::EmitterStyle::Flow);
  return node;
}

YAML::Node failure_policy() {
  YAML::Node rules;
  YAML::Node disruption;  // the pod was evicted or preempted: not the job's doing
  disruption["action"] = "Ignore";
  YAML::Node condition;
  condition["type"] = "DisruptionTarget";
  disruption["onPodConditions"].push_back(condition);
  rules.push_back(disruption);
  YAML::Node verdict;  // predicted to fail (1), bad input (2): the same again
  verdict["action"] = "FailIndex";
  verdict["onExitCodes"] = exit_codes({1, 2});
  rules.push_back(verdict);
  YAML::Node infrastructure;  // Preflight could not run it: worth another try
  infrastructure["action"] = "Count";
  infrastructure["onExitCodes"] = exit_codes({3});
  rules.push_back(infrastructure);
  YAML::Node policy;
  policy["rules"] = rules;
  return policy;
}

YAML::Node resources(const spec::ResourceLimits& limits) {
  YAML::Node node(YAML::NodeType::Map);
  if (limits.memory_bytes) {
    node["limits"]["memory"] = bytes_quantity(limits.memory_bytes);
    node["requests"]["memory"] = bytes_quantity(std::min(limits.memory_bytes, kRequestMemory));
  }
  if (limits.cpus > 0) {
    node["limits"]["cpu"] = cpu_quantity(limits.cpus);
    node["requests"]["cpu"] = cpu_quantity(std::min(limits.cpus, 1.0));
  }
  if (limits.disk_bytes) node["limits"]["ephemeral-storage"] = bytes_quantity(limits.disk_bytes);
  return node;
}

YAML::Node volume_mount(const std::string& name, const std::string& path, bool read_only,
                        const std::string& sub_path = "") {
  YAML::Node mount;
  mount["name"] = name;
  mount["mountPath"] = path;
  if (!sub_path.empty()) mount["subPath"] = sub_path;
  if (read_only) mount["readOnly"] = true;
  return mount;
}

YAML::Node empty_dir(const std::string& name) {
  YAML::Node volume;
  volume["name"] = name;
  volume["emptyDir"] = YAML::Node(YAML::NodeType::Map);
  volume["emptyDir"].SetStyle(YAML::EmitterStyle::Flow);
  return volume;
}

// The shell line that reads the pod's job from the ConfigMap (the image's /bin/sh, whose
// builtins alone it uses: the job's launcher needs /bin/sh as it is) and runs preflight on it,
// `report` naming its report.json.
std::string pod_script(std::size_t group, bool report) {
  std::string script = fmt::format(
      "read -r job < \"{}/job-{}-$JOB_COMPLETION_INDEX\" || exit 2; exec \"$@\" \"$job\"", kPodJobs, group);
  if (report) script += fmt::format(" --json \"$PREFLIGHT_REPORTS/{}-$JOB_COMPLETION_INDEX.json\"", group);
  return script;
}

// The job's container ("preflight"), or its init container ("stage"), which fills the places
// the job only reads and may write them.
YAML::Node container(const K8sExport& batch, std::size_t g, bool init) {
  const PodGroup& group = batch.groups[g];
  YAML::Node node;
  node["name"] = init ? "stage" : "preflight";
  node["image"] = group.image;
  node["command"].push_back("/bin/sh");
  node["command"].push_back("-c");
  node["command"].push_back(pod_script(g, !init));
  node["command"].push_back("preflight");
  for (const std::string& arg :
       {(batch.bundle / "lib" / batch.loader).string(), std::string("--library-path"),
        (batch.bundle / "lib").string(), (batch.bundle / "bin" / "preflight").string(), std::string("run"),
        std::string("--in-pod"), std::string("-q")})
    node["args"].push_back(arg);
  if (init) node["args"].push_back("--stage");
  if (!batch.platform.empty()) {
    node["args"].push_back("--platform");
    node["args"].push_back(batch.platform);
  }
  for (const std::string& arg : batch.read_args) node["args"].push_back(arg);
  const auto env = [&](const std::string& name, const std::string& value) {
    YAML::Node entry;
    entry["name"] = name;
    entry["value"] = value;
    node["env"].push_back(entry);
  };
  env("PREFLIGHT_DATA_DIR", (batch.bundle / "data").string());
  env("PREFLIGHT_CACHE", kPodCache);
  if (!init) env("PREFLIGHT_REPORTS", (batch.out / "reports").string());
  node["securityContext"]["readOnlyRootFilesystem"] = true;
  node["securityContext"]["allowPrivilegeEscalation"] = false;
  node["securityContext"]["capabilities"]["drop"].push_back("ALL");
  if (auto limits = resources(group.needs.limits); limits.size() > 0) node["resources"] = limits;
  node["volumeMounts"].push_back(volume_mount("shared", batch.mount.string(), true));
  if (!init) {
    const std::string reports = (batch.out / "reports").lexically_relative(batch.mount).string();
    node["volumeMounts"].push_back(volume_mount("shared", (batch.out / "reports").string(), false, reports));
  }
  node["volumeMounts"].push_back(volume_mount("jobs", kPodJobs, true));
  node["volumeMounts"].push_back(volume_mount("preflight-cache", kPodCache, false));
  for (std::size_t p = 0; p < group.needs.places.size(); ++p) {
    const PodPlace& place = group.needs.places[p];
    node["volumeMounts"].push_back(
        volume_mount(fmt::format("place-{}", p), place.path, !init && place.read_only));
  }
  return node;
}

YAML::Node indexed_job(const K8sExport& batch, std::size_t g) {
  const PodGroup& group = batch.groups[g];
  const int count = static_cast<int>(group.jobs.size());
  YAML::Node job = object(batch, "batch/v1", "Job", fmt::format("{}-{}", batch.name, g));
  if (!batch.queue.empty()) job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = batch.queue;
  job["metadata"]["annotations"]["preflight.dev/image"] = group.shown;
  YAML::Node spec;
  spec["completionMode"] = "Indexed";
  spec["completions"] = count;
  spec["parallelism"] = std::clamp(batch.parallel, 1, count);
  spec["backoffLimitPerIndex"] = kRetriesPerIndex;
  spec["maxFailedIndexes"] = count;
  spec["podFailurePolicy"] = failure_policy();
  YAML::Node pod;
  pod["metadata"]["labels"] = labels(batch);
  pod["spec"]["restartPolicy"] = "Never";
  pod["spec"]["enableServiceLinks"] = false;
  pod["spec"]["automountServiceAccountToken"] = false;
  YAML::Node security;
  security["runAsUser"] = group.needs.uid;
  security["runAsGroup"] = group.needs.gid;
  if (group.needs.uid != 0) security["runAsNonRoot"] = true;
  security["fsGroup"] = group.needs.gid;
  security["seccompProfile"]["type"] = "RuntimeDefault";
  pod["spec"]["securityContext"] = security;
  if (std::any_of(group.needs.places.begin(), group.needs.places.end(),
                  [](auto& place) { return place.read_only; }))
    pod["spec"]["initContainers"].push_back(container(batch, g, true));
  pod["spec"]["containers"].push_back(container(batch, g, false));
  YAML::Node shared;
  shared["name"] = "shared";
  shared["persistentVolumeClaim"]["claimName"] = batch.claim;
  pod["spec"]["volumes"].push_back(shared);
  YAML::Node jobs;
  jobs["name"] = "jobs";
  jobs["configMap"]["name"] = batch.name + "-jobs";
  pod["spec"]["volumes"].push_back(jobs);
  pod["spec"]["volumes"].push_back(empty_dir("preflight-cache"));
  for (std::size_t p = 0; p < group.needs.places.size(); ++p)
    pod["spec"]["volumes"].push_back(empty_dir(fmt::format("place-{}", p)));
  spec["template"] = pod;
  job["spec"] = spec;
  return job;
}

std::string emit(const std::vector<YAML::Node>& documents, const K8sExport& batch) {
  YAML::Emitter out;
  out.SetIndent(2);
  for (const auto& document : documents) out << YAML::BeginDoc << document;
  std::size_t jobs = 0;
  for (const auto& group : batch.groups) jobs += group.jobs.size();
  return fmt::format(
             "# Preflight's dry runs of {} job(s) on Kubernetes, written by `preflight export k8s`.\n"
             "#   apply:   kubectl apply -f {}\n"
             "#   collect: preflight collect {}\n"
             "# Job {}-G's pod I runs `preflight run --in-pod` on the ConfigMap's job-G-I, in the job's\n"
             "# image as the platform's user, and writes reports/G-I.json; its exit status is preflight's.\n",
             jobs, quote_shell_word((batch.out / "preflight.yaml").string()),
             quote_shell_word((batch.out / "reports").string()), batch.name) +
         out.c_str() + "\n";
}

}  // namespace

Result<std::string> write_bundle(const fs::path& bundle, const fs::path& preflight, const fs::path& data) {
  std::string listed;
  try {
    bp::ipstream out;
    bp::child ldd(bp::search_path("ldd"), preflight.string(), bp::std_in<bp::null, bp::std_out> out,
                  bp::std_err > bp::null);
    for (std::string line; std::getline(out, line);) listed += line + "\n";
    ldd.wait();
    if (ldd.exit_code() != 0) return Error::runtime("ldd " + preflight.string() + " failed: " + listed);
  } catch (const bp::process_error& e) {
    return Error::runtime(std::string("cannot list preflight's libraries with ldd: ") + e.what());
  }
  std::error_code ec;
  for (const char* folder : {"bin", "lib", "data"}) fs::create_directories(bundle / folder, ec);
  std::string loader;
  const auto copy = [&](const fs::path& from, const fs::path& to) -> Status {
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (ec)
      return Error::runtime(
          fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
    return Ok{};
  };
  // "libfmt.so.9 => /lib/x86_64-linux-gnu/libfmt.so.9 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)"
  std::istringstream lines(listed);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, arrow, target;
    words >> first >> arrow >> target;
    fs::path library;
    if (arrow == "=>" && target.starts_with("/")) {
      library = target;
    } else if (first.starts_with("/")) {  // the loader, named by its own path
      library = first;
      loader = library.filename().string();
    }
    if (library.empty()) continue;
    if (auto status = copy(fs::canonical(library, ec), bundle / "lib" / library.filename()); !status)
      return status.error();
  }
  if (loader.empty())
    return Error::runtime("ldd names no loader for " + preflight.string() + ": is it static?");
  if (auto status = copy(preflight, bundle / "bin" / "preflight"); !status) return status.error();
  for (const char* folder : {"policies", "emulator"})
    if (auto status = copy(data / folder, bundle / "data" / folder); !status) return status.error();
  return loader;
}

Result<PodNeeds> pod_needs(const JobContext& context) {
  plan::PlanContext plan_context;
  plan_context.job_id = "export";
  plan_context.run_dir = "/nonexistent/preflight-export";
  plan_context.emulator_dir = data_dir() / "emulator";
  auto plan = plan::make_plan(context.job, context.profile, context.image.config, plan_context);
  if (!plan) return std::move(plan).error();
  std::vector<PodPlace> places;
  std::vector<fs::path> reads;
  for (const auto& mount : plan->mounts) {
    if (mount.kind == Kind::PlatformFile) {
      // Kubernetes writes the pod's own /etc/hosts; another file goes into a folder of its own.
      if (mount.destination != "/etc/hosts")
        places.push_back({fs::path(mount.destination).parent_path().string(), mount.read_only});
      continue;
    }
    places.push_back({mount.destination, mount.read_only});
    if (mount.kind == Kind::Code || mount.kind == Kind::Input) reads.push_back(mount.source);
  }
  for (const auto& dir : plan->user_dirs) places.push_back({dir.path, false});
  for (auto& place : places) place.path = fs::path(place.path).lexically_normal().string();
  std::sort(places.begin(), places.end());
  places.erase(std::unique(places.begin(), places.end()), places.end());
  return PodNeeds{plan->process.uid, plan->process.gid, std::move(places), plan->limits, std::move(reads)};
}

void add_to_group(std::vector<PodGroup>& groups, const std::string& image, const std::string& shown,
                  const PodNeeds& needs, const fs::path& job) {
  const auto conflict = [](const std::vector<PodPlace>& a, const std::vector<PodPlace>& b) {
    return std::any_of(a.begin(), a.end(), [&](const PodPlace& place) {
      return std::any_of(b.begin(), b.end(), [&](const PodPlace& other) {
        return other.path == place.path && other.read_only != place.read_only;
      });
    });
  };
  auto same = [&](const PodGroup& group) {
    const auto& a = group.needs.limits;
    const auto& b = needs.limits;
    return group.image == image && group.needs.uid == needs.uid && group.needs.gid == needs.gid &&
           a.memory_bytes == b.memory_bytes && a.cpus == b.cpus && a.disk_bytes == b.disk_bytes &&
           !conflict(group.needs.places, needs.places);
  };
  auto group = std::find_if(groups.begin(), groups.end(), same);
  if (group == groups.end())
    group =
        groups.insert(groups.end(), PodGroup{image, shown, {needs.uid, needs.gid, {}, needs.limits, {}}, {}});
  group->jobs.push_back(job);
  group->needs.reads.insert(group->needs.reads.end(), needs.reads.begin(), needs.reads.end());
  auto& places = group->needs.places;
  places.insert(places.end(), needs.places.begin(), needs.places.end());
  std::sort(places.begin(), places.end());
  places.erase(std::unique(places.begin(), places.end()), places.end());
}

Status check_k8s_export(const K8sExport& batch) {
  if (batch.groups.empty()) return Error::bad_input("no job to export");
  if (!dns_label(batch.name + "-jobs") || batch.name.size() > 40)
    return Error::bad_input(fmt::format(
        "--name {}: Kubernetes names its objects with lower-case letters, digits and '-', beginning "
        "with a letter or digit; choose one of at most 40 of them",
        quote_shell_word(batch.name)));
  const auto below_mount = [&](const fs::path& path, const std::string& what) -> Status {
    if (path.string().find('\n') != std::string::npos)
      return Error::bad_input(what + ": its path holds a line break, which the pod's job list cannot hold");
    if (!within(path, batch.mount) && path != batch.mount)
      return Error::bad_input(fmt::format(
          "{} {} is not below --mount {}: the pods see only the volume claim {}, mounted there; put it "
          "on that volume",
          what, quote_shell_word(path.string()), quote_shell_word(batch.mount.string()), batch.claim));
    return Ok{};
  };
  if (batch.mount == batch.mount.root_path())
    return Error::bad_input(
        "--mount " + batch.mount.string() +
        ": a pod cannot mount a volume over its root; give the folder the claim's volume is");
  if (auto status = below_mount(batch.out, "the export folder (--out)"); !status) return status;
  if (batch.platform.find('/') != std::string::npos)
    if (auto status = below_mount(batch.platform, "the platform file (--platform)"); !status) return status;
  if (auto status = below_mount(batch.bundle, "Preflight's bundle"); !status) return status;
  for (const auto& group : batch.groups) {
    for (const fs::path& job : group.jobs)
      if (auto status = below_mount(job, "job"); !status) return status;
    for (const fs::path& read : group.needs.reads)
      if (auto status = below_mount(read, "a job's code or input"); !status) return status;
  }
  return Ok{};
}

Result<std::vector<ExportedFile>> export_k8s(const K8sExport& batch) {
  if (auto checked = check_k8s_export(batch); !checked) return std::move(checked).error();
  std::vector<YAML::Node> documents = {config_map(batch), network_policy(batch)};
  for (std::size_t g = 0; g < batch.groups.size(); ++g) documents.push_back(indexed_job(batch, g));
  return std::vector<ExportedFile>{{"preflight.yaml", emit(documents, batch)}};
}

}  // namespace preflight::pipeline
