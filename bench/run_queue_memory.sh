#!/usr/bin/env bash
# lm-server's memory with a deep queue, two builds side by side: a restart on a store of JOBS
# QUEUED jobs, as after a server restart behind a long backlog.
#   bench/run_queue_memory.sh BASELINE_BIN CANDIDATE_BIN     (e.g. ../base/build/bin build/bin)
# env: JOBS (100000), ROUNDS (2), BENCH (the lm-bench-api that fills the store; default
# CANDIDATE_BIN/lm-bench-api).
# `lm-bench-api --op prefill --prefill-all-queued` fills one SQLite store once (every job
# QUEUED, each with the spec lm-server stores for the submit op's job file); each run starts a
# build's lm-server on a fresh copy of it (no worker; lm_server_on_copy.sh), submits one job
# (an event: the dispatcher loads its queue from the store for the pass it runs) and asks for
# the oldest job over the HTTP JSON API until its answer carries a waiting reason (which only
# a job in the dispatcher's queue has). One line per run: lm-server's VmRSS and VmHWM after
# start and after that answer, and the seconds from the submit to that answer. Within a round
# the two builds alternate, the order swapped each round.
set -euo pipefail
# shellcheck source=bench/lm_server_on_copy.sh
source "$(dirname "$0")/lm_server_on_copy.sh"
side_by_side_init lm-queue-memory "$1" "$2"

memory_mb() {  # memory_mb FIELD: VmRSS or VmHWM of lm-server, in MB
  awk -v f="$1:" '$1 == f {printf "%.1f", $2 / 1024}' "/proc/$pid/status"
}

one_run() {  # one_run LABEL BIN
  local label="$1" bin="$2"
  start_on_copy "$bin" "$work"
  local http rss0 hwm0 start end code
  http="$(sed -n 's#^lm-server: dashboard at \(http://[^/]*\)/.*#\1#p' "$work/server.log")"
  rss0="$(memory_mb VmRSS)"
  hwm0="$(memory_mb VmHWM)"
  start="$(date +%s.%N)"
  # A submit is an event: the dispatcher loads its queue from the store for the pass it runs.
  "$bench" --server "$addr" --op submit --clients 1 --seconds 0.2 >/dev/null
  for _ in $(seq 600); do
    code="$(curl -s -o "$work/job.json" -w '%{http_code}' "$http/api/v1/jobs/1")"
    python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("waiting_reason") else 1)' \
      "$work/job.json" 2>/dev/null && break
    sleep 0.1
  done
  end="$(date +%s.%N)"
  python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("waiting_reason") else 1)' \
    "$work/job.json" ||
    { echo "no waiting reason for job 1 (HTTP $code): $(head -c 300 "$work/job.json")" >&2; exit 1; }
  printf '  %-9s after start: VmRSS %6s MB VmHWM %6s MB | queue loaded: VmRSS %6s MB VmHWM %6s MB | submit to reason %5.2f s | load %s\n' \
    "$label" "$rss0" "$hwm0" "$(memory_mb VmRSS)" "$(memory_mb VmHWM)" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" "$(cut -d' ' -f1 /proc/loadavg)"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "== prefill $jobs QUEUED jobs"
"$bench" --op prefill --prefill "$jobs" --prefill-all-queued --data-dir "$work/base" | tail -n 1
echo "uptime: $(uptime)"
side_by_side_rounds
