#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU and a Python whose torch has CUDA (the version
# in scripts/requirements.txt) and transformers:
#   1. the `cuda` tests (cuda_graph_test: captured updates equal eager ones, train and resume
#      exactly; cuda_trainer_test: bf16/fp16 training, CPU parity, exact resume, fused AdamW,
#      out-of-memory errors; lm-worker's NVML discovery);
#   2. a job end to end: lm-server with its embedded worker (which finds the GPUs through
#      NVML), `lmctl submit examples/gpu-gpt2/job.yaml` (gpus_per_worker: 1); the job must be
#      given a GPU and succeed having trained on cuda:0; first with training.cuda_graphs, then as is;
#   3. training-step figures: lm-bench-train --device cuda, eager and with --cuda-graph 1
#      (training.cuda_graphs), beside Hugging Face's eager and sdpa steps
#      (bench/hf_train_step.py) at the same shapes, in one run.
#
#   scripts/gpu-check.sh [LOG_DIR]          (default: $OUT, else ./gpu-check-logs)
#
# GPU_CHECK_BENCH=0 skips step 3.
#
# Programs come from build/bin (built on this machine), or, where this machine cannot build
# lmtrain, from .device/bundle.tar.xz (scripts/gpu-bundle.sh on a build machine), run against
# this machine's torch libraries. Exit status: the number of failed checks.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=${1:-${OUT:-$PWD/gpu-check-logs}}
mkdir -p "$LOGS"
PY=${PYTHON:-python3}
BIN=$PWD/build/bin
torch_lib=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -f .device/bundle.tar.xz ] && [ ! -x "$BIN/lm-train" ]; then
  unpacked=$(mktemp -d)
  tar -xJf .device/bundle.tar.xz -C "$unpacked"
  BIN=$unpacked/bin
  export LD_LIBRARY_PATH="$unpacked/lib:$LD_LIBRARY_PATH"
fi
export PATH="$BIN:$PATH"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
failed=0
check() {  # check NAME COMMAND...: runs it, logs to $LOGS/NAME.log, counts a failure.
  local name=$1
  shift
  echo "== $name"
  if "$@" > "$LOGS/$name.log" 2>&1; then
    echo "ok"
  else
    echo "FAILED ($LOGS/$name.log):"
    tail -n 30 "$LOGS/$name.log"
    failed=$((failed + 1))
  fi
}

cuda_tests() {  # NVML must list the GPU (not skip), then the trainer's CUDA tests.
  local nvml
  nvml=$("$BIN/gpu_inventory_test" --gtest_filter='*_CUDA' 2>&1)
  echo "$nvml"
  grep -q "PASSED  \] 1 test" <<< "$nvml" && ! grep -q SKIPPED <<< "$nvml" || return 1
  local status=0
  "$BIN/cuda_graph_test" || status=1
  "$BIN/cuda_trainer_test" || status=1
  return $status
}
check cuda-tests timeout 240 bash -c "$(declare -f cuda_tests); BIN=$BIN cuda_tests"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|OK \]" "$LOGS/cuda-tests.log"

bench() {  # One shape: lm-bench-train eager and captured, then HF eager and HF sdpa.
  local status=0
  echo "== $*"
  "$BIN/lm-bench-train" --device cuda "$@" | tail -n 2 || status=1
  "$BIN/lm-bench-train" --device cuda --cuda-graph 1 "$@" | tail -n 2 || status=1
  "$PY" bench/hf_train_step.py --device cuda --attn eager "$@" | tail -n 1 || status=1
  "$PY" bench/hf_train_step.py --device cuda --attn sdpa "$@" | tail -n 1 || status=1
  return $status
}
benches() {  # Every shape, whatever failed before.
  local status=0
  bench --model bert-base --batch 32 --seq 128 --precision bf16 --steps 20 --warmup 3 || status=1
  bench --model gpt2-small --batch 8 --seq 1024 --precision bf16 --steps 20 --warmup 3 || status=1
  bench --model bert-base --batch 128 --seq 128 --precision bf16 --steps 20 --warmup 3 || status=1
  bench --model bert-base --batch 32 --seq 128 --precision fp32 --steps 20 --warmup 3 || status=1
  return $status
}
if [ "${GPU_CHECK_BENCH:-1}" != 0 ]; then
  check bench timeout 330 bash -c "set -o pipefail; $(declare -f bench benches); BIN=$BIN PY=$PY benches"
  cat "$LOGS/bench.log"
fi

end_to_end() {
  local data port
  data=$(mktemp -d)
  port=$((50100 + RANDOM % 500))
  export LMCTL_SERVER=127.0.0.1:$port
  lm-server --listen "$LMCTL_SERVER" --http-listen "127.0.0.1:$((port + 1000))" \
    --data-dir "$data" --local-worker 1 > "$data/server.log" 2>&1 &
  local server=$!
  trap "kill $server 2>/dev/null; wait $server 2>/dev/null" RETURN
  for _ in $(seq 300); do lmctl list > /dev/null 2>&1 && break; sleep 0.1; done
  lmctl list > /dev/null || { tail -n 20 "$data/server.log"; return 1; }
  local job
  job=$(lmctl submit ${GPU_CHECK_JOB:-examples/gpu-gpt2/job.yaml} | tail -n1) || return 1
  timeout 150 lmctl watch "$job"
  local status=$?
  lmctl get "$job" -o json
  lmctl events "$job" | grep -i "gpu" | head -n 3
  grep -rhI "Training on" "$data" | head -n 3
  grep -rqhI "Training on cuda" "$data" || { echo "the job did not train on a GPU"; return 1; }
  return $status
}
# training.cuda_graphs first (a copy of the job beside it: its paths are relative), then as is.
graphs_job=examples/gpu-gpt2/.cuda-graphs-job.yaml
sed 's/^  bf16: true$/  bf16: true\n  cuda_graphs: true/' examples/gpu-gpt2/job.yaml > "$graphs_job"
GPU_CHECK_JOB=$graphs_job check end-to-end-cuda-graphs end_to_end
rm -f "$graphs_job"
check end-to-end end_to_end
for log in end-to-end end-to-end-cuda-graphs; do
  grep -E "Training on|train_loss|eval_loss|SUCCEEDED|FAILED" "$LOGS/$log.log" | tail -n 8
done

echo "$failed check(s) failed"
exit "$failed"
