// Checks Preflight's GitHub Action (action.yml) and runs its steps as GitHub's runner would run
// a composite action, on this machine (tests/integration/action.sh).
//   node action_check.mjs validate ACTION.yml [DOC.md...]
//     action.yml against GitHub's action schema, and each workflow of the docs (a ```yaml
//     block that begins with "# .github/workflows/") against the workflow schema
//     (@action-validator/core: SchemaStore's schemas, offline).
//   node action_check.mjs steps ACTION.yml INPUTS.json RESULT.json
//     runs the steps in order: a `run` step under bash with its `env` expanded, GITHUB_OUTPUT,
//     GITHUB_STEP_SUMMARY and GITHUB_ACTION_PATH as the runner sets them; a `uses` step (the
//     cache, the artifact upload) is recorded with its `with` expanded, not run. INPUTS.json:
//     {"inputs": {...}, "github": {...}, "env": {...}}. RESULT.json gets each step's name,
//     whether it ran, its exit status, output and outputs, and the action's outputs.
// Only the expressions action.yml uses are understood: inputs.X, github.X, steps.ID.outputs.X,
// always(), string literals, == and !=, &&; anything else is an error, so that action.yml
// cannot grow an expression this emulation would get wrong.
// Exit 0 when valid (validate) or when the steps were run (steps), 1 with the problems named,
// 2 on bad usage.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { validateAction, validateWorkflow } from "@action-validator/core";

const [mode, actionFile, ...rest] = process.argv.slice(2);
if (!["validate", "steps"].includes(mode) || !actionFile || (mode === "steps" && rest.length !== 2)) {
  console.error("usage: node action_check.mjs validate ACTION.yml [DOC.md...]\n" +
                "       node action_check.mjs steps ACTION.yml INPUTS.json RESULT.json");
  process.exit(2);
}

// Each schema error as "PATH: title (detail)", the alternatives of a oneOf flattened.
function flatten(errors, out = []) {
  for (const e of errors) {
    if (e.states) for (const s of e.states) flatten(s.errors, out);
    else out.push(`${e.path ?? (e.location ? `line ${e.location.line}` : "")}: ${e.title}${e.detail ? ` (${e.detail})` : ""}`);
  }
  return out;
}

if (mode === "validate") {
  const problems = [];
  const action = validateAction(readFileSync(actionFile, "utf8"));
  if (action.errors.length) problems.push(`${actionFile}:`, ...flatten(action.errors).map((p) => `  ${p}`));
  let workflows = 0;
  for (const doc of rest) {
    const text = readFileSync(doc, "utf8");
    for (const match of text.matchAll(/```yaml\n(# \.github\/workflows\/[^\n]*\n[\s\S]*?)```/g)) {
      workflows += 1;
      const line = text.slice(0, match.index).split("\n").length + 1;
      const result = validateWorkflow(match[1]);
      if (result.errors.length) problems.push(`${doc}:${line}:`, ...flatten(result.errors).map((p) => `  ${p}`));
    }
  }
  if (problems.length) {
    console.log(problems.join("\n"));
    process.exit(1);
  }
  console.log(`valid: ${actionFile} and ${workflows} workflow(s) of ${rest.join(", ") || "no docs"}`);
  process.exit(0);
}

const action = parse(readFileSync(actionFile, "utf8"));
const given = JSON.parse(readFileSync(rest[0], "utf8"));
const inputs = {};
for (const [name, spec] of Object.entries(action.inputs ?? {})) inputs[name] = spec.default ?? "";
for (const [name, value] of Object.entries(given.inputs ?? {})) {
  if (!(name in inputs)) {
    console.log(`action.yml has no input "${name}"`);
    process.exit(1);
  }
  inputs[name] = String(value);
}
const actionPath = resolve(dirname(actionFile));
const github = { action_path: actionPath, action_repository: "", action_ref: "", ...given.github };
const steps = {};  // id -> {outputs}
let failed = false;

// A value of the expression language: a context's property or a string literal.
function value(text) {
  const t = text.trim();
  let m;
  if ((m = /^'((?:[^']|'')*)'$/.exec(t))) return m[1].replaceAll("''", "'");
  if ((m = /^inputs\.([A-Za-z0-9_-]+)$/.exec(t))) {
    if (!(m[1] in inputs)) throw new Error(`no input ${m[1]}`);
    return inputs[m[1]];
  }
  if ((m = /^github\.([A-Za-z0-9_]+)$/.exec(t))) return String(github[m[1]] ?? "");
  if ((m = /^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$/.exec(t))) return steps[m[1]]?.outputs?.[m[2]] ?? "";
  throw new Error(`an expression this emulation does not know: ${t}`);
}

function condition(text) {
  return text.split("&&").every((part) => {
    const p = part.trim();
    if (p === "always()") return true;
    const m = /^(.*?)\s*(==|!=)\s*(.*)$/.exec(p);
    if (!m) throw new Error(`a condition this emulation does not know: ${p}`);
    const equal = value(m[1]) === value(m[3]);
    return m[2] === "==" ? equal : !equal;
  });
}

function expand(text) {
  return String(text).replace(/\$\{\{(.*?)\}\}/g, (_, e) => value(e));
}

// GITHUB_OUTPUT's two forms: NAME=VALUE and NAME<<DELIMITER ... DELIMITER.
function outputsOf(text) {
  const out = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([^=<]+)<<(.+)$/.exec(lines[i]);
    if (heredoc) {
      const body = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i]);
      out[heredoc[1]] = body.join("\n");
    } else if (lines[i].includes("=")) {
      out[lines[i].slice(0, lines[i].indexOf("="))] = lines[i].slice(lines[i].indexOf("=") + 1);
    }
  }
  return out;
}

const work = mkdtempSync(join(tmpdir(), "action-"));
const summary = join(work, "summary.md");
writeFileSync(summary, "");
const result = { steps: [], outputs: {}, summary: "" };
for (const [index, step] of (action.runs?.steps ?? []).entries()) {
  const record = { name: step.name, id: step.id ?? null, ran: false };
  result.steps.push(record);
  // A step runs after a failure only when its condition says always().
  const when = step.if ?? "success()";
  const runs = when === "success()" ? !failed : (!failed || when.includes("always()")) && condition(when);
  if (!runs) continue;
  record.ran = true;
  if (step.uses) {
    record.uses = step.uses;
    record.with = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(v)]));
    continue;
  }
  const outputFile = join(work, `output-${index}`);
  writeFileSync(outputFile, "");
  const env = { ...process.env, ...given.env, GITHUB_ACTIONS: "true", GITHUB_ACTION_PATH: actionPath,
                GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summary };
  for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v);
  const shell = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step.run)],
                          { env, encoding: "utf8", cwd: given.cwd ?? process.cwd(), maxBuffer: 64 << 20 });
  record.exit = shell.status;
  record.output = shell.stdout + shell.stderr;
  record.outputs = outputsOf(readFileSync(outputFile, "utf8"));
  if (step.id) steps[step.id] = { outputs: record.outputs };
  if (shell.status !== 0) failed = true;
}
for (const [name, spec] of Object.entries(action.outputs ?? {})) result.outputs[name] = expand(spec.value);
result.summary = readFileSync(summary, "utf8");
result.failed = failed;
writeFileSync(rest[1], JSON.stringify(result, null, 2));
