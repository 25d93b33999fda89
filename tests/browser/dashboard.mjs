// Drives the system Chromium (headless, via puppeteer-core; no browser is downloaded) through
// lm-server's dashboard, against a running lm-server with a RUNNING training job:
//   node dashboard.mjs URL JOB_ID OUT_DIR
// Checks the jobs table row, the state and user filters, the job page's charts (SVG points
// drawn from the metric history), cancels the job from the page and waits for CANCELLED, then
// the workers page. Saves screenshots in OUT_DIR and prints one JSON summary line on stdout.
// Exits 1 with the reason (and OUT_DIR/failure.png) on any failed check. Env: CHROMIUM (path).
import puppeteer from "puppeteer-core";
import path from "node:path";

const [url, jobId, outDir] = process.argv.slice(2);
if (!url || !jobId || !outDir) {
  console.error("usage: node dashboard.mjs URL JOB_ID OUT_DIR");
  process.exit(2);
}
const origin = new URL(url).origin;
const shots = [];
const problems = [];  // Page errors and off-origin requests: any is a failure.

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

async function shot(page, name) {
  const file = path.join(outDir, name);
  await page.screenshot({ path: file, fullPage: true });
  shots.push(file);
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-sync",
         "--disable-background-networking", "--disable-component-update"],
  defaultViewport: { width: 1360, height: 900 },
});
let page;
let exitCode = 0;
try {
  page = await browser.newPage();
  page.setDefaultTimeout(60000);
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()} (${m.location().url || "?"})`);
  });
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    if (new URL(r.url()).origin !== origin && !r.url().startsWith("data:")) {
      problems.push("request outside lm-server: " + r.url());
      r.abort();
    } else {
      r.continue();
    }
  });

  // Jobs table: the running job's row, with its state, user and progress.
  await page.goto(url + "#/jobs", { waitUntil: "load" });
  const row = `#jobs-table tbody tr[data-job-id="${jobId}"]`;
  await page.waitForSelector(row);
  const rowInfo = await page.$eval(row, (tr) => ({
    state: tr.dataset.state, text: tr.innerText, bars: tr.querySelectorAll(".progress .bar").length }));
  check(["RUNNING", "SCHEDULED"].includes(rowInfo.state), `row state is ${rowInfo.state}`);
  check(rowInfo.text.includes("browser-job"), "row shows the job name: " + rowInfo.text);
  await page.waitForFunction((sel) => document.querySelector(sel + " .progress .bar"), {}, row);
  const rows = await page.$$eval("#jobs-table tbody tr[data-job-id]", (t) => t.length);
  await shot(page, "jobs.png");

  // Filters: a state the job is not in hides it; an unknown user matches nothing.
  await page.select("#filter-state", "SUCCEEDED");
  await page.waitForFunction((sel) => !document.querySelector(sel), {}, row);
  await page.select("#filter-state", "");
  await page.waitForSelector(row);
  await page.type("#filter-user", "nobody-here");
  await page.keyboard.press("Enter");
  await page.$eval("#filter-user", (e) => e.dispatchEvent(new Event("change")));
  await page.waitForFunction((sel) => !document.querySelector(sel), {}, row);
  await page.$eval("#filter-user", (e) => { e.value = ""; e.dispatchEvent(new Event("change")); });
  await page.waitForSelector(row);

  // Job page: the charts have points from the stored metric history.
  // The table is redrawn on every poll: click inside the page, where the row cannot go stale.
  await page.$eval(row, (tr) => tr.click());
  await page.waitForFunction((id) => location.hash === "#/jobs/" + id, {}, jobId);
  await page.waitForFunction(() => {
    const n = (sel) => Number(document.querySelector(sel)?.dataset.points || 0);
    return n("#chart-loss") >= 3 && n("#chart-lr") >= 3 && n("#chart-eval") >= 1;
  });
  const charts = await page.evaluate(() => {
    const poly = (sel) => document.querySelector(sel);
    const pts = (p) => (p ? p.getAttribute("points").trim().split(/\s+/).length : 0);
    return {
      loss: Number(document.querySelector("#chart-loss").dataset.points),
      trainLossPolyline: pts(poly('#chart-loss polyline[data-series="train loss"]')),
      evalPoints: Number(document.querySelector("#chart-eval").dataset.points),
      lr: Number(document.querySelector("#chart-lr").dataset.points),
      events: document.querySelectorAll("#events-table tbody tr").length,
      cancelEnabled: !document.querySelector("#cancel-btn").disabled,
    };
  });
  check(charts.trainLossPolyline >= 3, `train loss polyline has ${charts.trainLossPolyline} points`);
  check(charts.events >= 3, `events table has ${charts.events} rows`);
  check(charts.cancelEnabled, "Cancel button is enabled for a running job");
  await shot(page, "job.png");

  // Workers page: the worker running the job, its slots in use.
  await page.goto(url + "#/workers", { waitUntil: "load" });
  const worker = "#workers-table tbody tr[data-worker-id]";
  await page.waitForFunction((sel, id) => [...document.querySelectorAll(sel)].some(
    (tr) => tr.querySelector(`a[href="#/jobs/${id}"]`) && /100%/.test(tr.innerText)), {}, worker, jobId);
  const workers = await page.$$eval(worker, (t) => t.length);
  await shot(page, "workers.png");

  // Cancel from the job page: the button asks for confirmation, then the job ends CANCELLED.
  await page.goto(url + "#/jobs/" + jobId, { waitUntil: "load" });
  await page.waitForFunction(() => document.getElementById("view").dataset.jobState === "RUNNING");
  await page.click("#cancel-btn");
  await page.waitForSelector("#cancel-confirm", { visible: true });
  await page.click("#cancel-confirm");
  await page.waitForFunction(() => document.getElementById("view").dataset.jobState === "CANCELLED",
                             { timeout: 60000 });
  check(await page.$eval("#cancel-btn", (b) => b.disabled), "Cancel button disabled once cancelled");
  await shot(page, "job-cancelled.png");

  check(problems.length === 0, problems.join("; "));
  console.log(JSON.stringify({ ok: true, rows, charts, workers, screenshots: shots }));
} catch (e) {
  exitCode = 1;
  console.error(e.message);
  if (problems.length) console.error("also: " + problems.join("; "));
  if (page) {
    try { await shot(page, "failure.png"); } catch (ignored) { /* browser gone */ }
  }
  console.log(JSON.stringify({ ok: false, error: e.message, screenshots: shots }));
} finally {
  await browser.close();
}
process.exit(exitCode);
