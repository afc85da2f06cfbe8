// Opens an HTML report of `preflight run --html` in headless Chromium, from file://, offline,
// and checks what a reader would see through the page's stable hooks (docs/ci.md
// "HTML report"): the verdict, each stage's status, each finding's code with its highlighted
// line, the failure span in the timeline; that the page logs no console error and throws no
// page error; that it requests nothing but itself (it is self-contained: any other request,
// file:// included, is a problem, and is aborted); and that it renders: a full-page
// screenshot goes to OUT.png and must not be blank.
// Prints one `html_check: FILE: ...` line per problem and exits 1, or prints what it checked
// and exits 0; exit 2 on a usage error.
// Usage: node tests/tools/html_check.mjs FILE.html --verdict pass|fail|error
//          [--stage NAME=STATUS ...] [--finding FILE:LINE ...] [--failure] --screenshot OUT.png
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { launchChromium, recordRequests } from "./headless_chromium.mjs";

const USAGE =
  "usage: html_check.mjs FILE.html --verdict pass|fail|error [--stage NAME=STATUS ...] " +
  "[--finding FILE:LINE ...] [--failure] --screenshot OUT.png";
const VERDICTS = ["pass", "fail", "error"];
const STAGE_STATUSES = ["passed", "failed", "not_reached", "absent"];

function usage(message) {
  console.error(`html_check.mjs: ${message}\n${USAGE}`);
  process.exit(2);
}

function parseArguments(argv) {
  const options = { stages: [], findings: [], failure: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${arg} needs a value`));
    if (arg === "--verdict") options.verdict = value();
    else if (arg === "--stage") {
      const [name, status, extra] = value().split("=");
      if (!name || !STAGE_STATUSES.includes(status) || extra !== undefined) {
        usage(`--stage takes NAME=STATUS, STATUS one of ${STAGE_STATUSES.join("|")}`);
      }
      options.stages.push({ name, status });
    } else if (arg === "--finding") {
      const location = value();
      if (!/^.+:\d+$/.test(location)) usage(`--finding takes FILE:LINE, got '${location}'`);
      options.findings.push(location);
    } else if (arg === "--failure") options.failure = true;
    else if (arg === "--screenshot") options.screenshot = value();
    else if (arg.startsWith("--")) usage(`unknown option ${arg}`);
    else if (options.file === undefined) options.file = arg;
    else usage(`one page at a time: '${arg}'`);
  }
  if (options.file === undefined) usage("no page given");
  if (!VERDICTS.includes(options.verdict)) usage(`--verdict takes ${VERDICTS.join("|")}`);
  if (options.screenshot === undefined) usage("--screenshot OUT.png is required");
  return options;
}

// What the page shows, read through its hooks once it has rendered.
function readPage(findingLocations) {
  const text = (element) => (element ? element.textContent.trim() : null);
  const stages = {};
  for (const stage of document.querySelectorAll(".stage[data-stage]")) {
    (stages[stage.dataset.stage] ??= []).push(stage.dataset.status ?? null);
  }
  const findings = {};
  for (const location of findingLocations) {
    const sections = [...document.querySelectorAll("section.finding")].filter(
      (section) => section.dataset.location === location,
    );
    findings[location] = sections.map((section) => {
      const code = section.querySelector("pre.code");
      const hit = code && code.querySelector(".hit");
      return { code: code !== null, hit: hit ? text(hit) : null };
    });
  }
  const timeline = document.querySelector("svg#timeline");
  const spans = {};
  for (const span of timeline ? timeline.querySelectorAll("[data-cat]") : []) {
    spans[span.dataset.cat] = (spans[span.dataset.cat] ?? 0) + 1;
  }
  const box = document.body ? document.body.getBoundingClientRect() : { width: 0, height: 0 };
  return {
    verdict: document.body ? document.body.dataset.verdict ?? null : null,
    verdictText: text(document.querySelector("#verdict")),
    stages,
    allLocations: [...document.querySelectorAll("section.finding")].map((s) => s.dataset.location),
    findings,
    timeline: timeline !== null,
    spans,
    sections: ["estimate", "clamps", "notes"].filter((id) => document.querySelector(`section#${id}`)),
    body: { width: box.width, height: box.height, text: (document.body?.innerText ?? "").trim().length },
  };
}

// The screenshot's size and how many colours it has, decoded by the browser: a blank page is
// one colour.
async function measurePng(browser, png) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (dataUrl) => {
      const image = new Image();
      image.src = dataUrl;
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const context = canvas.getContext("2d", { willReadFrequently: true });
      context.drawImage(image, 0, 0);
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      const colours = new Set();
      for (let i = 0; i < data.length && colours.size < 1000; i += 4) {
        colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      }
      return { width: canvas.width, height: canvas.height, colours: colours.size };
    }, `data:image/png;base64,${png.toString("base64")}`);
  } finally {
    await page.close();
  }
}

