#!/usr/bin/env bash
# Control-plane API benchmark: every lm-bench-api op at 1, 4, 16, 32 and 64 clients.
#   bench/run_api_bench.sh [BUILD_DIR]     (default: build)
# env: SECONDS_PER_RUN (5), CLIENTS ("1 4 16 32 64"), OPS ("get list watch submit
# submit-to-running"), CEILING (1: every get/list/watch/submit run is followed by the same load
# on lm-bench-api's do-nothing JobService, and its line carries ceiling_qps and
# ratio_to_ceiling; 0: not), STORE ("sqlite", or "postgres": the servers keep their jobs in a
# throwaway PostgreSQL server that the tests' postgres_test_fixture starts with --durable, i.e.
# with PostgreSQL's durable defaults (fsync, synchronous_commit on), each server in a database
# of its own; binaries from $LMTRAIN_PG_BIN or the newest /usr/lib/postgresql/N/bin; as root
# it runs as the postgres user), RATE (unset: closed loop; R: open loop at R calls/s in total,
# lm-bench-api --rate, for every op but submit-to-running), SERVER (the lm-server binary to
# measure; default BUILD_DIR/bin/lm-server: another build's server under this lm-bench-api).
# Every line carries the lm-server process's CPU per call (server_cpu_us_per_call, from
# /proc/PID/stat over the timed run) and lm-bench-api's own (bench_cpu_us_per_call).
# submit/get/list/watch run against an lm-server with no worker (submitted jobs stay QUEUED);
# submit-to-running runs against a second, fresh lm-server with one lm-worker (1 slot) whose
# trainer is bench/fake_trainer.sh (kept running until the bench cancels the job once RUNNING),
# so each job starts on an idle worker. Both servers use
# temporary data dirs, removed at the end. Prints a table, then each run's JSON line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(cd "${1:-build}" && pwd)/bin"
server_bin="${SERVER:-$bin/lm-server}"
secs="${SECONDS_PER_RUN:-5}"
clients_list="${CLIENTS:-1 4 16 32 64}"
ops=" ${OPS:-get list watch submit submit-to-running} "
work="$(mktemp -d "${TMPDIR:-/tmp}/lm-api-bench.XXXXXX")"
store="${STORE:-sqlite}"
ceiling=()
[ "${CEILING:-1}" = 1 ] && ceiling=(--ceiling)
rate=()
[ -n "${RATE:-}" ] && rate=(--rate "$RATE")
pids=()
pg_started=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$pg_started" ] && "$bin/postgres_test_fixture" stop "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# start_postgres: the throwaway PostgreSQL server, published in $work/pg.
start_postgres() {
  "$bin/postgres_test_fixture" start "$work/pg" --durable >/dev/null
  pg_started=1
  if [ -f "$work/pg/skip" ]; then echo "no PostgreSQL: $(cat "$work/pg/skip")" >&2; exit 1; fi
}

# start_server NAME: starts lm-server on a free port (with STORE=postgres, on a new database of
# its own); sets $addr.
start_server() {
  local store_flag=() uri
  if [ "$store" = postgres ]; then
    uri="$("$bin/postgres_test_fixture" database "$work/pg")"
    store_flag=(--store "$uri")
  fi
  "$server_bin" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$work/$1" \
    "${store_flag[@]}" >"$work/$1.log" 2>&1 &
  pids+=($!)
  server_pid=$!
  for _ in $(seq 100); do
    addr="$(sed -n 's/^lm-server: listening on \([^,]*\),.*/\1/p' "$work/$1.log")"
    [ -n "$addr" ] && return 0
    sleep 0.1
  done
  echo "lm-server did not start:" >&2; cat "$work/$1.log" >&2; exit 1
}

results="$work/results.jsonl"
run() {  # run ADDR OP CLIENTS [FLAGS...]; the server's pid in $server_pid
  "$bin/lm-bench-api" --server "$1" --op "$2" --clients "$3" --seconds "$secs" \
    --server-pid "$server_pid" "${@:4}" \
    2>>"$work/bench.err" | tail -n 1 | tee -a "$results" >/dev/null || true
}

echo "uptime: $(uptime)"
echo "store: $store"
echo "server: $server_bin"
case "$store" in
  sqlite) ;;
  postgres) start_postgres ;;
  *) echo "STORE must be sqlite or postgres (got '$store')" >&2; exit 2 ;;
esac
start_server api
api_addr="$addr"
for op in get list watch submit; do
  [[ "$ops" == *" $op "* ]] || continue
  for n in $clients_list; do run "$api_addr" "$op" "$n" "${ceiling[@]}" "${rate[@]}"; done
done

if [[ "$ops" == *" submit-to-running "* ]]; then
# Stop the first server: its queue of submitted jobs would cost CPU in every scheduling pass.
kill "${pids[0]}" 2>/dev/null || true
start_server s2r
# The fake trainer keeps running (as a real one does) until lm-bench-api cancels the job.
FAKE_TRAINER_SECONDS=60 "$bin/lm-worker" --server "$addr" --work-dir "$work/worker" --slots 1 \
  --trainer "$here/fake_trainer.sh" >"$work/worker.log" 2>&1 &
pids+=($!)
sleep 1
run "$addr" submit-to-running 1
fi

printf '%-18s %7s %8s %9s %9s %9s %9s %7s %7s %7s %9s %6s\n' OP CLIENTS OFFERED QPS P50_MS \
  P90_MS P99_MS ERRORS LATE SRV_US CEIL_QPS RATIO
python3 - "$results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print('%-18s %7d %8s %9.0f %9.3f %9.3f %9.3f %7d %7s %7s %9s %6s' % (r['op'], r['clients'],
          r.get('offered_qps', '-'), r['qps'], r['p50_ms'], r['p90_ms'], r['p99_ms'],
          r['errors'], r.get('late_calls', '-'), r.get('server_cpu_us_per_call', '-'),
          r.get('ceiling_qps', '-'), r.get('ratio_to_ceiling', '-')))
PY
echo "uptime: $(uptime)"
cat "$results"
