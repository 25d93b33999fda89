#!/usr/bin/env bash
# Pretrains the small in-domain base model that the paraphrase test fine-tunes
# (tests/testdata/paraphrase/base-model), as a user fine-tunes bert-base after run_mlm: a
# 2-layer, 64-wide BERT trained from scratch with lm-train's masked LM on
# tests/testdata/paraphrase/pretrain.txt, one aligned "KJV [SEP] WEB" verse pair per line
# (XLM's translation language modelling: a masked word is often recoverable from the other
# translation, which teaches the model to match words across the two segments). Only the
# train split's chapters are in that text. The vocabulary is base-model/vocab.txt, made by
# scripts/make_classification_data.py.
#
#   scripts/make_paraphrase_base_model.sh [path/to/lm-train]   (default build/bin/lm-train)
#
# Deterministic on CPU for a given thread count (seed 1). Writes config.json and
# model.safetensors next to vocab.txt; the run's own output folder is left in a temp dir.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lm_train="${1:-$root/build/bin/lm-train}"
base="$root/tests/testdata/paraphrase/base-model"
work="$(mktemp -d)"
cat > "$work/job.yaml" <<YAML
name: paraphrase-base-tlm
task: mlm
model: {config: {model_type: bert, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4,
  intermediate_size: 256, max_position_embeddings: 128, hidden_dropout_prob: 0.0,
  attention_probs_dropout_prob: 0.0}}
tokenizer: {path: $base}
data: {train_file: $root/tests/testdata/paraphrase/pretrain.txt, max_seq_length: 128,
  line_by_line: true, validation_split_percentage: 5}
training: {learning_rate: 3.0e-3, per_device_train_batch_size: 32, max_steps: 4000,
  warmup_steps: 400, logging_steps: 200, evaluation_strategy: steps, eval_steps: 1000,
  save_strategy: "no", seed: 1, max_eval_samples: 128}
YAML
"$lm_train" "$work/job.yaml" --output-dir "$work/out"
cp "$work/out/config.json" "$work/out/model.safetensors" "$base/"
echo "base model written to $base (run folder: $work/out)"
