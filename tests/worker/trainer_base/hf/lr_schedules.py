"""The learning-rate factors of Hugging Face's schedules, written as JSON.

    python3 lr_schedules.py CASES_JSON

CASES_JSON is a list of {"type", "lr", "warmup", "total", "steps": [...], "kwargs": {...}};
each case builds transformers.get_scheduler(type, ...) over a one-parameter SGD optimizer with
learning rate lr, as Trainer.create_scheduler does (lr_scheduler_kwargs passed as
scheduler_specific_kwargs), and prints, for every step, the scheduler's lr_lambda at that step:
the factor LambdaLR multiplies lr by after that many optimizer updates. Output on stdout:
[[factor, ...], ...], one list per case, as repr() floats (exact doubles).
"""
import json
import sys

import torch
from transformers import get_scheduler


def factors(case):
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=case["lr"])
    scheduler = get_scheduler(
        case["type"],
        optimizer,
        num_warmup_steps=case["warmup"],
        num_training_steps=case["total"],
        scheduler_specific_kwargs=case.get("kwargs") or {},
    )
    (lr_lambda,) = scheduler.lr_lambdas
    return [float(lr_lambda(step)) for step in case["steps"]]


def main(cases_json):
    with open(cases_json) as f:
        cases = json.load(f)
    print(json.dumps([factors(case) for case in cases]))


if __name__ == "__main__":
    main(*sys.argv[1:])
