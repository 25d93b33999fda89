#!/bin/sh
# A stand-in for lm-train in control-plane benchmarks (lm-worker --trainer bench/fake_trainer.sh):
# takes lm-train's argv (JOB.yaml --output-dir DIR --events-fd N [--auto-resume]), reports one
# metrics event on fd N in common/trainer_events.h's encoding, then exits 0 at once, or, with
# FAKE_TRAINER_SECONDS=S in its environment, stays running S seconds first (like a trainer
# that is training; SIGTERM ends it at once, as `exec` makes the sleep this process).
fd=3
while [ $# -gt 0 ]; do
  case "$1" in
    --events-fd) fd="$2"; shift ;;
  esac
  shift
done
echo '{"type":"metrics","metrics":{"step":1,"max_steps":1,"loss":1.0}}' >&"$fd"
if [ "${FAKE_TRAINER_SECONDS:-0}" != 0 ]; then exec sleep "$FAKE_TRAINER_SECONDS"; fi
exit 0
