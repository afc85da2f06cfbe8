// Checks the manifests of `preflight export k8s` against the Kubernetes API's published schema
// (kubernetes-models, generated from the API's OpenAPI document; offline): every document of
// the YAML stream must be a ConfigMap, a NetworkPolicy or a batch/v1 Job, and valid as one.
// With --pods FILE it also writes, for a stand-in kubelet (tests/integration/k8s.sh), each pod
// the Jobs would make: the Job, its index (JOB_COMPLETION_INDEX), the image and user, and each
// container, init containers first, with its command, environment and volume mounts, their
// volumes resolved.
// Usage: node k8s_check.mjs MANIFEST.yaml [--pods FILE]
// Exit 0 when every document is valid, 1 with the problems named, 2 on bad usage.
import { readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Job } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";

const kinds = {
  "v1/ConfigMap": ConfigMap,
  "batch/v1/Job": Job,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

const args = process.argv.slice(2);
const manifest = args[0];
const podsAt = args.indexOf("--pods");
if (!manifest || (podsAt >= 0 && !args[podsAt + 1])) {
  console.error("usage: node k8s_check.mjs MANIFEST.yaml [--pods FILE]");
  process.exit(2);
}

const problems = [];
const documents = [];
for (const document of parseAllDocuments(readFileSync(manifest, "utf8"))) {
  if (document.errors.length) {
    problems.push(...document.errors.map((e) => `YAML: ${e.message}`));
    continue;
  }
  const object = document.toJS();
  if (object === null) continue;
  const kind = `${object.apiVersion}/${object.kind}`;
  const name = object.metadata?.name ?? "(no name)";
  const Model = kinds[kind];
  if (!Model) {
    problems.push(`${kind} ${name}: not a kind preflight export k8s writes`);
    continue;
  }
  try {
    new Model(object).validate();
    console.log(`ok: ${object.kind} ${name}`);
    documents.push(object);
  } catch (error) {
    problems.push(`${object.kind} ${name}: ${error.message}`);
  }
}

if (podsAt >= 0) {
  const configMaps = Object.fromEntries(
    documents.filter((d) => d.kind === "ConfigMap").map((d) => [d.metadata.name, d.data ?? {}]),
  );
  const pods = [];
  for (const job of documents.filter((d) => d.kind === "Job")) {
    const spec = job.spec.template.spec;
    const volumes = Object.fromEntries(spec.volumes.map((v) => [v.name, v]));
    const describe = (container) => ({
      name: container.name,
      readOnlyRoot: Boolean(container.securityContext?.readOnlyRootFilesystem),
      args: [...container.command, ...container.args],
      env: container.env.map((e) => `${e.name}=${e.value}`),
      mounts: container.volumeMounts.map((mount) => {
        const volume = volumes[mount.name];
        if (!volume) problems.push(`Job ${job.metadata.name}: volumeMount ${mount.name} names no volume`);
        const kind = volume?.emptyDir ? "emptyDir" : volume?.persistentVolumeClaim ? "claim" : "configMap";
        return {
          volume: mount.name,
          path: mount.mountPath,
          kind,
          readOnly: Boolean(mount.readOnly),
          subPath: mount.subPath ?? "",
          data: kind === "configMap" ? configMaps[volume.configMap.name] : undefined,
        };
      }),
    });
    for (let index = 0; index < job.spec.completions; index++) {
      pods.push({
        job: job.metadata.name,
        index,
        image: job.metadata.annotations?.["preflight.dev/image"] ?? "",
        uid: spec.securityContext.runAsUser,
        gid: spec.securityContext.runAsGroup,
        // The init containers first, in order, then the job's container.
        containers: [...(spec.initContainers ?? []), ...spec.containers].map(describe),
      });
    }
  }
  writeFileSync(args[podsAt + 1], JSON.stringify(pods, null, 1));
}

for (const problem of problems) console.log(`problem: ${problem}`);
process.exit(problems.length ? 1 : 0);
