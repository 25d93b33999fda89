#!/usr/bin/env bash
# Configures and builds lmtrain into build/ (programs in build/bin/). Extra arguments go to
# the CMake configure step, e.g. scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF.
# LMTRAIN_BUILD_TARGETS="lm-server lmctl ..." builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@"
targets=()
for t in ${LMTRAIN_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
