#!/usr/bin/env bash
# CPU training-step figures, lm-bench-train against HF transformers' eager step
# (bench/hf_train_step.py) on the same torch wheel, shape by shape in one run, then a table.
#
#   bench/run_train_bench.sh [BUILD_DIR] [THREADS]     (defaults: build, nproc)
#   env: REPEATS=N   runs each shape's pair N times, alternating (default 1); the table gives
#                    the median tokens/s of each side and the range of the N pair ratios
#        ONLY=TEXT   only the shapes whose arguments contain TEXT (e.g. gpt2-tiny)
#        ARGS="..."  more arguments for both sides, e.g. ARGS="--label-smoothing 0.1" (Trainer's
#                    label_smoothing_factor: HF's LabelSmoother on the logits, lmtrain's in the
#                    fused LM head)
#
# Needs scripts/setup.sh --tests (transformers in .venv) and a built lm-bench-train.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
THREADS=${2:-$(nproc)}
REPEATS=${REPEATS:-1}
ONLY=${ONLY:-}
ARGS=${ARGS:-}
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
  [[ -z "$ONLY" || "$shape" == *"$ONLY"* ]] || continue
  shape="$shape${ARGS:+ $ARGS}"
  ours=() theirs=()
  for ((i = 0; i < REPEATS; i++)); do
    # shellcheck disable=SC2086
    ours+=("$("$BUILD/bin/lm-bench-train" $shape --threads "$THREADS" | tail -1)")
    # shellcheck disable=SC2086
    theirs+=("$($PY bench/hf_train_step.py $shape --threads "$THREADS" 2>&1 | tail -1)")
  done
  rows+=("$($PY - "$shape" "$(printf '%s\n' "${ours[@]}")" "$(printf '%s\n' "${theirs[@]}")" <<'PY'
import json, statistics, sys
shape = sys.argv[1]
ours = [json.loads(line) for line in sys.argv[2].splitlines()]
theirs = sys.argv[3].splitlines()
# Both steps do the same FLOPs per token, so each one's share of lm-bench-train's measured
# matmul peak (same precision) follows from its tokens/s.
peak_share = statistics.median(o["gflops"] / o["matmul_ceiling_gflops"] / o["tokens_per_s"]
                               for o in ours)
ours_tps = [o["tokens_per_s"] for o in ours]
ours_median = statistics.median(ours_tps)
ours_peak = f"{100 * peak_share * ours_median:.0f}%"
try:
    hf_tps = [json.loads(line)["tokens_per_s"] for line in theirs]
    hf_median = statistics.median(hf_tps)
    ratio = f"{ours_median / hf_median:.2f}x"
    pairs = sorted(o / h for o, h in zip(ours_tps, hf_tps))
    spread = f"{pairs[0]:.2f}-{pairs[-1]:.2f}x"
    hf_peak = f"{100 * peak_share * hf_median:.0f}%"
    hf = f"{hf_median:.1f}"
except (ValueError, KeyError):
    hf, ratio, spread, hf_peak = "failed: " + theirs[-1][-80:], "-", "-", "-"
print(f"| {shape} | {hf} | {ours_median:.1f} | {ratio} | {spread} | {hf_peak} | {ours_peak} |")
PY
)")
  echo "${rows[-1]}"
done
echo
echo "| shape | HF eager tok/s | lmtrain tok/s | ratio | pair ratios | HF, % of matmul peak | lmtrain, % of matmul peak |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
