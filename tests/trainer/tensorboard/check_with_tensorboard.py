"""lm-train's TensorBoard event file, read by TensorBoard itself.

Usage: check_with_tensorboard.py OUTPUT_DIR

Loads OUTPUT_DIR/runs/<run>/ with the `tensorboard` package's EventAccumulator (the reader
behind TensorBoard's Scalars dashboard, from the project's .venv: scripts/setup.sh --tests)
and checks that it sees every number of trainer_state.json's log_history under HF
TensorBoardCallback's tag at the entry's step, as a float32, plus train/tokens_per_second
with every training log. Exit status: 0 when every check passes, 1 when one fails.
"""
import json
import os
import sys

from check_tfevents import expected_scalars, find_event_file, same


def check(output_dir):
    from tensorboard.backend.event_processing import event_accumulator

    run = os.path.dirname(find_event_file(output_dir))
    acc = event_accumulator.EventAccumulator(run, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    tags = sorted(acc.Tags()["scalars"])
    got = sorted((e.step, tag, e.value) for tag in tags for e in acc.Scalars(tag)
                 if tag != "train/tokens_per_second")
    with open(os.path.join(output_dir, "trainer_state.json")) as f:
        history = json.load(f)["log_history"]
    want = sorted(expected_scalars(history))
    if len(got) != len(want) or not all(
            g[:2] == w[:2] and same(g[2], w[2]) for g, w in zip(got, want)):
        raise AssertionError(f"TensorBoard's scalars differ from log_history:\n got {got}\n"
                             f" want {want}")
    speeds = [e.step for e in acc.Scalars("train/tokens_per_second")]
    train_steps = [e["step"] for e in history if "loss" in e]
    if speeds != train_steps:
        raise AssertionError(f"train/tokens_per_second at {speeds}, training logs at {train_steps}")
    print(f"ok: TensorBoard's EventAccumulator read {len(got) + len(speeds)} scalars from {run}; "
          f"tags: {', '.join(tags)}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    try:
        check(sys.argv[1])
    except ImportError as e:
        print(f"FAIL: {e}: the tensorboard package is missing: run scripts/setup.sh --tests")
        return 1
    except (AssertionError, OSError, ValueError, KeyError) as e:
        print(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
