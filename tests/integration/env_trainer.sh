#!/bin/sh
# Stands in for lm-train in the GPU placement tests: records the environment lm-worker gave it
# in OUTPUT_DIR/env-<attempt-A-rank-R>.txt (the worker's folder for the rank is its cwd), then
# behaves as the job's name says: *-hang runs until SIGTERM, *-fail exits 3, others exit 0.
spec="$1"
shift
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output-dir" ]; then out="$2"; fi
  shift
done
name=$(sed -n 's/^name: //p' "$spec")
file="$out/env-$(basename "$PWD").txt"
env | grep -E '^(CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER|RANK|WORLD_SIZE|LOCAL_RANK)=' \
  | sort > "$file.tmp"
mv "$file.tmp" "$file"
case "$name" in
  *-hang)
    trap 'exit 143' TERM
    while true; do sleep 0.05; done ;;
  *-fail)
    exit 3 ;;
esac
exit 0
