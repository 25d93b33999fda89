"""HF transformers' own Trainer.log_metrics output for each case of a JSON file (a list of
{"split": ..., "metrics": {...}}), printed one after the other: the reference of
MetricsBlock in tests/worker/trainer_base/run_results_test.cc.

Usage: log_metrics.py CASES_JSON
"""

import json
import sys

from transformers import trainer_pt_utils


class RankZero:
    """What log_metrics needs of a Trainer."""

    metrics_format = staticmethod(trainer_pt_utils.metrics_format)

    def is_world_process_zero(self):
        return True


def main(cases_json):
    with open(cases_json) as f:
        cases = json.load(f)
    for case in cases:
        trainer_pt_utils.log_metrics(RankZero(), case["split"], case["metrics"])


if __name__ == "__main__":
    main(*sys.argv[1:])
