#!/usr/bin/env bash
# The README's test command: set up, build, run every test with ctest, then, when clang-14 is
# installed (setup installs it), a few seconds of every fuzz target (scripts/fuzz.sh 3) and the
# fast unit tests built with ASan + UBSan (scripts/sanitize.sh asan; after the fuzz build,
# whose objects it shares through ccache).
# Set LMTRAIN_CTEST_ARGS to pass extra ctest arguments (e.g. "-L unit"); LMTRAIN_FUZZ_SECONDS
# the seconds per fuzz target (0 skips fuzzing); LMTRAIN_SANITIZE_TESTS=0 skips the sanitizer
# tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/build.sh -DLMTRAIN_BUILD_TESTS=ON
ctest --test-dir build --output-on-failure -j"$(nproc)" ${LMTRAIN_CTEST_ARGS:-}
FUZZ_SECONDS=${LMTRAIN_FUZZ_SECONDS:-3}
if [ "$FUZZ_SECONDS" = 0 ]; then
  echo "test: fuzzing skipped (LMTRAIN_FUZZ_SECONDS=0)"
elif command -v clang++-14 >/dev/null; then
  LMTRAIN_FUZZ_JOBS="$(nproc)" scripts/fuzz.sh "$FUZZ_SECONDS"
else
  echo "test: clang++-14 not found: fuzz targets skipped (scripts/setup.sh --tests installs it)"
fi
if [ "${LMTRAIN_SANITIZE_TESTS:-1}" = 0 ]; then
  echo "test: sanitizer tests skipped (LMTRAIN_SANITIZE_TESTS=0)"
elif command -v clang++-14 >/dev/null; then
  LMTRAIN_SANITIZE_JOBS="$(nproc)" scripts/sanitize.sh asan
else
  echo "test: clang++-14 not found: sanitizer tests skipped (scripts/setup.sh --tests installs it)"
fi
