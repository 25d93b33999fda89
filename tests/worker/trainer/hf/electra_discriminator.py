"""Saves a tiny seeded ElectraForPreTraining (a "pretrained" ELECTRA discriminator) with Hugging
Face transformers, for ELECTRA's fine-tuning recipe.

    python3 electra_discriminator.py VOCAB_TXT OUT_DIR

OUT_DIR gets config.json + model.safetensors (save_pretrained) and a copy of VOCAB_TXT (BERT
WordPiece, as ELECTRA's tokenizer). Hidden size 32, embedding size 16, 2 layers, 2 heads,
initializer_range 0.2 (wide enough that its random layers tell examples apart). The
word embeddings are shifted by +0.5 so that no fresh (zero-mean) initialisation resembles them.
"""
import shutil
import sys

import torch
from transformers import ElectraConfig, ElectraForPreTraining


def main(vocab, out_dir):
    torch.manual_seed(0)
    with open(vocab, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    config = ElectraConfig(vocab_size=vocab_size, embedding_size=16, hidden_size=32,
                           num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                           max_position_embeddings=128, initializer_range=0.2)
    model = ElectraForPreTraining(config)
    with torch.no_grad():
        model.electra.embeddings.word_embeddings.weight.add_(0.5)
    model.save_pretrained(out_dir)
    shutil.copy(vocab, f"{out_dir}/vocab.txt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
