// End to end in the real application window (tauri-driver + WebKitWebDriver
// under Xvfb), against the real backend and a fresh SQLite file: a person's
// path from an empty database to a reopened saved session. No mocked IPC.
//
//   node ui/e2e/studio.e2e.mjs APP OUT_DIR
//
// Screenshots go to OUT_DIR; figures (cold start, frame rate during a run) to
// OUT_DIR/figures.json.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkHtmlReport } from "./html-report.mjs";
import { WebDriver } from "./webdriver.mjs";

const [app, out] = process.argv.slice(2);
/** A session of nine real ViT-B/16 runs on an H100, as the studio exported it. */
const H100_SESSION = new URL("../../docs/gpu-results/2026-11-24-h100-gpu-check.trainbench-session.json.xz", import.meta.url).pathname;
if (!app || !out) {
  console.error("usage: studio.e2e.mjs APP OUT_DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const wd = new WebDriver(process.env.TAURI_DRIVER_URL ?? "http://127.0.0.1:4444");
const figures = {};
let shot = 0;

async function screenshot(name) {
  shot += 1;
  const file = join(out, `${String(shot).padStart(2, "0")}-${name}.png`);
  // The X display's pixels (ImageMagick's `import`), i.e. what a person
  // sees. WebKitWebDriver's own screenshot hangs here on some pages after
  // several runs have streamed (its snapshot never completes), while the
  // window itself keeps painting and answering.
  execFileSync("import", ["-window", "root", file], { timeout: 20000 });
  console.log(`  screenshot ${file}`);
}

/** A backend command called as the window calls it (for what sits behind a
 * native file dialog, which WebDriver cannot drive). */
async function invoke(command, args) {
  const r = await wd.execAsync(
    `const done = arguments[arguments.length - 1];
     window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]).then((v) => done({ ok: v }), (e) => done({ error: e }));`,
    command,
    args,
  );
  if (!r || "error" in r) throw new Error(`${command}: ${JSON.stringify(r?.error)}`);
  return r.ok;
}

/** Clicks a button and waits until `tookJs` (a script's expression) says
 * the click took. A click lost to the driver, or landing while the page
 * re-rendered the button, is tried again (three tries), each miss logged. */
async function press(css, tookJs) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    await wd.waitFor(`${css}:not([disabled])`, { what: `${css} enabled` });
    await wd.click(css);
    // Ten seconds before clicking again: a click that took, seen late on a
    // busy machine, must not be doubled.
    for (const end = Date.now() + 10000; Date.now() < end; ) {
      if (await wd.exec(`return Boolean(${tookJs})`)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`  ${css} did not take after click ${attempt}; page errors: ${JSON.stringify(await wd.exec("return window.__trainbenchErrors"))}`);
  }
  throw new Error(`${css}: three clicks did not take`);
}

/** Ticks a checkbox and waits until it shows ticked. A click WebKit's driver
 * lands beside a small box is tried again (three tries), and each miss is
 * logged, so a box that never ticks still fails with what the page said. */
async function tick(css) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    await wd.click(css);
    // Ten seconds before clicking again: a second click on a box whose tick
    // showed late would untick it.
    for (const end = Date.now() + 10000; Date.now() < end; ) {
      if (await wd.exec(`return document.querySelector(${JSON.stringify(css)}).checked`)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`  ${css} not ticked after click ${attempt}; page errors: ${JSON.stringify(await wd.exec("return window.__trainbenchErrors"))}`);
  }
  throw new Error(`${css} did not tick after three clicks`);
}

function step(text) {
  console.log(`e2e: ${text}`);
}

/** Waits until `test()` holds, 30 s at the most (a busy machine's WebKit
 * can take seconds to redraw); then fails with `failure()`'s words. */
