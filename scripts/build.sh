#!/usr/bin/env bash
# Configures and builds lmtrain into build/ (programs in build/bin/). Extra arguments go to
# the CMake configure step, e.g. scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@"
cmake --build build -j"$(nproc)"
