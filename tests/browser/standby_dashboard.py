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

import os
import sys

sys.dont_write_bytecode = True  # No __pycache__ in the source tree for dashboard.py.
from dashboard import check, open_page, origin_of, report  # noqa: E402


def run(pw, url, active, job_id, out_dir, problems):
    def failure_shot():
        page.screenshot(path=os.path.join(out_dir, "failure.png"), full_page=True)

    # No request may leave the standby's origin: the dashboard must not follow redirects.
    with open_page(pw, origin_of(url), problems, failure_shot) as page:
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


def main(argv):
    if len(argv) != 4 or not all(argv):
        print("usage: python3 standby_dashboard.py STANDBY_URL ACTIVE_URL JOB_ID OUT_DIR",
              file=sys.stderr)
        return 2
    url, active, job_id, out_dir = argv
    return report(lambda pw, problems: run(pw, url, active, job_id, out_dir, problems), {})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
