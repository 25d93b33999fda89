"""The learning rates of torch.optim.lr_scheduler.ReduceLROnPlateau (what HF's
get_scheduler("reduce_lr_on_plateau", ...) returns) after each step of a metric sequence.

    python3 plateau.py CASES.json

CASES.json: [{"lr": 0.1, "kwargs": {...ReduceLROnPlateau keyword arguments}, "metrics": [...]}].
Prints a JSON list with, per case, the learning rate after each metric.
"""
import json
import sys

import torch


def run(case):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=case["lr"])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, **case["kwargs"])
    rates = []
    for metric in case["metrics"]:
        scheduler.step(metric)
        rates.append(optimizer.param_groups[0]["lr"])
    return rates


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(json.dumps([run(case) for case in json.load(f)]))
