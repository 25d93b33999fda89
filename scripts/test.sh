#!/usr/bin/env bash
# The README's test command: set up, build, run every test with ctest, then, when clang-14 is
# installed (setup installs it), a few seconds of every fuzz target (scripts/fuzz.sh 3), the
# fast unit tests built with ASan + UBSan (scripts/sanitize.sh asan; after the fuzz build,
# whose objects it shares through ccache) and the server's, dispatcher's and worker agent's
# threads built with TSan (scripts/sanitize.sh tsan). Exits non-zero at the first step that
# fails, a sanitizer report included.
# Set LMTRAIN_CTEST_ARGS to pass extra ctest arguments (e.g. "-L unit"); LMTRAIN_FUZZ_SECONDS
# the seconds per fuzz target (0 skips fuzzing); LMTRAIN_SANITIZE_TESTS the sanitizer steps
# (default "asan tsan"; "asan" or "tsan" runs that one; 0 skips both).
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
SANITIZE=${LMTRAIN_SANITIZE_TESTS:-asan tsan}
if [ "$SANITIZE" = 1 ]; then SANITIZE="asan tsan"; fi
if [ "$SANITIZE" = 0 ]; then
  echo "test: sanitizer tests skipped (LMTRAIN_SANITIZE_TESTS=0)"
elif command -v clang++-14 >/dev/null; then
  for preset in $SANITIZE; do
    LMTRAIN_SANITIZE_JOBS="$(nproc)" scripts/sanitize.sh "$preset"
  done
else
  echo "test: clang++-14 not found: sanitizer tests skipped (scripts/setup.sh --tests installs it)"
fi
