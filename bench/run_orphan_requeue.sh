#!/usr/bin/env bash
# How long lm-server takes to requeue the orphans of a restart, two or more builds side by side.
#   bench/run_orphan_requeue.sh BASELINE_BIN CANDIDATE_BIN [MORE_BIN ...]
#                                                              (e.g. ../main/build/bin build/bin)
# env: STORE (sqlite | postgres; default sqlite), JOBS (100000), ROUNDS (2), DURABLE (1: the
# PostgreSQL server keeps fsync and synchronous_commit on, as in production; default 1).
# `lm-bench-api --op prefill` fills one store once (bench/job_prefill.h: 5% of the jobs RUNNING
# on workers that no longer exist). Each run starts one build's lm-server with
# --lease-timeout-ms 1000 on a fresh copy of it (a copied data dir, or a PostgreSQL database
# made from the filled one as a template), with no worker and no client, and polls the store
# until no job is RUNNING or RETRYING. It prints one line: the seconds from the server's start
# and the span of the requeue in the store (first RETRYING event to last requeue event).
# Within a round the builds take turns, in the order given; lines name them "baseline",
# "candidate" (two builds) or "candidate 1", "candidate 2", ... (more).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BASELINE_BIN CANDIDATE_BIN [MORE_BIN ...]" >&2
  exit 2
fi
bins=()
for dir in "$@"; do bins+=("$(cd "$dir" && pwd)"); done
tools_bin="${bins[-1]}"  # The last build's lm-bench-api fills the store.
store="${STORE:-sqlite}"
jobs="${JOBS:-100000}"
rounds="${ROUNDS:-2}"
work="$(mktemp -d /tmp/lm-orphans.XXXXXX)"
chmod 755 "$work"  # The PostgreSQL server may run as the postgres user.
pid=""
pg=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$pg" ] && "$tools_bin/postgres_test_fixture" stop "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
# sql DB QUERY: one value from the run's store (DB: a data dir or a database name).
sql() {
  if [ "$store" = sqlite ]; then
    sqlite3 "file:$1/lm.db?mode=ro" "$2"
  else
    psql -qtA -h 127.0.0.1 -p "$pg" -U postgres -d "$1" -c "$2"
  fi
}

case "$store" in
  sqlite)
    "$tools_bin/lm-bench-api" --op prefill --prefill "$jobs" --data-dir "$work/base" | tail -n 1 ;;
  postgres)
    durable=()
    [ "${DURABLE:-1}" = 1 ] && durable=(--durable)
    "$tools_bin/postgres_test_fixture" start "$work/pg" "${durable[@]}" >/dev/null
    if [ -f "$work/pg/skip" ]; then echo "postgres skipped: $(cat "$work/pg/skip")"; exit 0; fi
    pg="$(cat "$work/pg/port")"
    sql postgres "CREATE DATABASE base" >/dev/null
    "$tools_bin/lm-bench-api" --op prefill --prefill "$jobs" \
      --store "postgres://postgres@127.0.0.1:$pg/base" | tail -n 1 ;;
  *) echo "STORE must be sqlite or postgres" >&2; exit 2 ;;
esac

n=0
for _ in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    n=$((n + 1))
    bin="${bins[$i]}"
    label=baseline
    if [ "$i" -gt 0 ]; then
      label=candidate
      [ ${#bins[@]} -gt 2 ] && label="candidate $i"
    fi
    if [ "$store" = sqlite ]; then
      db="$work/run$n"
      cp -r "$work/base" "$db"
      where=(--data-dir "$db")
    else
      db="run$n"
      sql postgres "CREATE DATABASE $db TEMPLATE base" >/dev/null
      where=(--store "postgres://postgres@127.0.0.1:$pg/$db")
    fi
    start="$(now_ms)"
    "$bin/lm-server" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 "${where[@]}" \
      --lease-timeout-ms 1000 >"$work/server$n.log" 2>&1 &
    pid=$!
    left=""
    for _ in $(seq 6000); do  # At most 10 minutes.
      sleep 0.1
      left="$(sql "$db" "SELECT count(*) FROM jobs WHERE state IN ('RUNNING', 'RETRYING')" \
        2>/dev/null || true)"
      [ "$left" = 0 ] && break
    done
    end="$(now_ms)"
    span="$(sql "$db" "SELECT max(time_ms) - min(time_ms) FROM events WHERE
      kind = 'state_change' AND time_ms >= $start AND
      (payload LIKE '%RETRYING%' OR payload LIKE '%requeued%')")"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    [ "$store" = sqlite ] && rm -rf "$db"
    echo "$label ($store, $jobs jobs): jobs left RUNNING or RETRYING $left;" \
      "done $(((end - start) / 1000)).$(((end - start) % 1000 / 100)) s after the start;" \
      "requeue span $span ms; load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
