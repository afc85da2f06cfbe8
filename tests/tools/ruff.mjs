// Runs Ruff (its WebAssembly build, @astral-sh/ruff-wasm-nodejs) on Python files, with the
// settings of ruff.toml at the top of the repository, as scripts/lint does (docs/ci.md "Lint").
// Prints one `FILE:LINE:COLUMN: CODE message` per finding; exit 1 when there is any, 2 when
// a file or the settings cannot be read. Usage: node tests/tools/ruff.mjs [--config FILE] FILE...
//
// Ruff's Workspace lints text, not files: it never sees a path, so the settings that depend
// on one are applied here, as ruff would with `force-exclude = true`:
// - `exclude` (default: ruff's own list) and `extend-exclude`: a file is skipped when a
//   pattern matches its path, relative to the settings' folder, or one of its folders;
// - `per-file-target-version` and `lint.per-file-ignores`: the file is checked with the
//   first matching target version, and with the matching codes added to `lint.ignore`.
// Patterns are globs: `*` and `?` within one path component, `**` across components, and a
// pattern without `/` matches a file's or folder's name at any depth.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";

const require = createRequire(import.meta.url);
const ruff = require("@astral-sh/ruff-wasm-nodejs");

// ruff's default `exclude` (docs.astral.sh/ruff/settings/#exclude).
const DEFAULT_EXCLUDE = [
  ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
  ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
  ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
  "venv",
];

function die(message) {
  console.error(`ruff.mjs: ${message}`);
  process.exit(2);
}

function globToRegExp(pattern) {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*" && pattern[i + 1] === "*") {
      i++;
      if (pattern[i + 1] === "/") {
        i++;
        source += "(?:.*/)?";
      } else {
        source += ".*";
      }
    } else if (c === "*") {
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) die(`unclosed '[' in the pattern ${pattern}`);
      source += "[" + pattern.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\") + "]";
      i = end;
    } else {
      source += c.replace(/[.+^${}()|\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}

function matcher(pattern) {
  const clean = pattern.replace(/^\.\//, "").replace(/\/$/, "");
  const regexp = globToRegExp(clean);
  // A pattern without a folder matches a name at any depth, as ruff's do.
  return clean.includes("/") ? (relative) => regexp.test(relative)
                             : (relative) => regexp.test(path.posix.basename(relative));
}

function readSettings(file) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    die(`cannot read the settings ${file}: ${error.message}`);
  }
  try {
    return parseToml(text);
  } catch (error) {
    die(`${file}: ${error.message}`);
  }
}

const args = process.argv.slice(2);
let configFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "ruff.toml");
if (args[0] === "--config") {
  if (args.length < 2) die("--config needs a file");
  configFile = args[1];
  args.splice(0, 2);
}
if (args.includes("-h") || args.includes("--help")) {
  console.log("usage: node tests/tools/ruff.mjs [--config FILE] FILE...");
  process.exit(0);
}

const settings = readSettings(configFile);
const root = path.dirname(path.resolve(configFile));
const lint = { ...(settings.lint ?? {}) };
const base = { ...settings, lint };
const excludes = [...(settings.exclude ?? DEFAULT_EXCLUDE), ...(settings["extend-exclude"] ?? [])].map(matcher);
const targetVersions = Object.entries(settings["per-file-target-version"] ?? {}).map(([p, v]) => [matcher(p), v]);
const perFileIgnores = Object.entries(lint["per-file-ignores"] ?? {}).map(([p, codes]) => [matcher(p), codes]);
// What only applies to files on disk stays here; the rest is the Workspace's.
for (const key of ["exclude", "extend-exclude", "force-exclude", "per-file-target-version", "include",
                   "extend-include", "respect-gitignore", "src"])
  delete base[key];
delete lint["per-file-ignores"];
delete lint["extend-per-file-ignores"];

const workspaces = new Map();
function workspaceFor(relative) {
  const options = structuredClone(base);
  const version = targetVersions.find(([matches]) => matches(relative));
  if (version) options["target-version"] = version[1];
  const ignores = perFileIgnores.filter(([matches]) => matches(relative)).flatMap(([, codes]) => codes);
  if (ignores.length) options.lint.ignore = [...(options.lint.ignore ?? []), ...ignores];
  const key = JSON.stringify(options);
  if (!workspaces.has(key)) {
    try {
      workspaces.set(key, new ruff.Workspace(options, ruff.PositionEncoding.Utf32));
    } catch (error) {
      die(`${configFile}: ${String(error).replace(/^(Error: )+/, "")}`);
    }
  }
  return workspaces.get(key);
}

function excluded(relative) {
  const parts = relative.split("/");
  for (let n = 1; n <= parts.length; n++) {
    const prefix = parts.slice(0, n).join("/");
    if (excludes.some((matches) => matches(prefix))) return true;
  }
  return false;
}

let findings = 0;
for (const file of args) {
  const relative = path.relative(root, path.resolve(file)).split(path.sep).join("/");
  if (!relative.startsWith("../") && excluded(relative)) continue;
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    die(`cannot read ${file}: ${error.message}`);
  }
  const diagnostics = workspaceFor(relative).check(text);
  diagnostics.sort((a, b) => a.start_location.row - b.start_location.row ||
                             a.start_location.column - b.start_location.column);
  for (const d of diagnostics) {
    console.log(`${file}:${d.start_location.row}:${d.start_location.column}: ${d.code ?? "error"} ${d.message}`);
    findings++;
  }
}
process.exit(findings ? 1 : 0);
