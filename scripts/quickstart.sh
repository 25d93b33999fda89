#!/usr/bin/env bash
# The README's quickstart: set up, build, start lm-server with an embedded worker on a fresh
# data folder, submit examples/tiny-gpt2/job.yaml, stream its metrics until it ends, print the
# job as JSON. On a terminal the server (and its dashboard) then stays up until Ctrl-C; otherwise
# it stops at once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Only the four programs it runs: no tests, no benchmarks.
LMTRAIN_BUILD_TARGETS="lm-server lm-worker lm-train lmctl" scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF
export PATH="$PWD/build/bin:$PATH"
DATA="${LMTRAIN_DATA:-$PWD/.quickstart}"
PORT="${LMTRAIN_PORT:-50051}"
HTTP_PORT="${LMTRAIN_HTTP_PORT:-8080}"
export LMCTL_SERVER="127.0.0.1:$PORT"
rm -rf "$DATA"
lm-server --listen "127.0.0.1:$PORT" --http-listen "127.0.0.1:$HTTP_PORT" --data-dir "$DATA" \
  --local-worker 1 > "$DATA.server.log" 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; wait $SERVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 50); do lmctl list > /dev/null 2>&1 && break; sleep 0.2; done
JOB=$(lmctl submit examples/tiny-gpt2/job.yaml | tail -n1)
echo "job $JOB submitted; dashboard: http://127.0.0.1:$HTTP_PORT/#/jobs/$JOB"
echo "streaming its events (lmctl watch $JOB):"
STATUS=0
lmctl watch "$JOB" || STATUS=$?
lmctl get "$JOB" -o json
echo "server log: $DATA.server.log; artifacts: $DATA/artifacts/jobs/$JOB"
if [ -t 0 ] && [ -t 1 ]; then
  echo "the dashboard stays up at http://127.0.0.1:$HTTP_PORT/ — press Ctrl-C to stop the server"
  trap 'exit $STATUS' INT
  while kill -0 $SERVER_PID 2>/dev/null; do sleep 1; done
fi
exit $STATUS
