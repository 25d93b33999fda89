"""HF transformers' Trainer optimizers sgd / adagrad / rmsprop as its own code builds them
(Trainer.get_optimizer_cls_and_kwargs on the optim, optim_args and learning_rate given, and
create_optimizer's two parameter groups: weight_decay for the weight, 0 for the bias), stepped on
a fixed [2, 3] weight and [2] bias with fixed gradients. The reference of
tests/worker/trainer/torch_optimizers_test.cc.

Usage: torch_optimizers.py CASES_JSON, a list of {"optim", "optim_args", "learning_rate",
"weight_decay", "steps"}. Prints one JSON line {"weight": [...], "bias": [...]} per case (float32
values, exact). TrainingArguments itself needs accelerate, which the project's environment does
not install; get_optimizer_cls_and_kwargs reads only the attributes given here.
"""

import json
import sys
from types import SimpleNamespace

import torch
from transformers import Trainer


def run(case: dict) -> dict:
    args = SimpleNamespace(
        optim=case["optim"],
        optim_args=case["optim_args"] or None,
        learning_rate=case["learning_rate"],
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
    )
    optimizer_cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args)
    weight = torch.nn.Parameter(torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7 - 0.3)
    bias = torch.nn.Parameter(torch.tensor([0.5, -0.25]))
    groups = [
        {"params": [weight], "weight_decay": case["weight_decay"]},
        {"params": [bias], "weight_decay": 0.0},
    ]
    optimizer = optimizer_cls(groups, **kwargs)
    for step in range(case["steps"]):
        weight.grad = torch.sin(torch.arange(6, dtype=torch.float32).reshape(2, 3) + step)
        bias.grad = torch.cos(torch.arange(2, dtype=torch.float32) * 2 + step)
        optimizer.step()
    return {"weight": weight.detach().flatten().tolist(), "bias": bias.detach().tolist()}


def main() -> None:
    for case in json.loads(sys.argv[1]):
        print(json.dumps(run(case)))


if __name__ == "__main__":
    main()
