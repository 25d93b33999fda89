#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, *_fuzz) with clang-14, ASan and UBSan in build-fuzz/, and
# runs each for SECONDS (default 10) on a copy of its seed corpus fuzz/corpus/NAME/. Prints the
# executions per target. Exits non-zero when a target crashes, leaks, or a sanitizer reports
# (libFuzzer writes the input to build-fuzz/crashes/NAME/: add it to fuzz/corpus/NAME/ with the
# fix). docs/reliability.md#fuzzing-and-sanitizers.
#
#   scripts/fuzz.sh [SECONDS] [NAME...]     NAMEs: only those targets (e.g. job_spec)
# LMTRAIN_FUZZ_JOBS: parallel build jobs (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=${1:-10}
shift || true
if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]]; then
  echo "fuzz: SECONDS must be a whole number (got '$SECONDS_PER_TARGET')" >&2
  exit 2
fi
for tool in clang-14 clang++-14; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz: $tool not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
    exit 2
  fi
done

BUILD=build-fuzz
# Torch-free: the targets need no LibTorch, and LMTRAIN_BUILD_TRAINER=OFF keeps it out.
CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLMTRAIN_BUILD_FUZZERS=ON -DLMTRAIN_SANITIZE=address,undefined \
  -DLMTRAIN_BUILD_TESTS=OFF -DLMTRAIN_BUILD_TRAINER=OFF >/dev/null
mapfile -t ALL < <(cd fuzz && ls -1 ./*_fuzz.cc | sed 's|^\./||; s|_fuzz\.cc$||')
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=("${ALL[@]}"); fi
nice cmake --build "$BUILD" -j"${LMTRAIN_FUZZ_JOBS:-$(nproc)}" --target "${TARGETS[@]/%/_fuzz}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for name in "${TARGETS[@]}"; do
  work="$BUILD/fuzz-run/$name"
  crashes="$BUILD/crashes/$name"
  rm -rf "$work"
  mkdir -p "$work" "$crashes"
  if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$work/"; fi
  log="$BUILD/fuzz-run/$name.log"
  status=0
  "$BUILD/bin/${name}_fuzz" -max_total_time="$SECONDS_PER_TARGET" -timeout=25 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" "$work" >"$log" 2>&1 ||
    status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $name FAILED (exit $status) after ${runs:-?} executions; log: $log" >&2
    grep -m1 -E 'ERROR: |runtime error:|SUMMARY:' "$log" >&2 || tail -n 20 "$log" >&2
    failed+=("$name")
  else
    printf 'fuzz: %-18s ok  %10s executions in %ss\n' "$name" "${runs:-?}" "$SECONDS_PER_TARGET"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (inputs under $BUILD/crashes/)" >&2
  exit 1
fi
echo "fuzz: all ${#TARGETS[@]} targets ran clean"
