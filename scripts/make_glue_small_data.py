#!/usr/bin/env python3
"""Makes the small GLUE-format data in tests/testdata/glue_small from real English text.

    python3 scripts/make_glue_small_data.py [--corpora DIR] [--out DIR]

The corpora default to ../shared/data/corpora beside the repository (brown_sentences.tsv: the
Brown corpus, one sentence a line with its genre; kjv_web_pairs.tsv: each Bible verse in the
King James and the World English Bible wordings); the output folder to tests/testdata/glue_small.
The result depends only on the corpora and SEED: running the script again writes the same bytes.

Each task folder has the exact files and columns of the GLUE download (download_glue_data.py), as
transformers' GLUE processors read them; the texts are real, the labels follow simple rules:
  CoLA   a Brown sentence of 6-14 words is acceptable (1); the same words shuffled are not (0).
         train.tsv / dev.tsv without header (source, label, original judgment, sentence);
         test.tsv: index, sentence.
  STS-B  a KJV verse with a WEB verse (the same one or another one of the chapter); the score
         is 5 x the Jaccard overlap of their lower-cased word sets, as "%.3f".
  QQP    a KJV verse with the WEB wording of the same verse (is_duplicate 1) or of the next
         verse (0).
  MNLI   premise a KJV verse; hypothesis the WEB wording of the same verse (entailment), of the
         next verse (neutral) or of a verse of another book (contradiction). Genres are book
         names: the matched sets use the training books, the mismatched ones other books.
         train.tsv has 12 columns, dev_*.tsv 16 (five annotator labels), test_*.tsv 10.
Rows: train 32 (MNLI 48), dev 16 (MNLI 16 + 16), test 8 (MNLI 8 + 8).
Python 3 standard library only.
"""

import argparse
import os
import random
import re

SEED = 2018
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TRAIN, DEV, TEST = 32, 16, 8
MATCHED_BOOKS = ["Genesis", "Exodus", "Luke"]
MISMATCHED_BOOKS = ["Proverbs", "Acts"]


def words(text):
    return re.findall(r"[a-z']+", text.lower())


def write(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write("\t".join(row) + "\n")


def brown_sentences(corpora):
    out = []
    with open(os.path.join(corpora, "brown_sentences.tsv"), encoding="utf-8") as f:
        for line in f:
            genre, _, sentence = line.rstrip("\n").split("\t")
            sentence = re.sub(r" ([.,;:!?'])", r"\1", sentence)
            tokens = sentence.split()
            if 6 <= len(tokens) <= 14 and '"' not in sentence and "`" not in sentence:
                out.append((genre, sentence))
    return out


def verses(corpora):
    """[(book, chapter, verse, kjv, web)] of short verses, in Bible order."""
    out = []
    with open(os.path.join(corpora, "kjv_web_pairs.tsv"), encoding="utf-8") as f:
        for line in f:
            ref, kjv, web = line.rstrip("\n").split("\t")
            book, cv = ref.rsplit(" ", 1)
            chapter, verse = cv.split(":")
            if len(kjv.split()) <= 24 and len(web.split()) <= 24:
                out.append((book, chapter, int(verse), kjv, web))
    return out


def cola(rng, sentences, out):
    chosen = rng.sample(sentences, TRAIN + DEV + TEST)
    rows = []
    for i, (genre, sentence) in enumerate(chosen[: TRAIN + DEV]):
        tokens = sentence.split()
        if i % 2:
            shuffled = tokens[:]
            while shuffled == tokens:
                rng.shuffle(shuffled)
            rows.append([genre[:4] + "01", "0", "*", " ".join(shuffled)])
        else:
            rows.append([genre[:4] + "01", "1", "", sentence])
    write(f"{out}/CoLA/train.tsv", rows[:TRAIN])
    write(f"{out}/CoLA/dev.tsv", rows[TRAIN:])
    test = [["index", "sentence"]]
    for i, (_, sentence) in enumerate(chosen[TRAIN + DEV :]):
        tokens = sentence.split()
        if i % 2:
            rng.shuffle(tokens)
        test.append([str(i), " ".join(tokens)])
    write(f"{out}/CoLA/test.tsv", test)


def next_in_chapter(vs, i):
    book, chapter = vs[i][0], vs[i][1]
    for j in range(i + 1, min(i + 6, len(vs))):
        if vs[j][0] == book and vs[j][1] == chapter:
            return j
    return None


def pairs(rng, vs, count):
    """(i, j) verse index pairs: j == i (same verse) or j the next verse of the chapter."""
    out = []
    while len(out) < count:
        i = rng.randrange(len(vs))
        j = next_in_chapter(vs, i)
        if j is None:
            continue
        out.append((i, i) if len(out) % 2 == 0 else (i, j))
    return out


def jaccard(a, b):
    a, b = set(words(a)), set(words(b))
    return len(a & b) / len(a | b)


def stsb(rng, vs, out):
    header = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
              "sentence1", "sentence2"]
    chosen = pairs(rng, vs, TRAIN + DEV + TEST)
    rows = []
    for n, (i, j) in enumerate(chosen):
        kjv, web = vs[i][3], vs[j][4]
        index = n if n < TRAIN else n - TRAIN  # Each split's index counts from 0.
        rows.append([str(index), "main-bible", vs[i][0], "kjv-web", f"{n:04d}", "none", "none",
                     kjv, web, "%.3f" % (5 * jaccard(kjv, web))])
    write(f"{out}/STS-B/train.tsv", [header + ["score"]] + rows[:TRAIN])
    write(f"{out}/STS-B/dev.tsv", [header + ["score"]] + rows[TRAIN : TRAIN + DEV])
    test = [[str(k)] + r[1:-1] for k, r in enumerate(rows[TRAIN + DEV :])]
    write(f"{out}/STS-B/test.tsv", [header] + test)


