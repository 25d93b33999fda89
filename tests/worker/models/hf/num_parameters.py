"""HF transformers' own parameter counts: for each model of a JSON file (a list of
{"head": ..., "config": {...}}), builds the model from its config as transformers does and prints
one JSON line [num_parameters(), num_parameters(exclude_embeddings=True)], the reference of
tests/worker/models/parameter_count_test.cc.

Heads: causal_lm, masked_lm, question_answering, sequence_classification, discriminator.

Usage: num_parameters.py MODELS.json
"""

import json
import sys

import transformers

HEADS = {
    "causal_lm": transformers.AutoModelForCausalLM,
    "masked_lm": transformers.AutoModelForMaskedLM,
    "question_answering": transformers.AutoModelForQuestionAnswering,
    "sequence_classification": transformers.AutoModelForSequenceClassification,
    "discriminator": transformers.ElectraForPreTraining,
}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        models = json.load(f)
    for entry in models:
        fields = dict(entry["config"])
        config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
        head = HEADS[entry["head"]]
        if head is transformers.ElectraForPreTraining:
            model = head(config)
        else:
            model = head.from_config(config)
        print(json.dumps([model.num_parameters(), model.num_parameters(exclude_embeddings=True)]))


if __name__ == "__main__":
    main()
