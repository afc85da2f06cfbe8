// Checks a Chrome Trace Event file (trace.json.gz of a dry run, or any .json/.json.gz) the way
// the viewers a user opens it in read it, with their own import code where it runs here:
// - speedscope (npm `speedscope`, pinned in package.json): its release app from
//   node_modules, in headless Chromium, is given the file as its own CLI gives it
//   (index.html#localProfilePath=JS, the JS calling speedscope.loadFileFromBase64), and what
//   it imported is read back through its own Export (the .speedscope.json it would save):
//   one profile per thread, the slices of each. Any warning it logs (a slice ended out of
//   order, one left open), error, alert or error screen is a problem.
// - Chrome: chrome://tracing does not open in Debian's Chromium (docs/ci.md "HTML report"),
//   so Chrome's current trace viewer runs instead: the DevTools Performance panel's trace
//   engine (models/trace/trace.js of devtools://devtools/bundled/, shipped inside Chromium)
//   parses the events; its threads and the slices of each are read back.
// - Perfetto: its importer is not packaged for npm or Debian, so what its JSON importer
//   requires is checked here: numeric ts ≥ 0 and dur ≥ 0, integer pid and tid, X slices of a
//   thread nested (none partly overlapping another), M events it knows with the args it
//   reads, C events with numeric args.
// Prints what each viewer found; one `trace_check: FILE: ...` line per problem and exit 1;
// exit 2 on a usage error. Usage: node tests/tools/trace_check.mjs FILE.json.gz
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { launchChromium, recordRequests } from "./headless_chromium.mjs";

const require = createRequire(import.meta.url);
const SPEEDSCOPE = path.join(path.dirname(require.resolve("speedscope/package.json")), "dist", "release");
const SPEEDSCOPE_VERSION = require("speedscope/package.json").version;
const DEVTOOLS_PAGE = "devtools://devtools/bundled/trace_app.html";

// The phases of the Trace Event Format; Perfetto's importer knows these.
const PHASES = new Set([..."BEXiICbneSTpFsftPNODMVvRc()"]);
const METADATA_ARGS = {
  process_name: ["name", "string"], thread_name: ["name", "string"], process_labels: ["labels", "string"],
  process_sort_index: ["sort_index", "integer"], thread_sort_index: ["sort_index", "integer"],
};

const threadKey = (pid, tid) => `${pid}:${tid}`;

// The trace's events, or the problem that keeps them from being read.
function loadTrace(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    return { problem: `expected a trace, found it unreadable: ${error.message}` };
  }
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  if (file.endsWith(".gz") && !gzipped) return { problem: "expected gzip data (the name ends in .gz), found none" };
  let text;
  try {
    text = (gzipped ? zlib.gunzipSync(bytes) : bytes).toString("utf8");
  } catch (error) {
    return { problem: `expected gzip data, found it corrupt: ${error.message}` };
  }
  let trace;
  try {
    trace = JSON.parse(text);
  } catch (error) {
    return { problem: `expected JSON, found: ${error.message}` };
  }
  if (Array.isArray(trace)) return { bytes, trace: { traceEvents: trace }, format: "JSON Array Format" };
  if (trace === null || typeof trace !== "object" || !Array.isArray(trace.traceEvents)) {
    return { problem: 'expected {"traceEvents": [...]} or an array of events, found neither' };
  }
  return { bytes, trace, format: "JSON Object Format" };
}