async function until(test, failure, ms = 30000) {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(failure());
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens the studio and waits for its first interactive screen; returns the milliseconds it took. */
async function open() {
  const t0 = Date.now();
  await wd.start(app);
  await wd.waitFor(".app[data-ready=yes]", { timeout: 60000, what: "the studio's first screen" });
  return Date.now() - t0;
}

/** Counts animation frames for `ms` milliseconds in the window: the UI's frame rate. */
async function frameRate(ms) {
  return wd.execAsync(
    `const done = arguments[arguments.length - 1];
     let n = 0; const t0 = performance.now(); let worst = 0; let last = t0;
     function tick(t) { n++; worst = Math.max(worst, t - last); last = t;
       if (t - t0 < ${ms}) requestAnimationFrame(tick); else done({ fps: n * 1000 / (t - t0), worst_frame_ms: worst }); }
     requestAnimationFrame(tick);`,
  );
}

async function runFromWizard({ precision, label, startWith = "click" }) {
  await wd.click("#nav-wizard");
  await wd.waitFor("input[name=steps]");
  if (precision !== "fp32") {
    await wd.click("input[name=precision][value=fp32]");
    await wd.click(`input[name=precision][value=${precision}]`);
  }
  await wd.type("#batch", "32");
  await wd.type("input[name=steps]", "60");
  await wd.waitFor("[data-plan='1']", { what: "the plan to say 1 run" });
  const plan = await wd.text(".plan");
  if (!plan.includes("1 configuration × 1 repeat = 1 run")) throw new Error(`unexpected plan text: ${plan}`);
  await wd.exec("document.querySelector('main').scrollTo(0, 0)");
  await screenshot(`wizard-${label}`);
  if (startWith === "keyboard") await wd.press("Control", "Enter");
  else await wd.click("#start");
  await wd.waitFor("section.live[data-phase=training]", { timeout: 90000, what: "the run to start training" });
}

/** The notifications the studio sent (the session bus's Notify calls that
 * run.sh's dbus-monitor wrote down): [{summary, body}]. */
function notifications() {
  const log = process.env.E2E_NOTIFICATIONS ? readFileSync(process.env.E2E_NOTIFICATIONS, "utf8") : "";
  return log
    .split(/^method call /m)
    .slice(1)
    .filter((call) => call.includes("member=Notify"))
    .map((call) => {
      const strings = [...call.matchAll(/^\s+string "((?:[^"\\]|\\.)*)"$/gm)].map((m) => m[1]);
      // Notify(app_name, replaces_id, app_icon, summary, body, …): the strings in order.
      return { summary: strings[2] ?? "", body: strings[3] ?? "" };
    });
}

