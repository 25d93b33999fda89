#!/usr/bin/env bash
# The README's test command: set up, build, run every test with ctest.
# Set LMTRAIN_CTEST_ARGS to pass extra ctest arguments (e.g. "-L unit").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/build.sh -DLMTRAIN_BUILD_TESTS=ON
ctest --test-dir build --output-on-failure -j"$(nproc)" ${LMTRAIN_CTEST_ARGS:-}
