"""HF transformers' own NEFTune hook (integrations/neftune.py) on a fixed [2, 3, 6] embedding
output, torch seeded first: prints the noisy embeddings as a JSON list (float32 values, exact)
per ALPHA SEED pair, one line each, the reference of tests/worker/models/neftune_test.cc.

Usage: neftune_hook.py ALPHA SEED [ALPHA SEED ...]
"""

import json
import sys

import torch
from transformers.integrations.neftune import neftune_post_forward_hook


def main() -> None:
    pairs = sys.argv[1:]
    for alpha, seed in zip(pairs[0::2], pairs[1::2]):
        module = torch.nn.Embedding(1, 1)
        module.neftune_noise_alpha = float(alpha)
        module.train()
        output = torch.arange(36, dtype=torch.float32).reshape(2, 3, 6) / 7
        torch.manual_seed(int(seed))
        noisy = neftune_post_forward_hook(module, None, output)
        print(json.dumps(noisy.flatten().tolist()))


if __name__ == "__main__":
    main()
