#!/usr/bin/env bash
# ListJobs paging and lm-server memory on a large store: 100k jobs, 10k of them active.
#   bench/run_rss_bench.sh [BUILD_DIR]      (default: build)
# env: JOBS (100000), CLIENTS (32), SECONDS_PER_RUN (10), STORES ("sqlite postgres"),
# LIST_VIEWS ("full basic").
# Per store: `lm-bench-api --op prefill` fills a fresh store (bench/job_prefill.h: 5% QUEUED,
# 5% RUNNING, the rest finished); an lm-server (no worker) starts on it; its VmRSS/VmHWM
# (/proc/PID/status) are printed; lm-bench-api --op list runs at CLIENTS clients with
# page_size 100: first pages only, pages followed 10 deep by next_page_token, and
# state=QUEUED,RUNNING pages followed 10 deep; then once more at 1 client (the service time
# without queueing); each run once per view in LIST_VIEWS ("full basic": --list-view, side by
# side); then VmRSS/VmHWM again. The server runs with --lease-timeout-ms
# LEASE_TIMEOUT_MS (600000): the prefilled RUNNING jobs have no worker, and lm-server requeues
# such orphans 2 lease timeouts after its start (30 s by default), which would land inside the
# measurement (5k requeues, which slow list calls down; LEASE_TIMEOUT_MS=3000 with CLIENTS=4
# SECONDS_PER_RUN=20 puts them inside the first run on purpose). PostgreSQL runs on a
# throwaway server started by the tests' postgres_test_fixture (skipped where none can run).
# Prints `uptime`, one JSON line per run, and the memory lines.
set -euo pipefail
bin="$(cd "${1:-build}" && pwd)/bin"
jobs="${JOBS:-100000}"
clients="${CLIENTS:-32}"
secs="${SECONDS_PER_RUN:-10}"
lease_ms="${LEASE_TIMEOUT_MS:-600000}"
stores="${STORES:-sqlite postgres}"
views="${LIST_VIEWS:-full basic}"
work="$(mktemp -d /tmp/lm-rss-bench.XXXXXX)"
server_pid=""
pg_started=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [ -n "$pg_started" ] && "$bin/postgres_test_fixture" stop "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

memory() {  # memory LABEL
  echo "lm-server $1: $(grep -E '^(VmRSS|VmHWM)' "/proc/$server_pid/status" | tr -s ' \t' ' ' |
    paste -sd ' ')"
}

bench_store() {  # bench_store NAME [--store URI]
  local name="$1"; shift
  echo "== $name: prefill $jobs jobs"
  "$bin/lm-bench-api" --op prefill --prefill "$jobs" --data-dir "$work/$name" "$@"
  "$bin/lm-server" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$work/$name" \
    --lease-timeout-ms "$lease_ms" "$@" >"$work/$name.log" 2>&1 &
  server_pid=$!
  local addr=""
  for _ in $(seq 600); do
    addr="$(sed -n 's/^lm-server: listening on \([^,]*\),.*/\1/p' "$work/$name.log")"
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "lm-server did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
  memory "after start ($name)"
  echo "uptime: $(uptime)"
  local n run view
  for n_run in "$clients:--list-pages 1" "$clients:--list-pages 10" \
               "$clients:--list-pages 10 --list-states QUEUED,RUNNING" "1:--list-pages 10"; do
    n="${n_run%%:*}"; run="${n_run#*:}"
    for view in $views; do
      # shellcheck disable=SC2086
      "$bin/lm-bench-api" --server "$addr" --op list --clients "$n" --seconds "$secs" \
        --list-limit 100 --list-view "$view" $run | tail -n 1 |
        sed "s/^{/{\"store\":\"$name\",\"view\":\"$view\",\"args\":\"$run\",/"
    done
  done
  echo "uptime: $(uptime)"
  memory "after the list runs ($name)"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
}

for store in $stores; do
  case "$store" in
    sqlite) bench_store sqlite ;;
    postgres)
      "$bin/postgres_test_fixture" start "$work/pg" >/dev/null
      pg_started=1
      if [ -f "$work/pg/skip" ]; then echo "== postgres skipped: $(cat "$work/pg/skip")"; continue; fi
      bench_store postgres --store "postgres://postgres@127.0.0.1:$(cat "$work/pg/port")/postgres" ;;
    *) echo "unknown store '$store'" >&2; exit 2 ;;
  esac
done
