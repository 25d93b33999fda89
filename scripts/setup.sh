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
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev
  # trainer
  libtorch-dev libgloo-dev libopenblas0-pthread libsentencepiece-dev libicu-dev
  # tests
  libgtest-dev libgmock-dev
  # Python client example and its test (stubs from protoc + grpc_python_plugin)
  python3-grpcio python3-protobuf
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
