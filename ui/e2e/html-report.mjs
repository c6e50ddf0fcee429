// The HTML report opened in a real browser: Chromium from Debian's packages,
// headless, driven by its chromedriver. It checks what a reader gets: the
// page renders (a screenshot), hovering a bar shows its figures, a legend's
// check box hides and shows its series, and the page fetched nothing — no
// request but the file itself, no resource, no policy violation.
//
//   node ui/e2e/html-report.mjs REPORT.html OUT_DIR   (or imported: checkHtmlReport)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { WebDriver } from "./webdriver.mjs";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

// Chromium's temporary folders (its profile, its scoped folders) in one of
// our own, removed when the check ends: Chromium leaves some behind in /tmp.
async function startDriver(temp) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = 9500 + Math.floor(Math.random() * 400);
    const proc = spawn("chromedriver", [`--port=${port}`], { stdio: "ignore", env: { ...process.env, TMPDIR: temp } });
    const wd = new WebDriver(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 75; i++) {
      const ok = await fetch(`${wd.base}/status`).then((r) => r.ok, () => false);
      if (ok) return { proc, wd };
      await new Promise((r) => setTimeout(r, 200));
    }
    proc.kill("SIGTERM");
  }
  throw new Error("chromedriver did not start (Debian package chromium-driver)");
}

/** Opens `file` in headless Chromium and checks it; writes OUT_DIR/NAME.png.
 * Returns what it found (figures for the caller's log). */
export async function checkHtmlReport(file, outDir, name = "html-report") {
  const temp = mkdtempSync(join(tmpdir(), "trainbench-chromium-"));
  let driver;
  try {
    driver = await startDriver(temp);
  } catch (e) {
    rmSync(temp, { recursive: true, force: true });
    throw e;
  }
  const { proc, wd } = driver;
  try {
    const v = await wd.request("POST", "/session", {
      capabilities: {
        alwaysMatch: {
          browserName: "chrome",
          "goog:chromeOptions": { binary: "/usr/bin/chromium", args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000", "--disable-extensions", "--no-first-run"] },
          "goog:loggingPrefs": { performance: "ALL", browser: "ALL" },
        },
      },
    });
    wd.session = v.sessionId;
    const url = pathToFileURL(resolve(file)).href;
    await wd.request("POST", wd.s("/url"), { url });
    await wd.waitFor("figure.chart rect.bar", { what: "the first chart's bars" });
    writeFileSync(join(outDir, `${name}.png`), Buffer.from(await wd.request("GET", wd.s("/screenshot")), "base64"));

    // Hover: the first bar of the first chart shows its figures.
    const bar = await wd.find("figure.chart rect.bar");
    await wd.exec("arguments[0].scrollIntoView({ block: 'center' });", { [ELEMENT]: bar });
    await wd.request("POST", wd.s("/actions"), { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions: [{ type: "pointerMove", duration: 0, origin: { [ELEMENT]: bar }, x: 0, y: 0 }] }] });
    const tip = await wd.exec("const t = document.getElementById('tip'); return t.hidden ? null : t.textContent;");
    const expected = await wd.exec("return arguments[0].getAttribute('data-tip');", { [ELEMENT]: bar });
    if (!tip || tip !== expected || !/samples\/s/.test(tip)) throw new Error(`hovering a bar showed ${JSON.stringify(tip)}, expected ${JSON.stringify(expected)}`);
    writeFileSync(join(outDir, `${name}-hover.png`), Buffer.from(await wd.request("GET", wd.s("/screenshot")), "base64"));

    // Toggle: the first chart's first series hides, then shows again.
    const shown = "return getComputedStyle(document.querySelector('figure.chart g[data-series]')).display";
    await wd.click("figure.chart .legend input[data-toggle]");
    const hidden = await wd.exec(shown);
    await wd.click("figure.chart .legend input[data-toggle]");
    const back = await wd.exec(shown);
    if (hidden !== "none" || back === "none") throw new Error(`the legend's toggle left the series ${hidden} then ${back}`);

    // Nothing fetched: the browser's own network log and the page's.
    const log = await wd.request("POST", wd.s("/se/log"), { type: "performance" });
    const requests = log
      .map((e) => JSON.parse(e.message).message)
      .filter((m) => m.method === "Network.requestWillBeSent")
      .map((m) => m.params.request.url);
    const others = requests.filter((u) => u !== url);
    const resources = await wd.exec("return performance.getEntriesByType('resource').map((e) => e.name)");
    const console = (await wd.request("POST", wd.s("/se/log"), { type: "browser" })).map((e) => e.message);
    const violations = console.filter((m) => /Content Security Policy|Refused to/.test(m));
    if (others.length || resources.length || violations.length) {
      throw new Error(`the report fetched or tried to: ${JSON.stringify({ others, resources, violations })}`);
    }
    return { requests: requests.length, tip };
  } finally {
    await wd.quit();
    proc.kill("SIGTERM");
    // chromedriver ends its browser as it ends: at most 5 s, then killed.
    if (proc.exitCode === null && proc.signalCode === null) {
      const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await new Promise((r) => proc.once("exit", r));
      clearTimeout(killer);
    }
    try {
      rmSync(temp, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      console.log(`  Chromium's temp folder ${temp} not removed: ${e.message}`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [file, out] = process.argv.slice(2);
  if (!file || !out) {
    console.error("usage: html-report.mjs REPORT.html OUT_DIR");
    process.exit(2);
  }
  checkHtmlReport(file, out).then(
    (found) => console.log(`html report: ${JSON.stringify(found)}`),
    (e) => {
      console.error(`html report: ${e.message}`);
      process.exit(1);
    },
  );
}
