#!/usr/bin/env python3
"""Makes the classification test data committed under tests/testdata/ (python3 stdlib only).

  tests/testdata/brown3/{train,validation}.csv
      columns text,label: Brown corpus sentences of three genres (government, adventure, reviews),
      5-40 words, split by Brown file id so train and validation come from different documents;
      300 train and 100 validation sentences per genre. Of the triples of Brown's 15 genres these
      three were the most separable by a unigram naive Bayes classifier (mean validation accuracy
      0.76 over five seeds; news/romance/religion: 0.67).
  tests/testdata/paraphrase/{train,dev,test}.tsv
      MRPC's exact layout (train/dev: Quality, #1 ID, #2 ID, #1 String, #2 String; test: index,
      #1 ID, #2 ID, #1 String, #2 String) from aligned King James / World English Bible verses:
      positives are the two translations of one verse, negatives pair a KJV verse with a WEB
      verse 1-3 verses away in the same chapter; 50/50; split by chapter.
  tests/testdata/paraphrase/pretrain.txt
      Unlabelled text for in-domain masked-LM pretraining before fine-tuning, as XLM's
      translation language modelling does it: one aligned verse pair per line, "KJV [SEP] WEB",
      drawn only from the train split's chapters (dev and test chapters never appear).
  tests/testdata/paraphrase/base-model/vocab.txt
      The bert-base-uncased WordPiece entries that the KJV/WEB corpus uses (which pieces exist,
      no labels), plus the special tokens and the ASCII characters, in bert-base-uncased's order:
      9887 of 30522 entries, so that the small pretrained base model stays small.

Deterministic: every choice comes from random.Random(SEED) over sorted inputs. Run from the
repository root:

  python3 scripts/make_classification_data.py [--corpora ../shared/data/corpora]

It prints the majority-class fraction of each split and, as yardsticks for how separable the
data is, the brown3 validation accuracy of a unigram naive Bayes classifier and the paraphrase dev
accuracy of a word-overlap threshold fitted on train.
"""

import argparse
import collections
import csv
import math
import os
import random
import re
import string
import unicodedata

SEED = 20240611
BROWN_GENRES = ("government", "adventure", "reviews")
BROWN_TRAIN_PER_GENRE = 300
BROWN_VALIDATION_PER_GENRE = 100
BROWN_MIN_WORDS, BROWN_MAX_WORDS = 5, 40
PARAPHRASE_ROWS = {"train": 1000, "dev": 300, "test": 100}
PARAPHRASE_MAX_WORDS = 40
PRETRAIN_LINES = 4000
KJV_ID_BASE, WEB_ID_BASE = 1000000, 2000000
MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
MRPC_TEST_HEADER = ["index", "#1 ID", "#2 ID", "#1 String", "#2 String"]


def words(text):
    return text.split()


def majority_fraction(labels):
    counts = collections.Counter(labels)
    return max(counts.values()) / len(labels)


def naive_bayes_accuracy(train, evaluation):
    """Multinomial naive Bayes on lower-cased word unigrams with add-one smoothing."""
    word_counts = collections.defaultdict(collections.Counter)
    class_counts = collections.Counter()
    vocabulary = set()
    for text, label in train:
        tokens = [w.lower() for w in words(text)]
        word_counts[label].update(tokens)
        class_counts[label] += 1
        vocabulary.update(tokens)
    totals = {label: sum(c.values()) for label, c in word_counts.items()}
    correct = 0
    for text, label in evaluation:
        def score(c):
            s = math.log(class_counts[c] / len(train))
            for w in words(text):
                s += math.log((word_counts[c][w.lower()] + 1) / (totals[c] + len(vocabulary)))
            return s
        correct += max(sorted(class_counts), key=score) == label
    return correct / len(evaluation)


# ---------------------------------------------------------------------------------------------
# brown3


def read_brown(path):
    by_genre = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path, encoding="utf-8") as f:
        for line in f:
            genre, file_id, sentence = line.rstrip("\n").split("\t")
            if genre in BROWN_GENRES and BROWN_MIN_WORDS <= len(words(sentence)) <= BROWN_MAX_WORDS:
                by_genre[genre][file_id].append(sentence)
    return by_genre


