#!/usr/bin/env bash
# GPU training-step figures, side by side in one run on one GPU: lm-bench-train --device cuda
# and Hugging Face transformers' eager step (bench/hf_train_step.py) at the same shapes.
#
#   scripts/gpu-bench.sh [LM_BENCH_TRAIN]      (default build/bin/lm-bench-train)
#
# PYTHON (default python3) must have torch with CUDA and transformers. lm-bench-train is put
# on that torch's libraries (LD_LIBRARY_PATH), which must be the version it was built against
# (scripts/requirements.txt), so a binary built on another machine runs here too.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${1:-build/bin/lm-bench-train}
PY=${PYTHON:-python3}
torch_lib=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

# One shape: lm-bench-train, then HF eager, then HF with PyTorch's sdpa attention.
run() {
  echo "== $*"
  "$BENCH" --device cuda "$@" | tail -2
  "$PY" bench/hf_train_step.py --device cuda --attn eager "$@" | tail -1
  "$PY" bench/hf_train_step.py --device cuda --attn sdpa "$@" | tail -1
}
run --model bert-base --batch 32 --seq 128 --precision bf16 --steps 20 --warmup 3
run --model bert-base --batch 32 --seq 128 --precision fp32 --steps 20 --warmup 3
run --model gpt2-small --batch 8 --seq 1024 --precision bf16 --steps 20 --warmup 3
