#!/usr/bin/env bash
# Installs every Debian 12 package lmtrain needs to build, run the quickstart and run the
# tests. Idempotent: packages already installed are skipped, and apt is not touched at all
# when nothing is missing. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git
  # control plane
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev libcpp-httplib-dev
  # trainer
  libtorch-dev libgloo-dev libopenblas0-pthread libsentencepiece-dev libicu-dev
  # tests (openssl: throwaway TLS certificates; chromium + nodejs: the dashboard's browser
  # test, tests/browser)
  libgtest-dev libgmock-dev openssl chromium nodejs
  # tests
  libgtest-dev libgmock-dev
  # tests: the TensorBoard event-file reader check (Debian's /usr/bin/python3)
  python3-protobuf
  # Python client example and its test (stubs from protoc + grpc_python_plugin)
  python3-grpcio python3-protobuf
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The browser test's driver: puppeteer-core from tests/browser/package-lock.json. It drives the
# system chromium; no browser is downloaded.
npm_deps() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  [ -d "$dir/node_modules" ] && return 0
  if ! command -v npm > /dev/null; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  echo "setup: npm ci in tests/browser"
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund)
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  npm_deps
  exit 0
fi

echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_deps
echo "setup: done"