def split_brown_genre(rng, files):
    """Holds out a quarter of the genre's documents (at least two) for validation."""
    file_ids = sorted(files)
    rng.shuffle(file_ids)
    held_out = max(2, len(file_ids) // 4)
    validation = [s for f in sorted(file_ids[:held_out]) for s in files[f]]
    train = [s for f in sorted(file_ids[held_out:]) for s in files[f]]
    if len(validation) < BROWN_VALIDATION_PER_GENRE or len(train) < BROWN_TRAIN_PER_GENRE:
        raise SystemExit("brown: too few sentences for the requested split")
    return (rng.sample(train, BROWN_TRAIN_PER_GENRE),
            rng.sample(validation, BROWN_VALIDATION_PER_GENRE))


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def make_brown(corpora, out_dir, rng):
    by_genre = read_brown(os.path.join(corpora, "brown_sentences.tsv"))
    train, validation = [], []
    for genre in BROWN_GENRES:
        genre_train, genre_validation = split_brown_genre(rng, by_genre[genre])
        train += [(s, genre) for s in genre_train]
        validation += [(s, genre) for s in genre_validation]
    rng.shuffle(train)
    rng.shuffle(validation)
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "train.csv"), ["text", "label"], train)
    write_csv(os.path.join(out_dir, "validation.csv"), ["text", "label"], validation)
    print(f"brown3: {len(train)} train, {len(validation)} validation rows, genres "
          f"{', '.join(BROWN_GENRES)}")
    print(f"brown3: validation majority-class fraction "
          f"{majority_fraction([l for _, l in validation]):.4f}")
    print(f"brown3: unigram naive Bayes validation accuracy "
          f"{naive_bayes_accuracy(train, validation):.4f}")


# ---------------------------------------------------------------------------------------------
# paraphrase


Verse = collections.namedtuple("Verse", "number chapter position kjv web")


def read_verses(path):
    """Verses grouped by chapter ("Genesis 1"), in file order; number = 1-based file line."""
    chapters = collections.OrderedDict()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            ref, kjv, web = line.rstrip("\n").split("\t")
            chapter = ref.rsplit(":", 1)[0]
            verses = chapters.setdefault(chapter, [])
            verses.append(Verse(number, chapter, len(verses), kjv.strip(), web.strip()))
    return chapters


def short_enough(text):
    return len(words(text)) <= PARAPHRASE_MAX_WORDS


def word_set(text):
    return set(re.findall(r"[a-z]+", text.lower()))


def too_similar(a, b):
    """Neighbouring verses that (nearly) repeat each other would be false negatives."""
    x, y = word_set(a), word_set(b)
    return not x or not y or len(x & y) / len(x | y) > 0.6


def negative_partner(rng, verse, chapter_verses):
    offsets = [d for d in (-3, -2, -1, 1, 2, 3) if 0 <= verse.position + d < len(chapter_verses)]
    rng.shuffle(offsets)
    for d in offsets:
        other = chapter_verses[verse.position + d]
        if short_enough(other.web) and not too_similar(verse.web, other.web):
            return other
    return None


def split_chapters(rng, chapters):
    names = sorted(chapters)
    rng.shuffle(names)
    # Chapters in proportion to the rows wanted, with room to spare (only some verses are used).
    total = sum(PARAPHRASE_ROWS.values())
    cut_dev = len(names) * PARAPHRASE_ROWS["train"] // total
    cut_test = cut_dev + len(names) * PARAPHRASE_ROWS["dev"] // total
    return {"train": names[:cut_dev], "dev": names[cut_dev:cut_test], "test": names[cut_test:]}


def short_verses(chapters, chapter_names):
    """The verses of the named chapters whose two translations are both short enough, in
    chapter-name then verse order."""
    return [v for name in sorted(chapter_names) for v in chapters[name]
            if short_enough(v.kjv) and short_enough(v.web)]


def paraphrase_rows(rng, chapters, chapter_names, count):
    """count/2 positive and count/2 negative rows, each from a distinct KJV verse."""
    anchors = short_verses(chapters, chapter_names)
    rng.shuffle(anchors)
    positives, negatives = [], []
    for verse in anchors:
        if len(positives) < count // 2:
            positives.append(("1", KJV_ID_BASE + verse.number, WEB_ID_BASE + verse.number,
                              verse.kjv, verse.web))
            continue
        if len(negatives) == count - count // 2:
            break
        other = negative_partner(rng, verse, chapters[verse.chapter])
        if other is not None:
            negatives.append(("0", KJV_ID_BASE + verse.number, WEB_ID_BASE + other.number,
                              verse.kjv, other.web))
    if len(positives) + len(negatives) != count:
        raise SystemExit("paraphrase: too few verses for the requested split")
    rows = positives + negatives
    rng.shuffle(rows)
    return rows


def pretrain_lines(rng, chapters, chapter_names, count):
    """count aligned "KJV [SEP] WEB" lines from the given chapters, in a random order."""
    verses = short_verses(chapters, chapter_names)
    return [f"{v.kjv} [SEP] {v.web}" for v in rng.sample(verses, count)]


