"""lm-train's TensorBoard event file, read by TensorBoard itself.

Usage: check_with_tensorboard.py OUTPUT_DIR

Loads OUTPUT_DIR/runs/<run>/ with the `tensorboard` package's EventAccumulator (the reader
behind TensorBoard's Scalars dashboard, from the project's .venv: scripts/setup.sh --tests)
and checks that it sees every number of trainer_state.json's log_history under HF
TensorBoardCallback's tag at the entry's step, as a float32, plus train/tokens_per_second
with every training log. Exit status: 0 when every check passes, 1 when one fails.
"""
import os
import sys

from check_tfevents import find_event_file, match_log_history, read_log_history, run_check


def check(output_dir):
    from tensorboard.backend.event_processing import event_accumulator

    run = os.path.dirname(find_event_file(output_dir))
    acc = event_accumulator.EventAccumulator(run, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    scalars = [(e.step, tag, e.value) for tag in acc.Tags()["scalars"] for e in acc.Scalars(tag)]
    tags = match_log_history(scalars, read_log_history(output_dir))
    print(f"ok: TensorBoard's EventAccumulator read {len(scalars)} scalars from {run}; "
          f"tags: {', '.join(tags)}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    try:
        from tensorboard.backend.event_processing import event_accumulator  # noqa: F401
    except ImportError as e:
        print(f"FAIL: {e}: the tensorboard package is missing: run scripts/setup.sh --tests")
        return 1
    return run_check(check, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
