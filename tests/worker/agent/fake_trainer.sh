#!/bin/sh
# Speaks lm-train's process protocol for the JobRunner tests. Behaviour from the job file
# ($1): "mode: ok" | "mode: fail" | "mode: hang" | "mode: stubborn" (ignores SIGTERM). The last
# two print "TERM trap set" once their handler is in place, so a test can wait for it.
mode=$(sed -n 's/^mode: //p' "$1")
echo "starting $mode"
case "$mode" in
  ok)
    echo '{"type":"metrics","metrics":{"step":1,"loss":2.5}}' >&3
    echo '{"type":"checkpoint","step":1,"path":"/tmp/ckpt-1"}' >&3
    echo "done"
    exit 0 ;;
  fail)
    echo "something broke" >&2
    exit 3 ;;
  hang)
    trap 'echo "got TERM"; exit 143' TERM
    echo "TERM trap set"
    while true; do sleep 0.05; done ;;
  stubborn)
    trap '' TERM
    echo "TERM trap set"
    while true; do sleep 0.05; done ;;
esac
