"""Hugging Face's eager training step at lm-bench-train's shapes: the reference it is measured
against (docs/benchmarks.md).

    .venv/bin/python3 bench/hf_train_step.py --model bert-base|gpt2-small|gpt2-tiny \
        --batch B --seq T [--precision fp32|bf16] [--steps N] [--warmup W] [--threads K] \
        [--device cpu|cuda] [--attn eager|sdpa] [--label-smoothing S]

The same work as lm-bench-train: randomly initialised BertForMaskedLM (bert-base config,
15% of positions labelled, as DataCollatorForLanguageModeling) or GPT2LMHeadModel
(gpt2-small's config, or the tiny one: n_embd 128, 2 layers, 2 heads) in train mode with
dropout, random token ids, torch.optim.AdamW (HF Trainer's default "adamw_torch", lr 5e-5, no
weight decay). A step is zero_grad, forward under autocast when bf16 (as Trainer's --bf16),
backward, optimizer step. With --label-smoothing S the loss is what Trainer computes with
label_smoothing_factor S: the model's logits without labels, then its LabelSmoother (shifted for
GPT-2). Prints each step's time; the last line is JSON with tokens_per_s and step_s_median,
like lm-bench-train's.
"""
import argparse
import json
import statistics
import time

import torch
import transformers
from transformers.trainer_pt_utils import LabelSmoother


def make_model(name):
    if name == "bert-base":
        return transformers.BertForMaskedLM(transformers.BertConfig())
    if name == "gpt2-small":
        return transformers.GPT2LMHeadModel(transformers.GPT2Config())
    if name == "gpt2-tiny":
        return transformers.GPT2LMHeadModel(
            transformers.GPT2Config(n_embd=128, n_layer=2, n_head=2))
    raise ValueError(f"unknown model {name!r}")


def make_batch(args, model, device):
    vocab = model.config.vocab_size
    if args.model == "bert-base":
        ids = torch.randint(999, vocab, (args.batch, args.seq))
        picked = torch.rand(args.batch, args.seq) < 0.15
        labels = torch.where(picked, ids, torch.full_like(ids, -100))
        batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                 "token_type_ids": torch.zeros_like(ids), "labels": labels}
    else:
        ids = torch.randint(vocab, (args.batch, args.seq))
        batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}
    return {k: v.to(device) for k, v in batch.items()}


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2-tiny")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--attn", choices=["eager", "sdpa"], default="eager")
    parser.add_argument("--label-smoothing", type=float, default=0.0)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = make_model(args.model)
    model.config._attn_implementation = args.attn
    model.to(device).train()
    batch = make_batch(args, model, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.0)
    bf16 = args.precision == "bf16"
    smoother = LabelSmoother(epsilon=args.label_smoothing) if args.label_smoothing else None
    inputs = {k: v for k, v in batch.items() if smoother is None or k != "labels"}
    causal = args.model.startswith("gpt2")

    def step():
        start = time.perf_counter()
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            outputs = model(**inputs)
            if smoother is None:
                loss = outputs.loss
            else:  # Trainer.compute_loss with a label smoother.
                loss = smoother(outputs, batch["labels"], shift_labels=causal)
        loss.backward()
        optimizer.step()
        sync(device)
        return time.perf_counter() - start

    for _ in range(args.warmup):
        step()
    times = []
    for i in range(args.steps):
        times.append(step())
        print(f"step {i}: {times[-1]:.4f} s", flush=True)
    median = statistics.median(times)
    summary = {"reference": "hf-eager", "transformers": transformers.__version__,
               "torch": torch.__version__, "model": args.model, "batch": args.batch,
               "seq": args.seq, "precision": args.precision, "device": args.device,
               "attn": args.attn, "label_smoothing": args.label_smoothing,
               "threads": torch.get_num_threads(), "steps": args.steps,
               "step_s_median": median, "tokens_per_s": args.batch * args.seq / median,
               "step_s": times}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
