#!/usr/bin/env bash
# Builds torch-free test executables with a sanitizer preset of CMakePresets.json (asan: ASan +
# UBSan in build-asan/; tsan: TSan in build-tsan/, with scripts/tsan.supp) and runs every
# `unit` test built in that folder with the preset's ctest settings (tsan: but the ones it
# excludes below). Exits non-zero when a test fails or a sanitizer reports (each stops at its
# first report).
# docs/reliability.md#sanitizer-builds.
#
#   scripts/sanitize.sh asan|tsan [TARGET...]     default TARGETs: the fast set below
# LMTRAIN_SANITIZE_JOBS: parallel build and test jobs (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

PRESET=${1:-}
shift || true
EXCLUDE=''
case "$PRESET" in
  # The control plane's core, its stores, the scheduler, the job-file parser, the tokenizers
  # and the worker agent: the code that parses outside input or shares state between threads.
  asan) DEFAULT=(server_core_test scheduler_test sqlite_job_store_test job_store_contract_test
                 wal_checkpointer_test job_spec_test tokenizers_test job_runner_test
                 worker_agent_test artifact_cache_test) ;;
  # The threads of the dispatcher, the job manager and the worker agent; concurrent writers
  # of the job stores (group commit, the WAL checkpoint thread) and of the artifact cache; the
  # server's WatchJob fan-out, leader lease, HTTP API and in-process worker; the BPE word cache
  # of tokenizing threads. Not WatchReactorTest and
  # GrpcServerClientTest: they run a real in-process gRPC server and client, and TSan reports
  # gRPC's own threads racing inside the uninstrumented library (its slice buffers, and
  # abseil's lock graph behind its mutexes) (docs/reliability.md#sanitizer-builds).
  tsan) DEFAULT=(server_core_test job_runner_test worker_agent_test sqlite_sync_test
                 wal_checkpointer_test sqlite_job_store_test job_store_contract_test
                 artifact_cache_test watch_fanout_test leader_lease_test http_api_test
                 local_worker_test bpe_cache_test)
        EXCLUDE='|^WatchReactorTest\.|^GrpcServerClientTest\.' ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [TARGET...]" >&2
    exit 2 ;;
esac
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=("${DEFAULT[@]}"); fi
# The ctest fixture that serves PostgreSQL to the store tests is a unit test of its own.
TARGETS+=(postgres_test_fixture)
for tool in clang-14 clang++-14; do
  if ! command -v "$tool" >/dev/null; then
    echo "sanitize: $tool not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
    exit 2
  fi
done

JOBS=${LMTRAIN_SANITIZE_JOBS:-$(nproc)}
cmake --preset "$PRESET" >/dev/null
nice cmake --build "build-$PRESET" -j"$JOBS" --target "${TARGETS[@]}"
# The unit label: the fast tests (Python and deploy checks gain nothing from a sanitizer).
# Executables that were not built leave a *_NOT_BUILT placeholder test: not ours to run.
ctest --preset "$PRESET" -j"$JOBS" -L unit -E "_NOT_BUILT\$$EXCLUDE"
echo "sanitize: $PRESET: ${TARGETS[*]} ran clean"
