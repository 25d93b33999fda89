"""Drives the system Chromium (headless, via Playwright; no browser is downloaded) through
lm-server's dashboard, against a running lm-server with a RUNNING training job:
  python3 dashboard.py URL JOB_ID OUT_DIR
Checks the jobs table row, the state and user filters, the job page's charts (SVG points drawn
from the metric history), the workers page, then cancels the job from the page and waits for
CANCELLED. Saves screenshots in OUT_DIR and prints one JSON summary line on stdout. Exits 1 with
the reason (and OUT_DIR/failure.png) on any failed check, 2 on bad arguments.
Env: CHROMIUM (path; default /usr/bin/chromium). Needs PyPI's playwright (scripts/setup.sh
--tests installs it in .venv); Playwright's own browser downloads are never used.
"""

import contextlib
import json
import os
import sys
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

# Used for any user. --no-sandbox: Chromium's sandbox cannot start as root, where the test
# usually runs (Playwright also adds it by default, unless chromium_sandbox=True).
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-sync",
    "--disable-background-networking", "--disable-component-update",
]


class CheckFailed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CheckFailed("check failed: " + what)


def origin_of(url):
    """scheme://host[:port] of an http(s) URL, like the browser's URL.origin."""
    u = urlsplit(url)
    default = {"http": 80, "https": 443}.get(u.scheme)
    host = u.hostname or ""
    if ":" in host:
        host = "[" + host + "]"
    port = "" if u.port in (None, default) else ":%d" % u.port
    return "%s://%s%s" % (u.scheme, host, port)


def message_of(e):
    return getattr(e, "message", None) or str(e) or type(e).__name__


@contextlib.contextmanager
def open_page(pw, origin, problems, on_failure):
    """A page in a fresh headless system Chromium ($CHROMIUM, default /usr/bin/chromium). Page
    errors, console errors and requests outside `origin` (aborted) go to `problems`. When the
    block raises, on_failure() runs first (a screenshot); the browser is closed either way."""
    browser = pw.chromium.launch(
        executable_path=os.environ.get("CHROMIUM") or "/usr/bin/chromium",
        headless=True, args=CHROMIUM_ARGS)
    page = None
    try:
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        page.set_default_timeout(60000)
        page.on("pageerror", lambda e: problems.append("page error: " + message_of(e)))

        def on_console(m):
            if m.type == "error":
                where = (m.location or {}).get("url") or "?"
                problems.append("console error: %s (%s)" % (m.text, where))
        page.on("console", on_console)

        def on_route(route):
            r = route.request.url
            if not r.startswith("data:") and origin_of(r) != origin:
                problems.append("request outside " + origin + ": " + r)
                route.abort()
            else:
                route.continue_()
        page.route("**/*", on_route)
        yield page
    except Exception:
        if page is not None:
            try:
                on_failure()
            except Exception:  # The browser is gone.
                pass
        raise
    finally:
        browser.close()


def report(run_checks, failure_extra):
    """Runs run_checks(pw, problems) and prints one JSON summary line: its result, or
    {"ok": false, "error": ...} plus failure_extra. Returns the exit code (0 or 1)."""
    problems = []
    try:
        with sync_playwright() as pw:
            summary = run_checks(pw, problems)
    except Exception as e:  # A failed check, a Playwright timeout, or the browser gone.
        error = message_of(e)
        print(error, file=sys.stderr)
        if problems:
            print("also: " + "; ".join(problems), file=sys.stderr)
        print(json.dumps(dict({"ok": False, "error": error}, **failure_extra),
                         separators=(",", ":")), flush=True)
        return 1
    print(json.dumps(summary, separators=(",", ":")), flush=True)
    return 0


