#!/usr/bin/env bash
# training.group_by_length side by side: lm-train runs JOB as it is and with group_by_length
# false and true under `training:`, alternating, and prints each run's train_runtime,
# train_samples_per_second and the evaluation metric from all_results.json.
#
#   bench/run_group_by_length.sh [BUILD_DIR] [JOB]
#     defaults: build, examples/paraphrase-mrpc/job.yaml (GLUE MRPC layout, rows padded to
#     each batch's longest)
#   env: REPEATS=N   pairs of runs (default 3); THREADS=N   lm-train --threads (default 0)
#
# The two variants are written beside JOB (its relative paths stay valid) and removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOB=${2:-examples/paraphrase-mrpc/job.yaml}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-0}
if ! grep -q '^training:' "$JOB"; then
  echo "run_group_by_length: $JOB has no training: section" >&2
  exit 2
fi
dir=$(dirname "$JOB")
out=$(mktemp -d)
trap 'rm -rf "$out" "$dir"/.group_by_length-*.yaml' EXIT
for g in false true; do
  awk -v g="$g" '{print} /^training:/ {print "  group_by_length: " g}' "$JOB" \
    | grep -v '^  do_predict:' > "$dir/.group_by_length-$g.yaml"
done
echo "$JOB, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), threads $THREADS"
printf '%-16s %-4s %16s %26s  %s\n' group_by_length run train_runtime_s \
  train_samples_per_second eval
for ((r = 1; r <= REPEATS; r++)); do
  for g in false true; do
    rm -rf "$out/$g"
    "$BUILD/bin/lm-train" "$dir/.group_by_length-$g.yaml" --output-dir "$out/$g" \
      --threads "$THREADS" > "$out/$g.log" 2>&1 || { cat "$out/$g.log" >&2; exit 1; }
    python3 - "$out/$g/all_results.json" "$g" "$r" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
evals = {k: round(v, 4) for k, v in d.items()
         if k.startswith("eval_") and k not in ("eval_runtime", "eval_samples_per_second",
                                                "eval_steps_per_second", "eval_samples")}
print(f"{sys.argv[2]:<16} {sys.argv[3]:<4} {d['train_runtime']:16.3f} "
      f"{d['train_samples_per_second']:26.1f}  {evals}")
EOF
  done
done
