# shellcheck shell=bash disable=SC2034  # Sets variables for the scripts that source it.
# Sourced by the side-by-side scripts.
#
# side_by_side_init NAME BASELINE_BIN CANDIDATE_BIN sets base_bin and cand_bin (absolute),
# bench (env BENCH; default CANDIDATE_BIN/lm-bench-api), jobs (env JOBS, 100000), rounds (env
# ROUNDS, 2) and work (a fresh /tmp/NAME.XXXXXX), and on the script's exit stops the server
# start_on_copy left running, if any, and removes work.
side_by_side_init() {
  base_bin="$(cd "$2" && pwd)"
  cand_bin="$(cd "$3" && pwd)"
  bench="${BENCH:-$cand_bin/lm-bench-api}"
  jobs="${JOBS:-100000}"
  rounds="${ROUNDS:-2}"
  work="$(mktemp -d "/tmp/$1.XXXXXX")"
  pid=""
  addr=""
  trap side_by_side_cleanup EXIT
}
# side_by_side_rounds: `rounds` rounds of `one_run LABEL BIN` (the caller's) for the baseline and
# the candidate, the order swapped each round.
side_by_side_rounds() {
  local round
  for round in $(seq "$rounds"); do
    echo "== round $round"
    if [ $((round % 2)) -eq 1 ]; then
      one_run baseline "$base_bin"; one_run candidate "$cand_bin"
    else
      one_run candidate "$cand_bin"; one_run baseline "$base_bin"
    fi
  done
}
side_by_side_cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}

# start_on_copy BIN WORK [lm-server flags...] copies the
# prefilled store WORK/base to WORK/run and starts BIN/lm-server on it (loopback, any free
# ports, no worker, --lease-timeout-ms 600000 so that the prefill's orphaned RUNNING jobs are
# not requeued mid-run, as in run_rss_bench.sh); sets `pid` and `addr` (HOST:PORT of its gRPC
# API). Exits the script when the server does not start within 60 s.
start_on_copy() {
  local bin="$1" work="$2"; shift 2
  rm -rf "$work/run" && cp -r "$work/base" "$work/run"
  : >"$work/server.log"  # Empty before the server starts: no address of the last run's.
  "$bin/lm-server" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$work/run" \
    --lease-timeout-ms 600000 "$@" >"$work/server.log" 2>&1 &
  pid=$!
  addr=""
  for _ in $(seq 600); do
    addr="$(sed -n 's/^lm-server: listening on \([^,]*\),.*/\1/p' "$work/server.log")"
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "lm-server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
}
