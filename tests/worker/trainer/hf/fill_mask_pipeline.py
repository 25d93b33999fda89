"""Hugging Face's fill-mask pipeline on an hf-tiny fixture model, written as JSON.

    python3 fill_mask_pipeline.py FIXTURE_DIR MODEL_DIR TOP_K TEXT...

Copies FIXTURE_DIR's config.json and model.safetensors (a *ForMaskedLM of vocab_size 99) to
MODEL_DIR, gives it a BERT word-piece tokenizer of 99 tokens ([PAD] 0, [UNK], [CLS], [SEP],
[MASK], the words of the texts and filler words) saved there with save_pretrained, runs
pipeline("fill-mask", MODEL_DIR, top_k=TOP_K) on each TEXT, and prints its outputs as one JSON
list on stdout, one entry per TEXT: [{"score", "token", "token_str", "sequence"}, ...] for a
text with one mask, a list of such lists for several (scores as repr floats).
"""
import json
import os
import shutil
import sys
import warnings

from transformers import BertTokenizerFast, pipeline

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["this", "is", "a", "great", ".", "movie", "day", "film", "book", "idea", "job", "time",
         "the", "of", "and", "to", "in", "was", "it", "he", "she", "for", "on", "with", "as",
         "his", "her", "at", "by", "an", "be", "had", "not", "but", "they", "you", "from",
         "have", "which", "or", "were", "one", "all", "would", "there", "their", "been", "has",
         "will", "if", "more", "when", "so", "who", "no", "we", "what", "can", "out", "up",
         "about", "into", "than", "them", "only", "other", "new", "some", "could", "time",
         "these", "two", "may", "then", "do", "first", "any", "my", "now", "such", "like",
         "our", "over", "man", "me", "even", "most", "made", "after", "also", "did", "many",
         "##s", "##ing", "##ed", "##ly", "##er", "good", "bad", "small", "big", "old"]


def vocab(size):
    tokens = []
    for t in SPECIAL + WORDS:
        if t not in tokens:
            tokens.append(t)
    assert len(tokens) >= size, len(tokens)
    return tokens[:size]


def main():
    warnings.simplefilter("ignore")
    fixture, model_dir, top_k, texts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    os.makedirs(model_dir, exist_ok=True)
    for name in ("config.json", "model.safetensors"):
        shutil.copy(os.path.join(fixture, name), os.path.join(model_dir, name))
    with open(os.path.join(fixture, "config.json")) as f:
        size = json.load(f)["vocab_size"]
    vocab_file = os.path.join(model_dir, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(vocab(size)) + "\n")
    BertTokenizerFast.from_pretrained(model_dir).save_pretrained(model_dir)
    fill_mask = pipeline("fill-mask", model=model_dir, tokenizer=model_dir, top_k=top_k,
                         device="cpu")
    print(json.dumps([fill_mask(text) for text in texts]))


if __name__ == "__main__":
    main()