def qqp(rng, vs, out):
    chosen = pairs(rng, vs, TRAIN + DEV + TEST)
    rows = []
    for n, (i, j) in enumerate(chosen):
        rows.append([str(100 + n), str(2 * n + 1), str(2 * n + 2), vs[i][3], vs[j][4],
                     "1" if i == j else "0"])
    header = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]
    write(f"{out}/QQP/train.tsv", [header] + rows[:TRAIN])
    write(f"{out}/QQP/dev.tsv", [header] + rows[TRAIN : TRAIN + DEV])
    test = [[str(k), r[3], r[4]] for k, r in enumerate(rows[TRAIN + DEV :])]
    write(f"{out}/QQP/test.tsv", [["id", "question1", "question2"]] + test)


def parses(text):
    tokens = text.split()
    return ["( " + " ".join(tokens) + " )",
            "(ROOT (S " + " ".join(f"(NN {t})" for t in tokens) + "))"]


def mnli_rows(rng, vs, books, count):
    """[(genre, premise, hypothesis, label)], labels in turn."""
    in_books = [i for i, v in enumerate(vs) if v[0] in books]
    others = [i for i, v in enumerate(vs) if v[0] not in books and v[0] not in MATCHED_BOOKS]
    rows = []
    while len(rows) < count:
        i = rng.choice(in_books)
        label = ["entailment", "neutral", "contradiction"][len(rows) % 3]
        if label == "entailment":
            j = i
        elif label == "neutral":
            j = next_in_chapter(vs, i)
            if j is None:
                continue
        else:
            j = rng.choice(others)
        rows.append((vs[i][0], vs[i][3], vs[j][4], label))
    return rows


def mnli(rng, vs, out):
    head = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse",
            "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1",
            "sentence2"]

    def cells(n, genre, premise, hypothesis):
        p, h = parses(premise), parses(hypothesis)
        return [str(n), str(5000 + n), f"{5000 + n}e", genre, p[0], h[0], p[1], h[1], premise,
                hypothesis]

    train = [head + ["label1", "gold_label"]]
    for n, (g, p, h, label) in enumerate(mnli_rows(rng, vs, MATCHED_BOOKS, 3 * TRAIN // 2)):
        train.append(cells(n, g, p, h) + [label, label])
    write(f"{out}/MNLI/train.tsv", train)
    dev_head = head + [f"label{k}" for k in range(1, 6)] + ["gold_label"]
    for name, books in (("matched", MATCHED_BOOKS), ("mismatched", MISMATCHED_BOOKS)):
        dev = [dev_head]
        for n, (g, p, h, label) in enumerate(mnli_rows(rng, vs, books, DEV)):
            dev.append(cells(n, g, p, h) + [label] * 6)
        write(f"{out}/MNLI/dev_{name}.tsv", dev)
        test = [head]
        for n, (g, p, h, _) in enumerate(mnli_rows(rng, vs, books, TEST)):
            test.append(cells(n, g, p, h))
        write(f"{out}/MNLI/test_{name}.tsv", test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default=os.path.join(REPO, "..", "shared", "data", "corpora"))
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "testdata", "glue_small"))
    args = parser.parse_args()
    rng = random.Random(SEED)
    sentences = brown_sentences(args.corpora)
    vs = verses(args.corpora)
    cola(rng, sentences, args.out)
    stsb(rng, vs, args.out)
    qqp(rng, vs, args.out)
    mnli(rng, vs, args.out)


if __name__ == "__main__":
    main()