def basic_tokens(text):
    """BERT's uncased BasicTokenizer on plain text: lower-case, strip accents, split on white
    space and punctuation."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    out = []
    for word in text.split():
        current = ""
        for c in word:
            if unicodedata.category(c).startswith("P") or c in "$+<=>^`|~":
                if current:
                    out.append(current)
                    current = ""
                out.append(c)
            else:
                current += c
        if current:
            out.append(current)
    return out


def wordpieces(word, vocabulary):
    """Greedy longest-match-first WordPiece; ["[UNK]"] when some part matches nothing."""
    pieces, start = [], 0
    while start < len(word):
        end, piece = len(word), None
        while start < end:
            candidate = word[start:end] if start == 0 else "##" + word[start:end]
            if candidate in vocabulary:
                piece = candidate
                break
            end -= 1
        if piece is None:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def trimmed_vocabulary(chapters, bert_vocab_path):
    """bert-base-uncased's entries that the corpus uses, with the special tokens and every ASCII
    character (alone and as a "##" continuation), in the original order."""
    with open(bert_vocab_path, encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    known = set(vocab)
    used = set()
    for verses in chapters.values():
        for verse in verses:
            for text in (verse.kjv, verse.web):
                for word in basic_tokens(text):
                    used.update(wordpieces(word, known))
    ascii_chars = set(string.printable.strip())
    specials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    return [w for w in vocab if w in specials or w in used or (len(w) == 1 and w in ascii_chars)
            or (len(w) == 3 and w.startswith("##") and w[2] in ascii_chars)]


def overlap_baseline_accuracy(train, evaluation):
    """Predicts "1" when the Jaccard overlap of the two strings' word sets exceeds a threshold
    chosen on train."""
    def overlap(row):
        x, y = word_set(row[3]), word_set(row[4])
        return len(x & y) / max(1, len(x | y))

    def accuracy(rows, threshold):
        return sum((overlap(r) > threshold) == (r[0] == "1") for r in rows) / len(rows)

    threshold = max((i / 100 for i in range(100)), key=lambda t: accuracy(train, t))
    return accuracy(evaluation, threshold)


def write_tsv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        for row in [header] + rows:
            fields = [str(x) for x in row]
            assert not any("\t" in x or "\n" in x or "\r" in x for x in fields)
            f.write("\t".join(fields) + "\n")


def make_paraphrase(corpora, out_dir, bert_vocab, rng):
    chapters = read_verses(os.path.join(corpora, "kjv_web_pairs.tsv"))
    split = split_chapters(rng, chapters)
    os.makedirs(out_dir, exist_ok=True)
    rows = {}
    for name in ("train", "dev", "test"):
        rows[name] = paraphrase_rows(rng, chapters, split[name], PARAPHRASE_ROWS[name])
    write_tsv(os.path.join(out_dir, "train.tsv"), MRPC_HEADER, rows["train"])
    write_tsv(os.path.join(out_dir, "dev.tsv"), MRPC_HEADER, rows["dev"])
    test = [(i,) + row[1:] for i, row in enumerate(rows["test"])]  # MRPC test: no label
    write_tsv(os.path.join(out_dir, "test.tsv"), MRPC_TEST_HEADER, test)
    # Drawn after the splits so that adding it left train/dev/test unchanged.
    pretrain = pretrain_lines(rng, chapters, split["train"], PRETRAIN_LINES)
    with open(os.path.join(out_dir, "pretrain.txt"), "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in pretrain))
    base = os.path.join(out_dir, "base-model")
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in trimmed_vocabulary(chapters, bert_vocab)))
    for name in ("train", "dev", "test"):
        print(f"paraphrase: {name} {len(rows[name])} rows from {len(split[name])} chapters, "
              f"majority-class fraction {majority_fraction([r[0] for r in rows[name]]):.4f}")
    print(f"paraphrase: word-overlap baseline dev accuracy "
          f"{overlap_baseline_accuracy(rows['train'], rows['dev']):.4f}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora",
                        default=os.path.join(root, "..", "shared", "data", "corpora"))
    parser.add_argument("--out", default=os.path.join(root, "tests", "testdata"))
    args = parser.parse_args()
    make_brown(args.corpora, os.path.join(args.out, "brown3"), random.Random(SEED))
    bert_vocab = os.path.join(root, "tests", "data", "tokenizers", "bert-base-uncased", "vocab.txt")
    make_paraphrase(args.corpora, os.path.join(args.out, "paraphrase"), bert_vocab,
                    random.Random(SEED + 1))


if __name__ == "__main__":
    main()
