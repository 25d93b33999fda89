"""The train examples Hugging Face run_clm.py makes of a text file, written as JSON.

    python3 clm_group_texts.py GPT2_TOKENIZER_DIR TEXT_FILE BLOCK_SIZE OUT_JSON [keep_linebreaks]

Steps as run_clm.py takes them (transformers/examples/pytorch/language-modeling/run_clm.py):
load_dataset("text", keep_linebreaks=...) gives one row per line, with its "\n" when
keep_linebreaks (run_clm.py's default, True) and without it otherwise; tokenize_function runs the
tokenizer over the rows; group_texts (copied below) runs through datasets.map(batched=True),
whose default batch_size is 1000 rows, so each batch of 1000 lines is grouped on its own and
drops its own remainder. `datasets` itself is not needed: its text loader and map batching are
the few lines below. OUT_JSON gets {"text_tokens": N, "blocks": [[ids...], ...]}.
"""
import io
import json
import sys
from itertools import chain

from transformers import GPT2Tokenizer

MAP_BATCH_SIZE = 1000  # datasets.Dataset.map's default batch_size


def text_rows(path, keep_linebreaks):
    # datasets/packaged_modules/text/text.py (sample_by="line"): the file opened in text mode
    # (universal newlines), StringIO(...).readlines(), then, unless keep_linebreaks,
    # line.rstrip("\n").
    with open(path, encoding="utf-8") as f:
        lines = io.StringIO(f.read()).readlines()
    return lines if keep_linebreaks else [line.rstrip("\n") for line in lines]


def group_texts(examples, block_size):
    # run_clm.py's group_texts, verbatim but for block_size as an argument.
    concatenated_examples = {k: list(chain(*examples[k])) for k in examples.keys()}
    total_length = len(concatenated_examples[list(examples.keys())[0]])
    # We drop the small remainder, and if the total_length < block_size  we exclude this batch
    # and return an empty dict.
    total_length = (total_length // block_size) * block_size
    result = {
        k: [t[i : i + block_size] for i in range(0, total_length, block_size)]
        for k, t in concatenated_examples.items()
    }
    result["labels"] = result["input_ids"].copy()
    return result


def main(tokenizer_dir, text_file, block_size, out_json, keep_linebreaks):
    tokenizer = GPT2Tokenizer.from_pretrained(tokenizer_dir)
    rows = text_rows(text_file, keep_linebreaks)
    blocks, text_tokens = [], 0
    for start in range(0, len(rows), MAP_BATCH_SIZE):
        tokenized = tokenizer(rows[start : start + MAP_BATCH_SIZE])  # tokenize_function
        text_tokens += sum(len(ids) for ids in tokenized["input_ids"])
        blocks += group_texts({"input_ids": tokenized["input_ids"]}, block_size)["input_ids"]
    with open(out_json, "w") as f:
        json.dump({"text_tokens": text_tokens, "blocks": blocks}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4],
         len(sys.argv) > 5 and sys.argv[5] == "keep_linebreaks")