def run(pw, url, job_id, out_dir, shots, problems):
    def shot(name):
        path = os.path.join(out_dir, name)
        page.screenshot(path=path, full_page=True)
        shots.append(path)

    # Every request must stay on lm-server.
    with open_page(pw, origin_of(url), problems, lambda: shot("failure.png")) as page:
        # Jobs table: the running job's row, with its state, user and progress.
        page.goto(url + "#/jobs", wait_until="load")
        row = '#jobs-table tbody tr[data-job-id="%s"]' % job_id
        page.wait_for_selector(row, state="attached")
        row_info = page.eval_on_selector(row, """tr => ({
            state: tr.dataset.state, text: tr.innerText,
            bars: tr.querySelectorAll(".progress .bar").length })""")
        check(row_info["state"] in ("RUNNING", "SCHEDULED"), "row state is %s" % row_info["state"])
        check("browser-job" in row_info["text"], "row shows the job name: " + row_info["text"])
        page.wait_for_function("sel => document.querySelector(sel + ' .progress .bar')", arg=row)
        rows = page.eval_on_selector_all("#jobs-table tbody tr[data-job-id]", "t => t.length")
        shot("jobs.png")

        # Filters: a state the job is not in hides it; an unknown user matches nothing.
        page.select_option("#filter-state", value="SUCCEEDED")
        page.wait_for_function("sel => !document.querySelector(sel)", arg=row)
        page.select_option("#filter-state", value="")
        page.wait_for_selector(row, state="attached")
        page.locator("#filter-user").press_sequentially("nobody-here")
        page.keyboard.press("Enter")
        page.eval_on_selector("#filter-user", "e => e.dispatchEvent(new Event('change'))")
        page.wait_for_function("sel => !document.querySelector(sel)", arg=row)
        page.eval_on_selector(
            "#filter-user", "e => { e.value = ''; e.dispatchEvent(new Event('change')); }")
        page.wait_for_selector(row, state="attached")

        # Job page: the charts have points from the stored metric history.
        # The table is redrawn on every poll: click inside the page, where the row cannot go
        # stale.
        page.eval_on_selector(row, "tr => tr.click()")
        page.wait_for_function("id => location.hash === '#/jobs/' + id", arg=job_id)
        page.wait_for_function("""() => {
            const n = (sel) => Number(document.querySelector(sel)?.dataset.points || 0);
            return n("#chart-loss") >= 3 && n("#chart-lr") >= 3 && n("#chart-eval") >= 1;
        }""")
        charts = page.evaluate("""() => {
            const poly = (sel) => document.querySelector(sel);
            const pts = (p) => (p ? p.getAttribute("points").trim().split(/\\s+/).length : 0);
            return {
              loss: Number(document.querySelector("#chart-loss").dataset.points),
              trainLossPolyline: pts(poly('#chart-loss polyline[data-series="train loss"]')),
              evalPoints: Number(document.querySelector("#chart-eval").dataset.points),
              lr: Number(document.querySelector("#chart-lr").dataset.points),
              events: document.querySelectorAll("#events-table tbody tr").length,
              cancelEnabled: !document.querySelector("#cancel-btn").disabled,
            };
        }""")
        check(charts["trainLossPolyline"] >= 3,
              "train loss polyline has %s points" % charts["trainLossPolyline"])
        check(charts["events"] >= 3, "events table has %s rows" % charts["events"])
        check(charts["cancelEnabled"], "Cancel button is enabled for a running job")
        # The job's RFC 3339 times (docs/api.md) become local dates, and the elapsed time.
        times = page.evaluate("""() => {
            const dd = {};
            for (const dt of document.querySelectorAll("dl.kv dt")) {
              dd[dt.textContent] = dt.nextElementSibling.textContent;
            }
            const card = (k) => [...document.querySelectorAll(".card")].find(
                (c) => c.querySelector(".k").textContent === k);
            return { submitted: dd["Submitted"], started: dd["Started"],
                     elapsed: card("Elapsed").querySelector(".v").textContent,
                     tokensSeen: card("Tokens seen")?.querySelector(".v").textContent };
        }""")
        for key in ("submitted", "started"):
            check(times[key] not in ("—", "Invalid Date") and "2" in times[key],
                  "%s shows a date: %r" % (key, times[key]))
        check(times["elapsed"] != "—", "elapsed shows a duration: %r" % times["elapsed"])
        # The job counts its input tokens (include_num_input_tokens_seen): 8 blocks of 32 per
        # update, so a multiple of 256 with thousands separators.
        seen = (times["tokensSeen"] or "").replace(",", "")
        check(seen.isdigit() and int(seen) > 0 and int(seen) % 256 == 0,
              "Tokens seen card shows the count: %r" % times["tokensSeen"])
        shot("job.png")

        # Workers page: the worker running the job, its slots in use.
        page.goto(url + "#/workers", wait_until="load")
        worker = "#workers-table tbody tr[data-worker-id]"
        page.wait_for_function("""([sel, id]) => [...document.querySelectorAll(sel)].some(
            (tr) => tr.querySelector(`a[href="#/jobs/${id}"]`) && /100%/.test(tr.innerText))""",
                               arg=[worker, job_id])
        workers = page.eval_on_selector_all(worker, "t => t.length")
        shot("workers.png")

        # Cancel from the job page: the button asks for confirmation, then the job ends
        # CANCELLED.
        page.goto(url + "#/jobs/" + job_id, wait_until="load")
        page.wait_for_function(
            "() => document.getElementById('view').dataset.jobState === 'RUNNING'")
        page.click("#cancel-btn")
        page.wait_for_selector("#cancel-confirm", state="visible")
        page.click("#cancel-confirm")
        page.wait_for_function(
            "() => document.getElementById('view').dataset.jobState === 'CANCELLED'",
            timeout=60000)
        check(page.eval_on_selector("#cancel-btn", "b => b.disabled"),
              "Cancel button disabled once cancelled")
        shot("job-cancelled.png")

        check(not problems, "; ".join(problems))
        return {"ok": True, "rows": rows, "charts": charts, "workers": workers,
                "screenshots": shots}


def main(argv):
    if len(argv) != 3 or not all(argv):
        print("usage: python3 dashboard.py URL JOB_ID OUT_DIR", file=sys.stderr)
        return 2
    url, job_id, out_dir = argv
    shots = []
    return report(lambda pw, problems: run(pw, url, job_id, out_dir, shots, problems),
                  {"screenshots": shots})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
