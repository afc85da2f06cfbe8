// Debian's Chromium, headless and offline, under puppeteer-core: what html_check.mjs and
// trace_check.mjs open pages in. The binary is $PREFLIGHT_CHROMIUM or /usr/bin/chromium
// (scripts/setup installs it); each launch gets a fresh profile folder, removed on close.
//
// Offline by construction: no host name resolves (--host-resolver-rules), the background
// services that phone home are off (puppeteer's defaults plus the flags below), and puppeteer
// talks to the browser over a pipe, not a TCP port. The callers also intercept every request
// their pages make.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

export const CHROMIUM = process.env.PREFLIGHT_CHROMIUM || "/usr/bin/chromium";

const OFFLINE_FLAGS = [
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--no-pings",
  "--disable-domain-reliability",
  "--disable-component-update",
  "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
];

// A browser whose close() also removes its profile folder. `localState` is written to the
// profile's "Local State" before the launch (browser-wide preferences).
export async function launchChromium({ localState } = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found (scripts/setup installs Debian's chromium; ` +
      "PREFLIGHT_CHROMIUM names another)");
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-chromium-"));
  if (localState) fs.writeFileSync(path.join(profile, "Local State"), JSON.stringify(localState));
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      pipe: true,
      userDataDir: profile,
      // Root cannot use Chromium's sandbox; the pages opened are the project's own files.
      args: ["--no-sandbox", ...OFFLINE_FLAGS],
      timeout: 60_000,
      protocolTimeout: 120_000,
    });
  } catch (error) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const close = browser.close.bind(browser);
  browser.close = async () => {
    try {
      await close();
    } finally {
      fs.rmSync(profile, { recursive: true, force: true });
    }
  };
  return browser;
}

// Records every request a page makes; the ones `allowed(url)` refuses are aborted, so
// nothing leaves the machine even if a flag above did not hold.
export async function recordRequests(page, allowed) {
  const requests = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    const ok = allowed(url);
    requests.push({ url, allowed: ok });
    if (request.isInterceptResolutionHandled()) return;
    if (ok) request.continue();
    else request.abort("blockedbyclient");
  });
  return requests;
}
