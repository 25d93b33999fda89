"""Masks drawn by Hugging Face's MLM collators on one example, summarised as JSON.

    python3 masking_collators.py VOCAB_TXT TRIALS

Tokenizes one text with BertTokenizerFast(VOCAB_TXT) (the text has words of several
word pieces and no punctuation, so a word is the same thing for the tokenizer's word_ids and
for transformers' offset rule), masks it TRIALS times with each collator, and prints
  {"example": {"input_ids", "word_ids" (null for special tokens), "special_tokens_mask"},
   "mask_token_id", "vocab_size",
   "<variant>": {"selected": [tokens selected in trial i, ...],
                 "selected_words": [whole words selected in trial i, ...],
                 "masked", "random", "kept": selected tokens that became the mask token, a
                 token other than the original, the original (summed over trials),
                 "partial_words": words selected in part (summed)}}
for the variants
  token       DataCollatorForLanguageModeling(mlm_probability=0.15) (80/10/10)
  whole_word  DataCollatorForLanguageModeling(whole_word_mask=True, mlm_probability=0.2)
  course      the HF course's whole_word_masking_data_collator with wwm_probability=0.2
              (chapter 7, "Fine-tuning a masked language model"; its code is copied below).
"""
import collections
import json
import os
import sys
import warnings

import numpy as np
import torch
from transformers import BertTokenizerFast, DataCollatorForLanguageModeling, default_data_collator

TEXT = "the unbelievably enthusiastic instructors reorganized everything whereas tokenization " \
       "algorithms misunderstand extraordinarily long sentences about hippopotamuses"
WWM_PROBABILITY = 0.2


def course_collator(tokenizer):
    # Copied from the HF course (chapter 7, section 3), which reads the global wwm_probability.
    wwm_probability = WWM_PROBABILITY

    def whole_word_masking_data_collator(features):
        for feature in features:
            word_ids = feature.pop("word_ids")

            # Create a map between words and corresponding token indices
            mapping = collections.defaultdict(list)
            current_word_index = -1
            current_word = None
            for idx, word_id in enumerate(word_ids):
                if word_id is not None:
                    if word_id != current_word:
                        current_word = word_id
                        current_word_index += 1
                    mapping[current_word_index].append(idx)

            # Randomly mask words
            mask = np.random.binomial(1, wwm_probability, (len(mapping),))
            input_ids = feature["input_ids"]
            labels = feature["labels"]
            new_labels = [-100] * len(labels)
            for word_id in np.where(mask)[0]:
                word_id = word_id.item()
                for idx in mapping[word_id]:
                    new_labels[idx] = labels[idx]
                    input_ids[idx] = tokenizer.mask_token_id
            feature["labels"] = new_labels

        return default_data_collator(features)

    return whole_word_masking_data_collator


def summarise(batch_inputs, batch_labels, example, mask_id):
    ids, word_ids = example["input_ids"], example["word_ids"]
    out = {"selected": [], "selected_words": [], "masked": 0, "random": 0, "kept": 0,
           "partial_words": 0}
    for inputs, labels in zip(batch_inputs, batch_labels):
        words = collections.defaultdict(list)
        for t, w in enumerate(word_ids):
            if w is not None:
                words[w].append(labels[t] != -100)
        out["selected"].append(sum(1 for l in labels if l != -100))
        out["selected_words"].append(sum(1 for flags in words.values() if all(flags)))
        out["partial_words"] += sum(1 for flags in words.values() if any(flags) and not all(flags))
        for t, l in enumerate(labels):
            if l == -100:
                continue
            if inputs[t] == mask_id:
                out["masked"] += 1
            elif inputs[t] == ids[t]:
                out["kept"] += 1
            else:
                out["random"] += 1
    return out


def run_hf(tokenizer, encoding, trials, **kwargs):
    collator = DataCollatorForLanguageModeling(tokenizer, return_tensors="pt", **kwargs)
    features = [{"input_ids": list(encoding["input_ids"]),
                 "special_tokens_mask": list(encoding["special_tokens_mask"]),
                 "offset_mapping": [list(o) for o in encoding["offset_mapping"]]}
                for _ in range(trials)]
    if not kwargs.get("whole_word_mask"):
        for f in features:
            del f["offset_mapping"]
    batch = collator(features)
    return batch["input_ids"].tolist(), batch["labels"].tolist()


def run_course(tokenizer, encoding, word_ids, trials):
    collator = course_collator(tokenizer)
    features = [{"input_ids": list(encoding["input_ids"]), "labels": list(encoding["input_ids"]),
                 "word_ids": list(word_ids)} for _ in range(trials)]
    batch = collator(features)
    return batch["input_ids"].tolist(), batch["labels"].tolist()


def main():
    # transformers warns that whole_word_mask forces mask_replace_prob to 1: stdout stays JSON.
    warnings.simplefilter("ignore")
    vocab, trials = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    np.random.seed(0)
    tokenizer = BertTokenizerFast.from_pretrained(os.path.dirname(os.path.abspath(vocab)))
    encoding = tokenizer(TEXT, return_special_tokens_mask=True, return_offsets_mapping=True)
    word_ids = encoding.word_ids()
    example = {"input_ids": encoding["input_ids"], "word_ids": word_ids,
               "special_tokens_mask": encoding["special_tokens_mask"]}
    mask_id = tokenizer.mask_token_id
    result = {"example": example, "mask_token_id": mask_id, "vocab_size": len(tokenizer)}
    result["token"] = summarise(*run_hf(tokenizer, encoding, trials, mlm_probability=0.15),
                                example, mask_id)
    result["whole_word"] = summarise(
        *run_hf(tokenizer, encoding, trials, mlm_probability=WWM_PROBABILITY, whole_word_mask=True),
        example, mask_id)
    result["course"] = summarise(*run_course(tokenizer, encoding, word_ids, trials), example,
                                 mask_id)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
