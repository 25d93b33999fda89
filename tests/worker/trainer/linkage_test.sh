#!/usr/bin/env bash
# How the programs link LibTorch (ctest: trainer.linkage).
#   linkage_test.sh LM_TRAIN TORCH_LIB_DIR CUDA(ON|OFF) OTHER_PROGRAM...
# - lm-train loads libtorch_cpu.so (and libtorch_cuda.so when built with CUDA) from the torch
#   wheel's lib folder, and no other LibTorch;
# - lm-train needs no libgloo and defines no gloo symbol: the only gloo in the process is the
#   copy inside libtorch_cpu (worker/trainer/CMakeLists.txt says why that matters);
# - lm-train names libstdc++ as its first library, so that libstdc++ answers for its own
#   functions rather than the copies the wheel's libraries export (CMakeLists.txt says why);
# - the other programs (lm-server, lm-worker, lmctl) load no LibTorch at all.
set -euo pipefail
train=$1 torch_lib=$(realpath "$2") cuda=$3
shift 3
fail=0
problem() { echo "FAIL: $*"; fail=1; }

deps=$(ldd "$train")
for lib in libtorch_cpu.so libc10.so $([ "$cuda" = ON ] && echo libtorch_cuda.so); do
  path=$(awk -v l="$lib" '$1 == l { print $3 }' <<<"$deps")
  [ -n "$path" ] || { problem "$train does not load $lib"; continue; }
  [ "$(realpath "$(dirname "$path")")" = "$torch_lib" ] ||
    problem "$train loads $lib from $path, not from the torch wheel ($torch_lib)"
done
if grep -E '^\s*lib(torch|c10)' <<<"$deps" | grep -v -- "=> $torch_lib/" | grep -q .; then
  problem "$train loads a LibTorch library from outside the wheel:
$(grep -E '^\s*lib(torch|c10)' <<<"$deps" | grep -v -- "=> $torch_lib/")"
fi
if readelf -d "$train" | grep -q 'NEEDED.*libgloo'; then problem "$train links libgloo"; fi
first=$(readelf -d "$train" | awk '/NEEDED/ { gsub(/[][]/, "", $5); print $5; exit }')
[ "$first" = libstdc++.so.6 ] || problem "$train's first library is $first, not libstdc++.so.6"
gloo_defs=$( { nm -C --defined-only "$train" 2>/dev/null || true; nm -C -D --defined-only "$train"; } |
  grep -E ' (gloo::|vtable for gloo::|typeinfo for gloo::|.*ProcessGroupGloo::GlooStore)' || true)
[ -z "$gloo_defs" ] || problem "$train defines gloo symbols:
$gloo_defs"

for program in "$@"; do
  if ldd "$program" | grep -E 'lib(torch|c10)' | grep -q .; then
    problem "$program loads LibTorch: $(ldd "$program" | grep -E 'lib(torch|c10)')"
  fi
done
[ "$fail" = 0 ] && echo "ok: $(basename "$train") loads LibTorch from $torch_lib (CUDA: $cuda)," \
  "defines no gloo symbol; $# other programs load no LibTorch"
exit "$fail"
