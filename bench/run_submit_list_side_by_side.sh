#!/usr/bin/env bash
# Durable submits while others list pages, two lm-server builds side by side.
#   bench/run_submit_list_side_by_side.sh BASELINE_BIN CANDIDATE_BIN   (e.g. ../main/build/bin build/bin)
# env: JOBS (100000), ROUNDS (2), SECONDS_PER_RUN (15), SUBMIT_CLIENTS (32), LIST_CLIENTS (8),
# LIST_RATE (pages/s offered by the list clients; empty, the default: a closed loop), BENCH
# (lm-bench-api to drive both; default CANDIDATE_BIN/lm-bench-api), BASELINE_ARGS and
# CANDIDATE_ARGS (more lm-server flags for each, e.g. "--sqlite-read-connections 1": one build
# twice, two settings).
# `lm-bench-api --op prefill` fills one SQLite store once (bench/job_prefill.h: 5% QUEUED, 5%
# RUNNING, the rest finished); each run starts the build's lm-server on a fresh copy of it (no
# worker, --lease-timeout-ms 600000 as in run_rss_bench.sh) and runs, at the same time,
# `lm-bench-api --op submit` (SUBMIT_CLIENTS, closed loop) and `lm-bench-api --op list
# --list-limit 100 --list-pages 10 --list-view full` (LIST_CLIENTS) for SECONDS_PER_RUN. It
# prints the submit line, the list line, the WAL file's size at the end and lm-server's VmHWM.
# The builds alternate run by run, the baseline first in odd rounds and second in even ones.
set -euo pipefail
# shellcheck source=bench/lm_server_on_copy.sh
source "$(dirname "$0")/lm_server_on_copy.sh"
side_by_side_init lm-submit-list-sbs "$1" "$2"
secs="${SECONDS_PER_RUN:-15}"
submit_clients="${SUBMIT_CLIENTS:-32}"
list_clients="${LIST_CLIENTS:-8}"
read -r -a base_args <<<"${BASELINE_ARGS:-}"
read -r -a cand_args <<<"${CANDIDATE_ARGS:-}"
rate_args=()
[ -n "${LIST_RATE:-}" ] && rate_args=(--rate "$LIST_RATE")

summary() {  # summary LABEL JSON_LINE
  python3 - "$1" "$2" <<'PY'
import json, sys
label, line = sys.argv[1:]
r = json.loads(line)
late = f"  late {r['late_calls']}" if "late_calls" in r else ""
print(f"  {label:18s} {r['qps']:7.0f}/s  p50 {r['p50_ms']:6.2f}  p99 {r['p99_ms']:7.2f}  "
      f"max {r['max_ms']:7.1f} ms  errors {r.get('errors', 0)}{late}")
PY
}

one_run() {  # one_run LABEL BIN [lm-server flags...]
  local label="$1" bin="$2"; shift 2
  start_on_copy "$bin" "$work" "$@"
  echo " $label (load $(cut -d' ' -f1 /proc/loadavg))"
  "$bench" --server "$addr" --op list --clients "$list_clients" --seconds "$secs" \
    --list-limit 100 --list-pages 10 --list-view full "${rate_args[@]}" | tail -n 1 \
    >"$work/list.out" &
  local lister=$!
  local submits
  submits="$("$bench" --server "$addr" --op submit --clients "$submit_clients" \
    --seconds "$secs" | tail -n 1)"
  wait "$lister"
  summary submits "$submits"
  summary "list pages" "$(cat "$work/list.out")"
  echo "  WAL $(($(stat -c %s "$work/run/lm.db-wal") / 1048576)) MB  VmHWM" \
    "$(($(awk '/^VmHWM/ {print $2}' "/proc/$pid/status") / 1024)) MB"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "== prefill $jobs jobs"
"$bench" --op prefill --prefill "$jobs" --data-dir "$work/base" | tail -n 1
echo "uptime: $(uptime)"
for round in $(seq "$rounds"); do
  echo "round $round"
  if [ $((round % 2)) -eq 1 ]; then
    one_run baseline "$base_bin" "${base_args[@]}"
    one_run candidate "$cand_bin" "${cand_args[@]}"
  else
    one_run candidate "$cand_bin" "${cand_args[@]}"
    one_run baseline "$base_bin" "${base_args[@]}"
  fi
done
echo "uptime: $(uptime)"
