#!/usr/bin/env bash
# data.preprocessing_num_workers side by side: lm-train builds the clm examples of a text corpus
# (GPT-2's tokenizer, run_clm.py's grouping into blocks of 128) with 1 and with N tokenizing
# threads, alternating, then trains one step of a one-layer GPT-2 of width 16, so that the run's
# wall time is mostly tokenisation. Prints each run's wall seconds.
#
#   bench/run_preprocessing_workers.sh [BUILD_DIR] [CORPUS]
#     defaults: build, ../shared/data/corpora/austen_all.txt (else examples/data/austen_train.txt)
#   env: REPEATS=N  pairs of runs (default 3); WORKERS=N  the threaded variant (default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
CORPUS=${2:-../shared/data/corpora/austen_all.txt}
[ -f "$CORPUS" ] || CORPUS=examples/data/austen_train.txt
CORPUS=$(realpath "$CORPUS")
REPEATS=${REPEATS:-3}
WORKERS=${WORKERS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for w in 1 "$WORKERS"; do
  cat > "$out/job-$w.yaml" <<JOB
name: preprocessing-$w
task: clm
model: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 16, n_positions: 128}}
tokenizer: {path: $PWD/tests/data/tokenizers/gpt2}
data: {train_file: $CORPUS, block_size: 128, preprocessing_num_workers: $w}
training: {max_steps: 1, do_eval: false, save_strategy: "no", report_to: none, device: cpu}
JOB
done
echo "$CORPUS ($(wc -c < "$CORPUS") bytes), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-4s %10s\n' workers run seconds
for r in $(seq 1 "$REPEATS"); do
  for w in 1 "$WORKERS"; do
    rm -rf "$out/run"
    start=$(date +%s.%N)
    "$BUILD/bin/lm-train" "$out/job-$w.yaml" --output-dir "$out/run" > "$out/log" 2>&1 ||
      { cat "$out/log" >&2; exit 1; }
    end=$(date +%s.%N)
    printf '%-8s %-4s %10.2f\n' "$w" "$r" "$(echo "$end - $start" | bc)"
  done
done
