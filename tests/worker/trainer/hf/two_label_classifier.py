"""Saves a tiny two-label BertForSequenceClassification with Hugging Face transformers and the
logits HF computes for a fixed batch.

    python3 two_label_classifier.py OUT_DIR

OUT_DIR gets what save_pretrained writes (config.json without num_labels / id2label, since two
labels are PretrainedConfig's default; model.safetensors) and reference.json: input_ids,
attention_mask, token_type_ids (batch 2 x 8, row 1 right-padded by 3) and logits (2 x 2), in
eval mode, float32, CPU.
"""
import json
import sys

import torch
from transformers import BertConfig, BertForSequenceClassification


def main(out_dir):
    torch.manual_seed(0)
    config = BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=64)
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # Non-trivial biases and head, so a fresh head cannot pass.
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * 0.1 + (1.0 if "LayerNorm.weight" in name else 0.0))
    model.save_pretrained(out_dir)
    input_ids = torch.tensor([[2, 15, 47, 8, 91, 33, 60, 3], [2, 71, 9, 44, 3, 0, 0, 0]])
    attention_mask = (input_ids != 0).long()
    token_type_ids = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0]])
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=attention_mask,
                       token_type_ids=token_type_ids).logits
    reference = {
        "input_ids": input_ids.tolist(),
        "attention_mask": attention_mask.tolist(),
        "token_type_ids": token_type_ids.tolist(),
        "logits": logits.tolist(),
    }
    with open(f"{out_dir}/reference.json", "w") as f:
        json.dump(reference, f)


if __name__ == "__main__":
    main(sys.argv[1])
