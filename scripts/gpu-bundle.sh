#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh runs on a GPU machine that cannot build lmtrain (no compiler
# toolchain or no Debian packages there, only a Python with torch): lm-train, lm-server,
# lm-worker, lmctl, lm-bench-train and the CUDA tests, built here against the pinned torch
# wheel, with the shared libraries they need apart from glibc, libstdc++ and LibTorch (the GPU
# machine's own torch of the same version supplies LibTorch and CUDA).
#
#   scripts/gpu-bundle.sh [OUT]        (default .device/bundle.tar.xz)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-.device/bundle.tar.xz}
programs=(lm-train lm-server lm-worker lmctl lm-bench-train cuda_trainer_test cuda_graph_test
  gpu_inventory_test)
cmake --build build --target "${programs[@]}" lmtrain_spm
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
# The sentencepiece shim is dlopen'ed from ../lib beside the programs (text/spm).
cp build/lib/liblmtrain_spm.so "$stage/lib/"
for p in "${programs[@]}"; do
  cp build/bin/"$p" "$stage/bin/"
  ldd build/bin/"$p" | awk '$3 ~ /^\// {print $3}'
done | cat - <(ldd build/lib/liblmtrain_spm.so | awk '$3 ~ /^\// {print $3}') | grep -v -E 'site-packages|/lib(c|m|dl|pthread|rt|util|stdc\+\+|gcc_s)\.so' | sort -u |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
mkdir -p "$(dirname "$OUT")"
tar -cJf "$OUT" -C "$stage" .
echo "$OUT: $(du -h "$OUT" | cut -f1) ($(ls "$stage/lib" | wc -l) libraries)"
