#!/usr/bin/env bash
# Installs what lmtrain needs to build and run: Debian 12 packages, and a project-local Python
# environment (.venv/) holding PyPI's torch wheel, whose C++ half (headers, libtorch_*.so,
# TorchConfig.cmake) is the LibTorch that lm-train builds against. With --tests it also
# installs what the test suite needs (GoogleTest, chromium, clang-14 for the fuzz targets, and
# the Python references: HF transformers, tensorboard, playwright, kubernetes-validate). With --no-torch it installs only
# what lm-server and lmctl need (no .venv, no trainer packages; build with
# -DLMTRAIN_BUILD_TRAINER=OFF).
#
# Idempotent: apt is not touched when nothing is missing, and pip runs only when the pinned
# requirements changed since the last install (.venv/.lmtrain-requirements). Needs root (or sudo)
# for apt. LMTRAIN_SETUP_SKIP="pkg ..." leaves those Debian packages out; LMTRAIN_PYTHON picks
# the interpreter that creates .venv (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_TESTS=0
WITH_TORCH=1
for arg in "$@"; do
  case "$arg" in
    --tests) WITH_TESTS=1 ;;
    --no-torch) WITH_TORCH=0 ;;
    *) echo "setup: unknown argument '$arg' (usage: scripts/setup.sh [--tests|--no-torch])" >&2
       exit 2 ;;
  esac
done

PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git python3 python3-venv
  # control plane
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev libcpp-httplib-dev
  libtcmalloc-minimal4  # lm-server's allocator (server/CMakeLists.txt)
  # the PostgreSQL job store: libpq, and the server its tests start (initdb, pg_ctl)
  libpq-dev postgresql
  # tokenizers (lmctl validates job files with them too)
  libsentencepiece-dev libicu-dev
)
# The trainer: LibTorch itself comes from the torch wheel below; libgloo-dev only for the gloo
# headers that c10d's ProcessGroupGloo.hpp includes (worker/trainer/CMakeLists.txt says why).
TRAINER_PACKAGES=(libgloo-dev)
if [ "$WITH_TORCH" = 1 ]; then PACKAGES+=("${TRAINER_PACKAGES[@]}"); fi
TEST_PACKAGES=(
  libgtest-dev libgmock-dev
  chromium   # the dashboard's browser test (tests/browser, driven by Playwright)
  openssl    # the security tests make throwaway TLS certificates
  clang-14 libclang-rt-14-dev  # libFuzzer, ASan, UBSan, TSan: scripts/fuzz.sh, CMakePresets.json
  # Debian's /usr/bin/python3 modules for the Python client example's test (stubs from
  # protoc + grpc_python_plugin, which match Debian's protobuf)
  python3-protobuf python3-grpcio
)
if [ "$WITH_TESTS" = 1 ]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
skipped() { [[ " ${LMTRAIN_SETUP_SKIP:-} " == *" $1 "* ]]; }

install_debian_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    if skipped "$p"; then continue; fi
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#PACKAGES[@]} Debian packages present"
    return
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# .venv with the pinned wheels; reinstalled only when the requirement files change.
install_python_environment() {
  local files=(scripts/requirements.txt)
  if [ "$WITH_TESTS" = 1 ]; then files+=(scripts/requirements-test.txt); fi
  local stamp=.venv/.lmtrain-requirements want
  want=$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && grep -qx "$want" "$stamp"; then
    echo "setup: .venv is up to date with ${files[*]}"
    return
  fi
  if [ ! -x .venv/bin/python3 ]; then
    echo "setup: creating .venv"
    "${LMTRAIN_PYTHON:-python3}" -m venv .venv
  fi
  local args=() f
  for f in "${files[@]}"; do args+=(-r "$f"); done
  echo "setup: pip install ${args[*]} (the torch wheel and its CUDA libraries are ~4.5 GB)"
  .venv/bin/python3 -m pip install --quiet --disable-pip-version-check "${args[@]}"
  # Installing the test set also satisfies the plain set.
  {
    echo "$want"
    if [ "$WITH_TESTS" = 1 ]; then sha256sum < scripts/requirements.txt | cut -d' ' -f1; fi
  } > "$stamp.new"
  mv "$stamp.new" "$stamp"
}

install_debian_packages
if [ "$WITH_TORCH" = 1 ]; then install_python_environment; fi
echo "setup: done"