async function waitForNotification(before, title) {
  const end = Date.now() + 20000;
  for (;;) {
    const found = notifications().slice(before).find((n) => title.test(n.summary));
    if (found) return found;
    if (Date.now() > end) throw new Error(`no notification titled ${title} (sent: ${JSON.stringify(notifications())})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `f` while another X window (xmessage) has the keyboard focus, as
 * when a person works in another application; the studio's window gets it
 * back after. */
async function behindAnotherWindow(f) {
  const other = spawn("xmessage", ["-geometry", "+700+500", "another application"], { stdio: "ignore" });
  try {
    const id = execFileSync("xdotool", ["search", "--sync", "--onlyvisible", "--class", "Xmessage"], { timeout: 15000 }).toString().trim().split("\n")[0];
    execFileSync("xdotool", ["windowfocus", "--sync", id], { timeout: 15000 });
    return await f();
  } finally {
    other.kill("SIGTERM");
    const studio = execFileSync("xdotool", ["search", "--onlyvisible", "--name", "TrainBench Studio"], { timeout: 15000 }).toString().trim().split("\n")[0];
    if (studio) execFileSync("xdotool", ["windowfocus", "--sync", studio], { timeout: 15000 });
  }
}

async function waitFinished() {
  await wd.waitFor("section.live[data-status=completed]", { timeout: 180000, what: "the run to complete" });
}

try {
  step("open the studio on an empty database: the welcome view");
  figures.cold_start_ms = await open();
  const t0 = Date.now() - figures.cold_start_ms;
  figures.mounted_ms = await wd.exec("return window.__trainbenchMounted");
  let clicks = 0;
  const clickCounted = async (css) => {
    clicks += 1;
    await wd.click(css);
  };
  await wd.waitFor(".app[data-view=welcome]", { what: "the welcome view on an empty database" });
  await wd.waitFor("#quick-start:not([disabled])", { what: "the quick benchmark's button" });
  await screenshot("welcome");

  step("the quick benchmark, one click");
  await clickCounted("#quick-start");
  // The time left shows once the pace is known (or the run was quicker than that).
  await wd.waitFor(".step-card[data-step='1']", {
    timeout: 120000,
    check: (t) => t.includes("left at the current pace") || t.includes("completed"),
    what: "the quick benchmark's time left",
  });
  await screenshot("quick-live");
  await wd.waitFor(".step-card[data-step='1'] section.live[data-status=completed]", { timeout: 240000, what: "the quick benchmark to complete" });

  step("the suggested second run, one click, lands in the comparison");
  await wd.waitFor("#next-run", { timeout: 30000, what: "the suggested second run" });
  await wd.exec("document.querySelector('.step-card[data-step=\"2\"]').scrollIntoView({ block: 'end' })");
  await screenshot("quick-finished");
  await clickCounted("#next-run");
  await wd.waitFor(".app[data-view=compare]", { timeout: 300000, what: "the comparison after the second run" });
  await wd.waitFor("#decision-matrix", { timeout: 30000 });
  figures.first_comparison = { clicks, seconds_from_open: (Date.now() - t0) / 1000 };
  const labels = await wd.text("#compare-table");
  if (!labels.includes("tch") || !labels.includes("pytorch")) throw new Error(`first comparison lacks tch and pytorch: ${labels}`);
  await screenshot("first-comparison");
  await wd.waitFor("#compare-not-placed", {
    timeout: 30000,
    check: (t) => t.includes("trained on the CPU"),
    what: "why the CPU runs are not beside the published record, said once",
  });

  step("the comparison as a PDF report (the command behind Export PDF)");
  const pdf = join(out, "first-comparison.pdf");
  const ids = (await wd.text(".compare h2 .hint")).match(/\d+/g).map(Number);
  await invoke("export_pdf", { selection: { session_id: null, run_ids: ids, grouping: "runs", baseline: ids[0], settings: null }, path: pdf });
  shot += 1;
  execFileSync("pdftoppm", ["-png", "-r", "70", "-f", "1", "-l", "1", "-singlefile", pdf, join(out, `${String(shot).padStart(2, "0")}-pdf-page`)], { timeout: 30000 });
  console.log(`  pdf page ${join(out, `${String(shot).padStart(2, "0")}-pdf-page.png`)}`);

  step("the comparison as one HTML page (Export HTML), opened in Chromium: figures on hover, toggles, nothing fetched");
  const html = join(out, "first-comparison.html");
  await invoke("export_html", { selection: { session_id: null, run_ids: ids, grouping: "runs", baseline: ids[0], settings: null }, path: html });
  shot += 1;
  figures.html_report = await checkHtmlReport(html, out, `${String(shot).padStart(2, "0")}-html-report`);
  console.log(`  html report ${join(out, `${String(shot).padStart(2, "0")}-html-report.png`)}`);

  await wd.click("#nav-runs");
  await wd.waitFor(".runs .hint", { check: (t) => t.includes("2 of 2 runs"), what: "the two runs in the table" });
  step("a CPU run is not beside the published record unless asked: Place it anyway");
  await wd.click("tr[data-run='1'] button.link");
  await wd.waitFor("#not-placed", { check: (t) => t.includes("trained on the CPU"), what: "why the run is not placed" });
  await wd.click("#place-anyway");
  await wd.waitFor(".vs-record", { check: (t) => t.includes("% of") && !t.includes("Not placed"), what: "the run placed beside the record anyway" });

  step("run a tiny CPU benchmark from the wizard and watch it");
  await runFromWizard({ precision: "fp32", label: "fp32" });
  figures.frame_rate_during_run = await frameRate(3000);
  await wd.waitFor("#tp-now", { check: (t) => /samples\/s/.test(t), what: "a throughput figure" });
  await screenshot("live-fp32");
  await waitFinished();
  await wd.waitFor("#tp-steady", { check: (t) => /samples\/s/.test(t), what: "the steady throughput" });
  await screenshot("finished-fp32");

  step("run a second configuration (bf16 autocast) with another window in front: its end is told by a system notification");
  if (notifications().length > 0) throw new Error(`runs that ended with the window in front were told: ${JSON.stringify(notifications())}`);
  // The other window takes the focus before the run starts (started from
  // the keyboard all the same: WebDriver's keys reach the page), so however
  // fast the run ends, it ends with the studio behind.
  const told = await behindAnotherWindow(async () => {
    await runFromWizard({ precision: "amp-bf16", label: "bf16", startWith: "keyboard" });
    await waitFinished();
    const n = await waitForNotification(0, /^Run #\d+ completed$/);
    await screenshot("notification");
    return n;
  });
  figures.notification = told;

  step("find a model among the libraries' thousands: search, count the sizes, filter by size and CPU");
  await wd.click("#nav-wizard");
  await wd.type("#model-search", "test_vi");
  const testVit = "tr[data-model='timm:test_vit']";
  await wd.waitFor(testVit, { timeout: 60000, what: "timm's test_vit among the matches" });
  await wd.click("#model-count");
  await wd.waitFor(`${testVit} td.num`, { timeout: 120000, check: (t) => t === "371.2 k", what: "test_vit's size counted" });
  await wd.click("#model-size option[value=tiny]");
  await wd.click("#model-cpu");
  await wd.waitFor(testVit, { check: (t) => t.includes("small enough for a CPU"), what: "test_vit kept by the size and CPU filters" });
  const kept = await wd.exec("return [...document.querySelectorAll('tr[data-model]')].map((r) => r.dataset.model)");
  if (kept.some((m) => !m.startsWith("timm:test_vi"))) throw new Error(`the filters kept ${kept}`);
  await wd.exec("document.getElementById('group-model').scrollIntoView({ block: 'start' })");
  await screenshot("model-search");
  await wd.click("#nav-runs");

  step("the version picker: JAX's releases from PyPI; one not installed is named in the plan");
  await wd.click("#nav-wizard");
  await wd.waitFor(".release-picker[data-framework=jax] button", { what: "JAX's version picker" });
  await wd.click(".release-picker[data-framework=jax] button");
  const release = "input[name=release][value='jax==0.6.0']";
  await wd.waitFor(release, { timeout: 60000, what: "JAX's releases as PyPI lists them" });
  await tick(release);
  await wd.waitFor(".view.wizard", {
    check: (t) => t.includes("jax==0.6.0 is not installed here") || t.includes("2 configurations"),
    what: "the plan with JAX 0.6.0 (not installed: said so, with how to install it)",
  });
  await wd.exec("document.querySelector('.release-picker[data-framework=jax]').scrollIntoView({ block: 'center' })");
  await screenshot("version-picker");

  step("compare the two");
  await wd.click("#nav-runs");
  await wd.waitFor(".runs .hint", { check: (t) => t.includes("4 of 4 runs"), what: "four runs in the table" });
  for (const id of ["3", "4"]) await wd.click(`input[aria-label='Select run ${id}']`);
  await wd.waitFor(".runs .hint", { check: (t) => t.includes("2 selected"), what: "both runs selected" });
  await screenshot("runs");
  step("keys: Delete asks to delete the selected runs, Esc says no; / goes to the search");
  await wd.press("Delete");
  await wd.waitFor(".modal [data-confirm=no]", { what: "the delete question" });
  await wd.press("Escape");
  await until(async () => (await wd.findAll(".modal")).length === 0, () => "Esc did not close the delete question");
  await wd.press("/");
  if ((await wd.exec("return document.activeElement && document.activeElement.id")) !== "run-search") throw new Error('"/" did not focus the run search');
  await wd.click("#compare-selected");
  await wd.waitFor("#decision-matrix", { timeout: 30000 });
  const table = await wd.text("#compare-table");
  if (!table.includes("amp-bf16") || !table.includes("baseline")) throw new Error(`compare table lacks the runs: ${table}`);
  // Where the step goes: a stacked bar per run and the gap explained.
  await wd.waitFor("#breakdown-bars", { check: (t) => t.includes("forward") && t.includes("backward"), what: "the step breakdown bars" });
  await wd.waitFor("#explanations", { check: (t) => t.includes("time per sample"), what: "the explained gap" });
  await screenshot("compare");

  step("save the session");
  await wd.type("#session-name", "e2e fp32 vs bf16");
  await wd.click("#save-session");
  await wd.waitFor("#compare-notice", { check: (t) => t.includes("Saved session"), what: "the saved notice" });

  step("restart the studio and reopen the session");
  await wd.quit();
  figures.warm_start_ms = await open();
  await wd.click("#nav-sessions");
  await wd.waitFor("tr[data-session='e2e fp32 vs bf16'] .open-session");
  await screenshot("sessions");
  await wd.click("tr[data-session='e2e fp32 vs bf16'] .open-session");
  await wd.waitFor("#decision-matrix", { timeout: 30000 });
  const title = await wd.text(".compare h2");
  if (!title.includes("e2e fp32 vs bf16")) throw new Error(`reopened compare view has title ${title}`);
  await screenshot("reopened");

  step("settings: the database in use, why that one, and the shared settings file");
  await wd.click("#nav-settings");
  await wd.waitFor("#db-path", { check: (t) => t.endsWith("studio.sqlite"), what: "the database path" });
  await wd.waitFor("#db-source", { check: (t) => t.includes("TRAINBENCH_DB"), what: "why this database" });
  await screenshot("settings");

  step("a price from its price per hour and device count; deleting it asks first");
  await wd.click("#add-price");
  await wd.type(".price-form input[name=offering]", "e2e lab 4x L40S");
  await wd.type(".price-form input[name=device]", "L40S");
  await wd.type(".price-form input[name=devices]", "4");
  await wd.type(".price-form input[name=usdPerHour]", "6");
  await wd.type(".price-form input[name=source]", "e2e");
  await wd.waitFor("#price-derived", { check: (t) => t.includes("$1.5000 per device-hour"), what: "the derived device-hour price" });
  await wd.click(".price-form button[type=submit]");
  await wd.waitFor("tr[data-offering='e2e lab 4x L40S']", { check: (t) => t.includes("1.50"), what: "the new price in the table" });
  await wd.click("button[data-delete='e2e lab 4x L40S']");
  await wd.click(".modal [data-confirm=yes]");
  await until(async () => (await wd.findAll("tr[data-offering='e2e lab 4x L40S']")).length === 0, () => "the deleted price is still listed");

  step("a session of real GPU runs (nine ViT-B/16 runs on an H100): each entry labelled in full by what differs");
  const sessionFile = join(out, "h100.trainbench-session.json");
  execFileSync("python3", ["-c", "import lzma, sys; open(sys.argv[2], 'wb').write(lzma.open(sys.argv[1]).read())", H100_SESSION, sessionFile]);
  const imported = await invoke("import_session", { path: sessionFile });
  if (imported.runs_imported !== 9) throw new Error(`the H100 session imported ${JSON.stringify(imported)}`);
  await wd.click("#nav-sessions");
  await wd.waitFor("tr[data-session^='gpu-check'] .open-session", { what: "the imported GPU session" });
  await wd.click("tr[data-session^='gpu-check'] .open-session");
  await wd.waitFor("#decision-matrix", { timeout: 30000 });
  await wd.waitFor("#breakdown-bars", { check: (t) => t.includes("forward"), what: "the GPU runs' step breakdown" });
  const cut = await wd.exec("return [...document.querySelectorAll('#breakdown-bars text, #compare-table td:first-child')].map((e) => e.textContent).filter((t) => t.includes('…'))");
  if (cut.length > 0) throw new Error(`labels cut in the GPU session's comparison: ${cut.join(" | ")}`);
  await screenshot("gpu-session");
  // Curves from each run's first steady window: torch.compile's long first
  // step no longer shifts its curve.
  // (Chosen as the select's change event: a clicked <option> can leave
  // WebKit's native menu open, swallowing the clicks after it.)
  await wd.exec("const s = document.querySelector('#curve-axis'); s.value = 'steady'; s.dispatchEvent(new Event('change', { bubbles: true }));");
  await wd.waitFor(".compare", { check: (t) => t.includes("s since the first steady window"), what: "curves against the first steady window" });

  step("the runs table's column chooser: GPU and MFU of the H100 runs");
  await wd.click("#nav-runs");
  await wd.click("#column-picker summary");
  // A fresh window's storage: no optional column chosen yet.
  const ticked = await wd.exec("return [...document.querySelectorAll('#column-picker input:checked')].map((i) => i.name)");
  if (ticked.length > 0) throw new Error(`columns chosen before any click (storage left from elsewhere?): ${ticked.join(", ")}`);
  for (const column of ["gpu", "mfu"]) await tick(`input[name=column-${column}]`);
  await wd.waitFor(".runs-table", { check: (t) => t.includes("NVIDIA H100") && /\d+\.\d %/.test(t), what: "the GPU and MFU columns" });
  await screenshot("runs-columns");

  step("an H100 run beside the published record, and projected to an H200 (what if)");
  const h100Run = await wd.exec("const r = [...document.querySelectorAll('tr[data-run]')].find((tr) => tr.textContent.includes('amp-bf16') && tr.textContent.includes('H100')); return r ? r.dataset.run : null");
  if (!h100Run) throw new Error("no amp-bf16 H100 run in the table");
  await wd.click(`tr[data-run='${h100Run}'] button.link`);
  await wd.waitFor(".vs-record", { check: (t) => t.includes("% of") && t.includes("ViT"), what: "the run beside the published record" });
  await wd.waitFor("#what-if-target option[value='H200']", { what: "the GPUs to project to" });
  await wd.exec("const s = document.querySelector('#what-if-target'); s.value = 'H200'; s.dispatchEvent(new Event('change', { bubbles: true }));");
  await wd.click(".what-if button");
  await wd.waitFor("[data-projected=true]", { check: (t) => t.includes("H200") && t.includes("projected, not measured") && t.includes("step's parts"), what: "the projection to an H200" });
  await wd.exec("document.querySelector('.vs-record').scrollIntoView()");
  await screenshot("what-if");
  await wd.click("#nav-compare");
  await wd.waitFor("#decision-matrix", { timeout: 30000 });

  step("charts follow the window's width");
  const chartWidth = () => wd.exec("const c = document.querySelector('figure.chart.line canvas'); return c ? c.getBoundingClientRect().width : 0");
  await until(async () => (await chartWidth()) > 0, () => "no line chart drawn in the GPU session's comparison");
  const wide = await chartWidth();
  const rect = await wd.request("GET", wd.s("/window/rect"));
  await wd.request("POST", wd.s("/window/rect"), { width: Math.round(rect.width * 0.7), height: rect.height });
  await until(async () => Math.abs((await chartWidth()) - wide) >= 20, () => `the chart stayed ${wide} px wide when the window narrowed`);
  figures.chart_width_px = { window_wide: wide, window_narrow: await chartWidth() };
  await wd.request("POST", wd.s("/window/rect"), { width: rect.width, height: rect.height });

  step("find the fastest setup: two batch sizes of the libtorch worker searched, live, then the winner's command");
  await wd.click("#nav-wizard");
  await wd.waitFor("input[name=steps]");
  // Probes of 40 steps (the CLI's own default for a search), where the
  // field's 100 made probes of 100 and confirmations of 200 steps.
  await wd.type("input[name=steps]", "40");
  // Only the libtorch worker at fp32: every other framework, release and precision unticked.
  await wd.exec(`for (const b of document.querySelectorAll("input[name=framework], input[name=release], input[name=precision]")) {
    const want = b.value === "tch" || b.value === "fp32";
    if (b.checked !== want) b.click();
  }`);
  await wd.type("#batch", "8,16");
  await wd.click("#tune > summary");
  await wd.type("input[name=tune_budget]", "10m");
  await press("#start-tune", "document.querySelector('#start-tune').disabled || document.querySelector('#tune-candidates, #tune-found')");
  await wd.waitFor("#tune-candidates", { timeout: 60000, what: "the search's candidates, live" });
  await screenshot("tune-live");
  await wd.waitFor("#tune-found", { timeout: 240000, what: "the search's answer" });
  const verdict = await wd.text("#tune-verdict");
  if (!/ wins: |a tie: |best so far: /.test(verdict)) throw new Error(`unexpected verdict: ${verdict}`);
  await wd.exec("document.querySelector('#tune-found').scrollIntoView()");
  await screenshot("tune-found");
  writeFileSync(join(out, "figures.json"), JSON.stringify(figures, null, 2));
  console.log(`e2e: passed ${JSON.stringify(figures)}`);
} catch (e) {
  console.error(`e2e: FAILED: ${e.stack ?? e}`);
  try {
    await screenshot("failure");
    const html = await wd.exec("return document.body.innerText");
    const errors = await wd.exec("return window.__trainbenchErrors");
    writeFileSync(join(out, "failure.txt"), `page errors: ${JSON.stringify(errors)}\n\n${html}`);
  } catch {
    // The window may be gone.
  }
  process.exitCode = 1;
} finally {
  await wd.quit();
}