// What Perfetto's JSON importer requires of the events; the file's threads and slices.
function perfettoRequirements(trace) {
  const problems = [];
  const phases = {};
  const slices = new Map(); // pid:tid -> its X events fit to be nested
  const counts = new Map(); // pid:tid -> its X events, as the viewers count them
  const names = new Map(); // pid:tid -> thread name
  const isNumber = (value) => typeof value === "number" && Number.isFinite(value);
  if (trace.displayTimeUnit !== undefined && !["ms", "ns"].includes(trace.displayTimeUnit)) {
    problems.push(`displayTimeUnit: expected "ms" or "ns", found ${JSON.stringify(trace.displayTimeUnit)}`);
  }
  trace.traceEvents.forEach((event, index) => {
    const where = `event ${index}`;
    if (event === null || typeof event !== "object" || Array.isArray(event)) {
      problems.push(`${where}: expected an object, found ${JSON.stringify(event)}`);
      return;
    }
    const label = `${where} (ph ${JSON.stringify(event.ph)}, name ${JSON.stringify(event.name)})`;
    const expect = (ok, what) => ok || problems.push(`${label}: expected ${what}`);
    if (!expect(typeof event.ph === "string" && PHASES.has(event.ph), "ph a phase of the Trace Event Format")) return;
    phases[event.ph] = (phases[event.ph] ?? 0) + 1;
    expect(typeof event.name === "string", "name a string");
    expect(Number.isInteger(event.pid), `pid an integer, found ${JSON.stringify(event.pid)}`);
    const threaded = event.ph !== "M" || String(event.name).startsWith("thread_");
    if (threaded) expect(Number.isInteger(event.tid), `tid an integer, found ${JSON.stringify(event.tid)}`);
    if (event.args !== undefined) expect(event.args !== null && typeof event.args === "object", "args an object");
    if (event.ph !== "M" || event.ts !== undefined) {
      expect(isNumber(event.ts) && event.ts >= 0, `ts a number ≥ 0, found ${JSON.stringify(event.ts)}`);
    }
    if (event.ph === "X") {
      const counted = threadKey(Number(event.pid), Number(event.tid));
      counts.set(counted, (counts.get(counted) ?? 0) + 1);
      if (expect(isNumber(event.dur) && event.dur >= 0, `dur a number ≥ 0, found ${JSON.stringify(event.dur)}`) &&
        isNumber(event.ts) && event.ts >= 0 && Number.isInteger(event.pid) && Number.isInteger(event.tid)) {
        const key = threadKey(event.pid, event.tid);
        if (!slices.has(key)) slices.set(key, []);
        slices.get(key).push({ index, name: event.name, ts: event.ts, dur: event.dur });
      }
    } else if (event.ph === "M") {
      const known = METADATA_ARGS[event.name];
      const readable = Object.keys(METADATA_ARGS).join(", ");
      if (!expect(known !== undefined, `a metadata name Perfetto reads (${readable})`)) return;
      const [arg, type] = known;
      const value = event.args?.[arg];
      expect(type === "string" ? typeof value === "string" : Number.isInteger(value),
        `args.${arg} ${type === "string" ? "a string" : "an integer"}, found ${JSON.stringify(value)}`);
      if (event.name === "thread_name") names.set(threadKey(event.pid, event.tid), value);
    } else if (event.ph === "C") {
      const values = Object.entries(event.args ?? {});
      expect(values.length > 0, "args with at least one counter value");
      for (const [key, value] of values) {
        expect(isNumber(value), `args.${key} a number, found ${JSON.stringify(value)}`);
      }
    } else if (event.ph === "i" || event.ph === "I") {
      if (event.s !== undefined) {
        expect(["g", "p", "t"].includes(event.s), `s one of g, p, t, found ${JSON.stringify(event.s)}`);
      }
    }
  });
  // Nesting, in nanoseconds as Perfetto keeps time: a slice may end where its parent ends,
  // not after it.
  for (const [key, list] of slices) {
    const ns = (us) => Math.round(us * 1000);
    const sorted = [...list].sort((a, b) => ns(a.ts) - ns(b.ts) || ns(b.dur) - ns(a.dur) || a.index - b.index);
    const open = [];
    for (const slice of sorted) {
      while (open.length && ns(open.at(-1).ts + open.at(-1).dur) <= ns(slice.ts)) open.pop();
      const parent = open.at(-1);
      if (parent && ns(slice.ts + slice.dur) > ns(parent.ts + parent.dur)) {
        problems.push(`thread ${key}: expected slices nested, found event ${slice.index} "${slice.name}" ` +
          `[${slice.ts}, ${slice.ts + slice.dur}] µs partly overlapping event ${parent.index} "${parent.name}" ` +
          `[${parent.ts}, ${parent.ts + parent.dur}] µs`);
        continue;
      }
      open.push(slice);
    }
  }
  const threads = [...counts.keys()].sort().map((key) => ({ key, name: names.get(key) ?? null, slices: counts.get(key) }));
  return { problems, phases, threads };
}

const describeThreads = (threads) =>
  threads.map((t) => `${t.key}${t.name ? ` "${t.name}"` : ""} ${t.slices} slice(s)`).join("; ") || "none";

