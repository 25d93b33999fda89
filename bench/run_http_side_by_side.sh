#!/usr/bin/env bash
# lm-server's HTTP JSON API (what the dashboard polls), two builds side by side.
#   bench/run_http_side_by_side.sh BASELINE_BIN CANDIDATE_BIN     (e.g. ../base/build/bin build/bin)
# env: JOBS (100000), ROUNDS (2), CALLS (200 per path), BENCH (the lm-bench-api that fills the
# store; default CANDIDATE_BIN/lm-bench-api), PATHS (space-separated; default below).
# `lm-bench-api --op prefill` fills one SQLite store once (bench/job_prefill.h: 5% QUEUED, 5%
# RUNNING, the rest finished); each run starts a build's lm-server on a fresh copy of it (no
# worker; lm_server_on_copy.sh) and bench/http_api_load.py GETs each path CALLS times in a row
# on a kept-alive connection: one line per path with the latency and lm-server's CPU per call.
# Within a round the two builds alternate, the order swapped each round.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/lm_server_on_copy.sh
source "$here/lm_server_on_copy.sh"
side_by_side_init lm-http-sbs "$1" "$2"
calls="${CALLS:-200}"
# The dashboard's job list (200 a page, basic view), its "Active" filter, a full-view page and
# one job (the job page polls it).
default_paths="/api/v1/jobs?page_size=200&view=basic "
default_paths+="/api/v1/jobs?page_size=200&view=basic&state=QUEUED,SCHEDULED,RUNNING,PREEMPTED,RETRYING "
default_paths+="/api/v1/jobs?page_size=100 /api/v1/jobs/$((${JOBS:-100000} / 2))"
read -r -a paths <<<"${PATHS:-$default_paths}"

one_run() {  # one_run LABEL BIN
  local label="$1" bin="$2" http
  start_on_copy "$bin" "$work"
  http="$(sed -n 's#^lm-server: dashboard at http://\([^/]*\)/.*#\1#p' "$work/server.log")"
  python3 "$here/http_api_load.py" "$http" "$pid" "${paths[@]}" --calls "$calls" --label "$label"
  echo "  $label load $(cut -d' ' -f1 /proc/loadavg)"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "== prefill $jobs jobs"
"$bench" --op prefill --prefill "$jobs" --data-dir "$work/base" | tail -n 1
echo "uptime: $(uptime)"
side_by_side_rounds
