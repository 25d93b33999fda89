#!/usr/bin/env bash
# CPU training-step figures, lm-bench-train against HF transformers' eager step
# (bench/hf_train_step.py) on the same torch wheel, shape by shape in one run, then a table.
#
#   bench/run_train_bench.sh [BUILD_DIR] [THREADS]     (defaults: build, nproc)
#
# Needs scripts/setup.sh --tests (transformers in .venv) and a built lm-bench-train.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
THREADS=${2:-$(nproc)}
PY=.venv/bin/python3
SHAPES=(
  "--model bert-base --batch 8 --seq 128 --precision fp32 --steps 6"
  "--model bert-base --batch 8 --seq 128 --precision bf16 --steps 6"
  "--model gpt2-small --batch 4 --seq 256 --precision fp32 --steps 6"
  "--model gpt2-small --batch 4 --seq 256 --precision bf16 --steps 6"
  "--model gpt2-tiny --batch 16 --seq 128 --precision fp32 --steps 20"
  "--model gpt2-tiny --batch 16 --seq 128 --precision bf16 --steps 20"
)
echo "torch $($PY -c 'import torch; print(torch.__version__)'), transformers" \
  "$($PY -c 'import transformers; print(transformers.__version__)'), $THREADS threads," \
  "$(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for shape in "${SHAPES[@]}"; do
  # shellcheck disable=SC2086
  ours=$("$BUILD/bin/lm-bench-train" $shape --threads "$THREADS" | tail -1)
  # shellcheck disable=SC2086
  theirs=$($PY bench/hf_train_step.py $shape --threads "$THREADS" 2>&1 | tail -1)
  rows+=("$($PY - "$shape" "$ours" "$theirs" <<'PY'
import json, sys
shape, ours, theirs = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
# Both steps do the same FLOPs per token, so each one's share of lm-bench-train's measured
# matmul peak (same precision) follows from its tokens/s.
peak_share = ours["gflops"] / ours["matmul_ceiling_gflops"] / ours["tokens_per_s"]
try:
    hf = json.loads(theirs)["tokens_per_s"]
    ratio = f"{ours['tokens_per_s'] / hf:.2f}x"
    hf_peak = f"{100 * peak_share * hf:.0f}%"
    hf = f"{hf:.1f}"
except (ValueError, KeyError):
    hf, ratio, hf_peak = "failed: " + theirs[-80:], "-", "-"
ours_peak = f"{100 * peak_share * ours['tokens_per_s']:.0f}%"
print(f"| {shape} | {hf} | {ours['tokens_per_s']:.1f} | {ratio} | {hf_peak} | {ours_peak} |")
PY
)")
  echo "${rows[-1]}"
done
echo
echo "| shape | HF eager tok/s | lmtrain tok/s | ratio | HF, % of matmul peak | lmtrain, % of matmul peak |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
