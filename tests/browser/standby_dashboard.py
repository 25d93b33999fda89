"""Drives the system Chromium (headless, via Playwright) through a standby lm-server replica's
dashboard, while another replica is active:
  python3 standby_dashboard.py STANDBY_URL ACTIVE_URL JOB_ID OUT_DIR
Checks that the standby banner names the active replica with a link to the same page there,
that Cancel on the standby's job page tells the user to cancel on the active replica (the
dashboard does not follow the cross-origin redirect: no request leaves the standby's origin),
and that the workers page says the same. Prints one JSON summary line; exits 1 with the reason
(and OUT_DIR/failure.png) on a failed check, 2 on bad arguments.
Env: CHROMIUM (path; default /usr/bin/chromium).
"""

import json
import os
import sys

from playwright.sync_api import sync_playwright

from dashboard import CHROMIUM_ARGS, CheckFailed, check, message_of, origin_of


def run(pw, url, active, job_id, out_dir, problems):
    origin = origin_of(url)
    browser = pw.chromium.launch(
        executable_path=os.environ.get("CHROMIUM") or "/usr/bin/chromium",
        headless=True, args=CHROMIUM_ARGS)
    page = None
    try:
        page = browser.new_page(viewport={"width": 1360, "height": 900})
        page.set_default_timeout(30000)
        page.on("pageerror", lambda e: problems.append("page error: " + message_of(e)))

        def on_route(route):
            r = route.request.url
            if not r.startswith("data:") and origin_of(r) != origin:
                problems.append("request outside the standby: " + r)
                route.abort()
            else:
                route.continue_()
        page.route("**/*", on_route)

        page.goto(url + "#/jobs/" + job_id, wait_until="load")
        page.wait_for_selector("#standby:not(.hidden)")
        banner = page.eval_on_selector("#standby", """b => ({
            text: b.innerText, href: b.querySelector("a")?.getAttribute("href") || "" })""")
        check("standby" in banner["text"] and active in banner["text"],
              "banner names the active replica: %r" % banner["text"])
        check(banner["href"] == active + "/#/jobs/" + job_id,
              "banner links the same page there: %r" % banner["href"])

        page.wait_for_function(
            "() => document.getElementById('view').dataset.jobState === 'QUEUED'")
        page.click("#cancel-btn")
        page.wait_for_selector("#cancel-confirm", state="visible")
        page.click("#cancel-confirm")
        page.wait_for_selector(".notice.error")
        error = page.inner_text(".notice.error")
        check("standby" in error and active in error,
              "the cancel error names the active replica: %r" % error)
        page.screenshot(path=os.path.join(out_dir, "standby-cancel.png"), full_page=True)

        page.goto(url + "#/workers", wait_until="load")
        page.wait_for_function(
            "a => document.getElementById('view').innerText.includes(a)", arg=active)
        workers = page.inner_text("#view")
        check(not problems, "; ".join(problems))
        return {"ok": True, "banner": banner, "cancel_error": error, "workers": workers}
    except Exception:
        if page is not None:
            try:
                page.screenshot(path=os.path.join(out_dir, "failure.png"), full_page=True)
            except Exception:  # The browser is gone.
                pass
        raise
    finally:
        browser.close()


def main(argv):
    if len(argv) != 4 or not all(argv):
        print("usage: python3 standby_dashboard.py STANDBY_URL ACTIVE_URL JOB_ID OUT_DIR",
              file=sys.stderr)
        return 2
    url, active, job_id, out_dir = argv
    problems = []
    try:
        with sync_playwright() as pw:
            summary = run(pw, url, active, job_id, out_dir, problems)
    except (CheckFailed, Exception) as e:  # A failed check, a timeout, or the browser gone.
        error = message_of(e)
        print(error, file=sys.stderr)
        if problems:
            print("also: " + "; ".join(problems), file=sys.stderr)
        print(json.dumps({"ok": False, "error": error}, separators=(",", ":")), flush=True)
        return 1
    print(json.dumps(summary, separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