async function check(options) {
  const problems = [];
  const checked = [];
  const file = path.resolve(options.file);
  if (!fs.existsSync(file)) return { problems: [`expected an HTML report, found no such file`], checked };
  const pageUrl = pathToFileURL(file).href;

  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const consoleErrors = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push({ text: message.text(), url: message.location()?.url });
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("dialog", async (dialog) => {
      problems.push(`a ${dialog.type()} dialog opened: ${dialog.message()}`);
      await dialog.dismiss();
    });
    const requests = await recordRequests(
      page,
      (url) => url.split("#")[0] === pageUrl || url.startsWith("data:"),
    );

    try {
      await page.goto(pageUrl, { waitUntil: "load", timeout: 60_000 });
      // Scripts that draw after load get two frames, and web fonts their load.
      await page.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
      );
      await page.evaluate(() => document.fonts.ready.then(() => undefined));
    } catch (error) {
      problems.push(`expected the page to load, found: ${error.message}`);
      return { problems, checked };
    }

    const shown = await page.evaluate(readPage, options.findings);

    if (shown.verdict !== options.verdict) {
      problems.push(`verdict: expected <body data-verdict="${options.verdict}">, found ${describe(shown.verdict)}`);
    }
    if (!shown.verdictText) {
      const found = shown.verdictText === null ? "no #verdict" : "it empty";
      problems.push(`verdict: expected its text in #verdict, found ${found}`);
    } else if (!shown.verdictText.toLowerCase().includes(options.verdict)) {
      problems.push(`verdict: expected #verdict to say "${options.verdict}", found "${shown.verdictText}"`);
    }
    checked.push(`verdict ${options.verdict} ("${shown.verdictText}")`);

    for (const { name, status } of options.stages) {
      const found = shown.stages[name] ?? [];
      if (found.length === 0) {
        const names = Object.keys(shown.stages);
        problems.push(`stage ${name}: expected .stage[data-stage="${name}"] with data-status="${status}", ` +
          `found no such stage (stages on the page: ${names.length ? names.join(" ") : "none"})`);
      } else if (found.length > 1) {
        problems.push(`stage ${name}: expected one .stage[data-stage="${name}"], found ${found.length}`);
      } else if (found[0] !== status) {
        problems.push(`stage ${name}: expected data-status="${status}", found ${describe(found[0])}`);
      }
    }
    if (options.stages.length) {
      checked.push(`stages ${options.stages.map(({ name, status }) => `${name}=${status}`).join(" ")}`);
    }

    for (const location of options.findings) {
      const sections = shown.findings[location];
      if (sections.length === 0) {
        problems.push(`finding ${location}: expected section.finding[data-location="${location}"], found none` +
          ` (locations on the page: ${shown.allLocations.length ? shown.allLocations.join(" ") : "none"})`);
      } else if (!sections.some((section) => section.code)) {
        problems.push(`finding ${location}: expected its code in <pre class="code">, found no pre.code in the finding`);
      } else if (!sections.some((section) => section.hit)) {
        problems.push(`finding ${location}: expected the highlighted line as .hit in its <pre class="code">, found ` +
          (sections.some((section) => section.hit === "") ? "an empty .hit" : "no .hit"));
      } else {
        checked.push(`finding ${location}, its code and highlighted line "${sections.find((s) => s.hit).hit}"`);
      }
    }

    const spans = Object.entries(shown.spans).map(([cat, count]) => `${cat} ${count}`).join(", ") || "none";
    if (options.failure) {
      if (!shown.timeline) problems.push(`timeline: expected <svg id="timeline">, found none`);
      else if (!shown.spans.failure) {
        problems.push(`timeline: expected a [data-cat="failure"] span in #timeline, found none (spans: ${spans})`);
      }
    }
    checked.push(shown.timeline ? `timeline spans: ${spans}` : "no #timeline");
    checked.push(`sections: ${shown.sections.map((id) => `#${id}`).join(" ") || "none of #estimate #clamps #notes"}`);

    // Rendering: a body with size and text, and a full-page screenshot that is not one colour.
    if (shown.body.width === 0 || shown.body.height === 0 || shown.body.text === 0) {
      problems.push(`rendering: expected a body with size and text, found ${shown.body.width}x${shown.body.height}` +
        ` px and ${shown.body.text} characters`);
    }
    fs.mkdirSync(path.dirname(path.resolve(options.screenshot)), { recursive: true });
    const png = Buffer.from(await page.screenshot({ path: options.screenshot, fullPage: true, type: "png" }));
    const size = fs.existsSync(options.screenshot) ? fs.statSync(options.screenshot).size : 0;
    const image = size > 0 ? await measurePng(browser, png) : { width: 0, height: 0, colours: 0 };
    if (size === 0 || image.width === 0 || image.height === 0) {
      problems.push(`screenshot ${options.screenshot}: expected a picture of the page, found ${size} bytes`);
    } else if (image.colours < 2) {
      problems.push(`screenshot ${options.screenshot}: expected the page rendered, found a blank ` +
        `${image.width}x${image.height} image`);
    }
    const colours = image.colours >= 1000 ? "1000+" : image.colours;
    checked.push(`screenshot ${options.screenshot}: ${image.width}x${image.height} px, ${colours} colours`);
    // Last, so that what the screenshot's scrolling loaded counts too.
    const refused = new Set();
    for (const request of requests) {
      if (!request.allowed) {
        refused.add(request.url);
        problems.push(`request to ${request.url}: expected no request but the page's own ${pageUrl}`);
      }
    }
    // A refused request also logs "Failed to load resource": said once, above, is enough.
    for (const { text, url } of consoleErrors) {
      if (refused.has(url) && text.startsWith("Failed to load resource")) continue;
      problems.push(`console error: ${text}${url ? ` (${url})` : ""}`);
    }
    checked.push(`${requests.length} request(s), all the page itself or data: URLs`);
    checked.push("no console error, page error or dialog");
  } finally {
    await browser.close();
  }
  return { problems, checked };
}

function describe(value) {
  return value === null || value === undefined ? "none" : `"${value}"`;
}

const options = parseArguments(process.argv.slice(2));
let result;
try {
  result = await check(options);
} catch (error) {
  console.error(`html_check: ${options.file}: could not check the page: ${error.message}`);
  process.exit(1);
}
if (result.problems.length) {
  for (const problem of result.problems) console.error(`html_check: ${options.file}: ${problem}`);
  process.exit(1);
}
console.log(`html_check: ${options.file}: ok`);
for (const line of result.checked) console.log(`  ${line}`);