// speedscope's own importer, run as its CLI runs it; its result read back through its Export.
async function speedscopeImport(browser, file, bytes, expected) {
  const problems = [];
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "trace-check-"));
  const page = await browser.newPage();
  try {
    const loader = path.join(folder, "load.js");
    fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ` +
      `${JSON.stringify(bytes.toString("base64"))})`);
    const local = (url) => url.startsWith(pathToFileURL(SPEEDSCOPE).href + "/") || url === pathToFileURL(loader).href ||
      url.startsWith("data:") || url.startsWith("blob:");
    const requests = await recordRequests(page, local);
    let importedAs = null;
    page.on("console", (message) => {
      const text = message.text();
      if (/^Importing as /.test(text)) importedAs = text.replace(/^Importing as /, "");
      if (text.startsWith("Failed to load format")) problems.push(`speedscope: ${text}`);
      // Not the notes of Chromium's software WebGL ("[.WebGL-0x…]GL Driver Message …").
      const fromGpu = /^\[(\.WebGL-0x[0-9a-f]+)?\]/.test(text);
      if ((message.type() === "error" || message.type() === "warn") && !fromGpu) {
        problems.push(`speedscope: ${message.type()}: ${text}`);
      }
    });
    page.on("pageerror", (error) => problems.push(`speedscope: page error: ${error.message}`));
    // An alert is how it says it does not know the format; the wait below ends with it.
    let alerted;
    const alert = new Promise((resolve) => (alerted = resolve));
    page.on("dialog", async (dialog) => {
      problems.push(`speedscope: alert: ${dialog.message()}`);
      await dialog.dismiss();
      alerted("alert");
    });
    // Export hands its file to an <a download>: keep the Blob, and let nothing be saved.
    await page.evaluateOnNewDocument(() => {
      window.__speedscopeExports = [];
      const createObjectURL = URL.createObjectURL.bind(URL);
      URL.createObjectURL = (blob) => (window.__speedscopeExports.push(blob), createObjectURL(blob));
    });
    const cdp = await page.createCDPSession();
    await cdp.send("Browser.setDownloadBehavior", { behavior: "deny" });

    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${pathToFileURL(path.join(SPEEDSCOPE, "index.html")).href}#localProfilePath=${loader}`, {
      waitUntil: "load", timeout: 60_000,
    });
    const screen = page.waitForFunction(() => {
      const text = document.body.innerText;
      return text.includes("Something went wrong") ? "error" : text.includes("Export") ? "profile" : false;
    }, { timeout: 60_000 }).then((handle) => handle.jsonValue());
    screen.catch(() => {}); // still waiting when an alert ends it
    const shown = await Promise.race([alert, screen]);
    for (const request of requests) {
      if (!request.allowed) problems.push(`speedscope: request to ${request.url}: expected only its own files`);
    }
    if (shown === "error") {
      problems.push(`speedscope: expected the profile shown, found its error screen ("Something went wrong")`);
    }
    if (shown !== "profile") return { problems, summary: null };
    if (importedAs !== "Trace Event Format profile") {
      problems.push('speedscope: expected it imported as "Trace Event Format profile", ' +
        `found ${JSON.stringify(importedAs)}`);
    }
    // Ctrl+S is speedscope's own shortcut for Export.
    await page.keyboard.down("Control");
    await page.keyboard.press("s");
    await page.keyboard.up("Control");
    await page.waitForFunction(() => window.__speedscopeExports.length > 0, { timeout: 30_000 });
    const exported = JSON.parse(await page.evaluate(() => window.__speedscopeExports[0].text()));

    const profiles = exported.profiles.map((profile) => {
      const pid = /\bpid (-?[\d.]+)/.exec(profile.name)?.[1];
      const tid = /\btid (-?[\d.]+)/.exec(profile.name)?.[1];
      const opened = profile.events.filter((event) => event.type === "O").length;
      const closed = profile.events.filter((event) => event.type === "C").length;
      return { name: profile.name, key: pid && tid ? threadKey(pid, tid) : null, opened, closed };
    });
    for (const thread of expected) {
      const profile = profiles.find((p) => p.key === thread.key);
      if (!profile) problems.push(`speedscope: expected a profile for thread ${thread.key}, found none`);
      else if (profile.opened !== thread.slices || profile.closed !== thread.slices) {
        problems.push(`speedscope: thread ${thread.key}: expected ${thread.slices} slice(s), found ` +
          `${profile.opened} opened and ${profile.closed} closed`);
      }
    }
    for (const profile of profiles) {
      if (!expected.some((t) => t.key === profile.key)) {
        problems.push(`speedscope: profile "${profile.name}": expected one per thread with slices, ` +
          "found no such thread");
      }
    }
    const listed = profiles.map((p) => `"${p.name}" ${p.opened} slice(s)`).join("; ");
    return { problems, summary: `imported as ${importedAs}; ${profiles.length} profile(s): ${listed}` };
  } finally {
    await page.close();
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

// The DevTools Performance panel's trace engine, in Chromium's own DevTools page.
async function devtoolsImport(browser, trace, expected) {
  const problems = [];
  const page = await browser.newPage();
  try {
    const requests = await recordRequests(page, (url) => url.startsWith("devtools://") || url.startsWith("data:"));
    await page.goto(DEVTOOLS_PAGE, { waitUntil: "load", timeout: 60_000 });
    const result = await page.evaluate(async (events) => {
      let model;
      try {
        const { TraceModel } = await import("./models/trace/trace.js");
        model = TraceModel.Model.createWithAllHandlers();
      } catch (error) {
        return { api: String(error) };
      }
      try {
        await model.parse(events, { metadata: {}, isFreshRecording: false });
      } catch (error) {
        return { error: String(error?.stack ?? error) };
      }
      const processes = model.parsedTrace(0)?.data?.Renderer?.processes;
      if (!(processes instanceof Map)) return { api: "no parsedTrace(0).data.Renderer.processes" };
      const threads = [];
      for (const [pid, process] of processes) {
        for (const [tid, thread] of process.threads) {
          threads.push({ pid, tid, name: thread.name ?? null, entries: thread.entries.length });
        }
      }
      return { threads };
    }, trace.traceEvents);
    for (const request of requests) {
      if (!request.allowed) {
        problems.push(`chrome devtools: request to ${request.url}: expected only devtools:// files`);
      }
    }
    if (result.api) {
      // Chromium's updates move DevTools' modules now and then: this check must follow them.
      problems.push(`chrome devtools: expected the trace engine's API this check was written for ` +
        `(TraceModel.Model in models/trace/trace.js), found: ${result.api}`);
      return { problems, summary: null };
    }
    if (result.error) {
      problems.push(`chrome devtools: expected the events parsed, found: ${result.error}`);
      return { problems, summary: null };
    }
    const threads = result.threads.map((t) => ({ ...t, key: threadKey(t.pid, t.tid) }));
    for (const thread of expected) {
      const found = threads.find((t) => t.key === thread.key);
      if (!found) problems.push(`chrome devtools: expected thread ${thread.key}, found none`);
      else if (found.entries !== thread.slices) {
        problems.push(`chrome devtools: thread ${thread.key}: expected ${thread.slices} slice(s), ` +
          `found ${found.entries}`);
      }
    }
    const listed = threads.map((t) => `${t.key}${t.name ? ` "${t.name}"` : ""} ${t.entries} slice(s)`).join("; ");
    return { problems, summary: `${threads.length} thread(s): ${listed || "none"}` };
  } finally {
    await page.close();
  }
}

const argv = process.argv.slice(2);
if (argv.length !== 1 || argv[0].startsWith("-")) {
  console.error("usage: node tests/tools/trace_check.mjs FILE.json.gz");
  process.exit(2);
}
const file = argv[0];
const report = (problems) => {
  for (const problem of problems) console.error(`trace_check: ${file}: ${problem}`);
};
const loaded = loadTrace(file);
if (loaded.problem) {
  report([loaded.problem]);
  process.exit(1);
}
const { trace } = loaded;
const problems = [];
const lines = [];
const own = perfettoRequirements(trace);
problems.push(...own.problems.map((problem) => `perfetto: ${problem}`));
const phases = Object.entries(own.phases).map(([ph, count]) => `${ph} ${count}`).join(", ");
lines.push(`${loaded.format}, ${trace.traceEvents.length} event(s) (${phases || "none"})` +
  (trace.otherData?.preflight ? ", otherData.preflight present" : ""));
lines.push(`perfetto (its JSON importer's requirements, checked here): ${describeThreads(own.threads)}`);

let browser;
try {
  browser = await launchChromium();
  const speedscope = await speedscopeImport(browser, file, loaded.bytes, own.threads);
  problems.push(...speedscope.problems);
  if (speedscope.summary) lines.push(`speedscope ${SPEEDSCOPE_VERSION}: ${speedscope.summary}`);
  const devtools = await devtoolsImport(browser, trace, own.threads);
  problems.push(...devtools.problems);
  const chrome = (await browser.version()).replace(/^\D+/, "");
  if (devtools.summary) lines.push(`chrome devtools ${chrome}: ${devtools.summary}`);
} catch (error) {
  problems.push(`could not run the viewers: ${error.message}`);
} finally {
  await browser?.close();
}
if (problems.length) {
  report(problems);
  process.exit(1);
}
console.log(`trace_check: ${file}: ok`);
for (const line of lines) console.log(`  ${line}`);
