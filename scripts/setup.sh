#!/usr/bin/env bash
# Installs every Debian 12 package lmtrain needs to build, run the quickstart and run the
# tests. Idempotent: packages already installed are skipped, and apt is not touched at all
# when nothing is missing. Needs root (or sudo).
# LMTRAIN_SETUP_SKIP="pkg ..." leaves those packages out (the Dockerfiles in deploy/docker skip
# the test-only ones, and the CUDA image Debian's CPU-only libtorch-dev).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git
  # control plane
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev libcpp-httplib-dev
  # trainer
  libtorch-dev libgloo-dev libopenblas0-pthread libsentencepiece-dev libicu-dev
  # tests (chromium + nodejs: the dashboard's browser test, tests/browser; nodejs also runs
  # tests/deploy)
  libgtest-dev libgmock-dev chromium nodejs
  openssl  # the security tests make throwaway TLS certificates
  # Debian's /usr/bin/python3 modules: the TensorBoard event-file reader check and the Python
  # client example's test (stubs from protoc + grpc_python_plugin)
  python3-protobuf python3-grpcio
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Node.js runs the deploy manifest validation (tests/deploy); not needed where node is present.
# (kubectl, which renders the manifests there, has no current Debian package: that test skips
# when it is missing.)
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi

skipped() { [[ " ${LMTRAIN_SETUP_SKIP:-} " == *" $1 "* ]]; }

# The npm packages of the tests that have them (tests/*/package-lock.json, e.g. tests/deploy's
# kubernetes-models), installed by npm ci when missing or older than the lock file.
npm_ci() {
  skipped npm && return 0
  command -v npm >/dev/null 2>&1 || return 0
  local lock dir
  for lock in tests/*/package-lock.json; do
    [ -f "$lock" ] || continue
    dir=$(dirname "$lock")
    if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$lock" -nt "$dir/node_modules/.package-lock.json" ]; then
      echo "setup: npm ci --prefix $dir"
      PUPPETEER_SKIP_DOWNLOAD=1 npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    fi
  done
}

missing=()
for p in "${PACKAGES[@]}"; do
  if skipped "$p"; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  npm_ci
  exit 0
fi

echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_ci
echo "setup: done"
