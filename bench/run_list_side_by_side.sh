#!/usr/bin/env bash
# ListJobs pages from a prefilled SQLite store, two lm-server builds side by side.
#   bench/run_list_side_by_side.sh BASELINE_BIN CANDIDATE_BIN     (e.g. ../main/build/bin build/bin)
# env: JOBS (100000), ROUNDS (2), SECONDS_PER_RUN (10), BENCH (lm-bench-api to drive both;
# default CANDIDATE_BIN/lm-bench-api), RUNS (the runs of a round, below).
# `lm-bench-api --op prefill` fills one store once (bench/job_prefill.h: 5% QUEUED, 5% RUNNING,
# the rest finished); each run starts the build's lm-server on a fresh copy of it (no worker,
# --lease-timeout-ms 600000 as in run_rss_bench.sh), drives `lm-bench-api --op list
# --list-limit 100` for SECONDS_PER_RUN, and prints one line: lm-server's CPU per page (utime +
# stime from /proc/PID/stat over the run, over the pages served), pages/s, p50/p99 ms, VmHWM
# and the 1-minute load. Within a round the two builds alternate run by run.
set -euo pipefail
# shellcheck source=bench/lm_server_on_copy.sh
source "$(dirname "$0")/lm_server_on_copy.sh"
side_by_side_init lm-list-sbs "$1" "$2"
secs="${SECONDS_PER_RUN:-10}"
default_runs="full 32 --list-pages 10|basic 32 --list-pages 10|full 32 --list-pages 1|"
default_runs+="full 32 --list-pages 10 --list-states QUEUED,RUNNING|full 1 --list-pages 10|"
default_runs+="basic 1 --list-pages 10"
runs="${RUNS:-$default_runs}"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

one_run() {  # one_run LABEL BIN VIEW CLIENTS [list args...]
  local label="$1" bin="$2" view="$3" clients="$4"; shift 4
  start_on_copy "$bin" "$work"
  local before after out hwm
  before="$(cpu_ticks "$pid")"
  out="$("$bench" --server "$addr" --op list --clients "$clients" --seconds "$secs" \
    --list-limit 100 --list-view "$view" "$@" | tail -n 1)"
  after="$(cpu_ticks "$pid")"
  hwm="$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  python3 - "$label" "$before" "$after" "$(getconf CLK_TCK)" "$out" "$hwm" \
    "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
label, before, after, hz, out, hwm, load = sys.argv[1:]
r = json.loads(out)
pages = r["calls"] - r.get("errors", 0)
us = (int(after) - int(before)) / int(hz) * 1e6 / max(pages, 1)
print(f"  {label:9s} {us:6.0f} us/page  {r['qps']:7.0f} pages/s  p50 {r['p50_ms']:6.2f}  "
      f"p99 {r['p99_ms']:7.2f} ms  errors {r.get('errors', 0)}  VmHWM {int(hwm) // 1024} MB  "
      f"load {load}")
PY
}

echo "== prefill $jobs jobs"
"$bench" --op prefill --prefill "$jobs" --data-dir "$work/base" | tail -n 1
echo "uptime: $(uptime)"
IFS='|' read -r -a run_list <<<"$runs"
for round in $(seq "$rounds"); do
  for run in "${run_list[@]}"; do
    echo "round $round: $run"
    # shellcheck disable=SC2086
    one_run baseline "$base_bin" $run
    # shellcheck disable=SC2086
    one_run candidate "$cand_bin" $run
  done
done
echo "uptime: $(uptime)"
