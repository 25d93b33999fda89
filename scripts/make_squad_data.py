#!/usr/bin/env python3
"""Makes the SQuAD-format test data in tests/testdata/squad from Jane Austen's novels.

    python3 scripts/make_squad_data.py [--corpus PATH] [--out DIR]

The corpus defaults to ../shared/data/corpora/austen_all.txt beside the repository (six novels,
public domain); the output folder to tests/testdata/squad. The result depends only on the corpus
and SEED: running the script again writes the same bytes.

Contexts are real paragraphs of 30-100 words (white space runs joined to one space). Answers are
real spans of them, found by local cues so that a tiny model trained from scratch can learn to
find them:
  title    the capitalised name right after the only title (Mr., Mrs., Miss, Lady, Sir,
           Colonel, Captain, Dr.) in the paragraph: "What name comes after Mrs. in the passage?"
           -> "Jennings";
  number   the number words right before the only "<number> <unit>" (years, pounds, miles, ...):
           "How many miles are mentioned in the passage?" -> "sixteen";
  speaker  the name right after the only "said/cried/replied <Name>": "Who replied in this
           passage?" -> "Elinor".
Question wordings vary (several templates per kind). Dev questions come from other paragraphs
than training questions.

Files (SQuAD JSON, compact, ids unique within each file):
  train-v1.1.json, dev-v1.1.json  answerable questions only;
  train-v2.0.json, dev-v2.0.json  the same questions plus unanswerable ones ("is_impossible":
                                  true, no answers) on about 40% of the same paragraphs, naming a
                                  title or unit that the paragraph does not contain.
Python 3 standard library only.
"""

import argparse
import json
import os
import random
import re
import sys

SEED = 1813
MIN_WORDS, MAX_WORDS = 30, 100
DEV_QUESTIONS, TRAIN_QUESTIONS = 300, 1500
IMPOSSIBLE_FRACTION = 0.4  # Of the paragraphs, in the v2 files.

# The line that starts each novel in austen_all.txt, and the article title it gets.
NOVELS = {"EMMA": "Emma", "MANSFIELD PARK": "Mansfield Park",
          "NORTHANGER ABBEY": "Northanger Abbey", "Persuasion": "Persuasion",
          "PRIDE AND PREJUDICE": "Pride and Prejudice",
          "SENSE AND SENSIBILITY": "Sense and Sensibility"}

TITLES = ["Mr.", "Mrs.", "Miss", "Lady", "Sir", "Colonel", "Captain", "Dr."]
ANY_TITLE = re.compile(r"\b(?:Mr\.|Mrs\.|Dr\.|Miss\b|Lady\b|Sir\b|Colonel\b|Captain\b)")
TITLE_NAME = re.compile(r"\b(Mr\.|Mrs\.|Dr\.|Miss|Lady|Sir|Colonel|Captain) ([A-Z][a-z]+)\b")

NUMBER_WORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
               r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
               r"fifty|sixty|seventy|eighty|ninety|hundred|thousand)")
NUMBER = rf"(?:{NUMBER_WORD}(?:-{NUMBER_WORD})?|[0-9][0-9,]*)"
UNITS = ["years", "pounds", "miles", "days", "weeks", "months", "hours", "minutes", "times",
         "yards"]
NUMBER_UNIT = re.compile(rf"\b({NUMBER}(?: (?:and )?{NUMBER})*) ({'|'.join(UNITS)})\b",
                         re.IGNORECASE)

SPEAKER = re.compile(r"\b(said|cried|replied) ([A-Z][a-z]+)\b")
NOT_NAMES = {"Mr", "Mrs", "Dr", "Miss", "Lady", "Sir", "Colonel", "Captain", "The", "That",
             "This", "It", "He", "She", "They", "We", "You", "Yes", "No", "Oh", "But", "And"}

TITLE_TEMPLATES = [
    "Who is the person called {t} ___ in this passage?",
    "What name comes after {t} in the passage?",
    "Which {t} is mentioned here?",
    "The passage mentions {t} who?",
    "What is the name given after the title {t}?",
    "Name the character addressed as {t} in this text.",
]
NUMBER_TEMPLATES = [
    "How many {u} are mentioned in the passage?",
    "The passage speaks of how many {u}?",
    "What number of {u} does the text give?",
    "How many {u}?",
]
SPEAKER_TEMPLATES = [
    "Who {v} something in this passage?",
    "Which character {v} something here?",
    "Name the person who {v} in the passage.",
    "Who {v} this?",
]


def read_novels(path):
    """[(novel title, [paragraph, ...])] in corpus order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    novels, current = [], None
    for line in lines:
        if line.strip() in NOVELS:
            current = (NOVELS[line.strip()], [[]])
            novels.append(current)
        elif current is not None:
            if line.strip():
                current[1][-1].append(line.strip())
            elif current[1][-1]:
                current[1].append([])
    assert [n for n, _ in novels] == list(NOVELS.values()), [n for n, _ in novels]
    return [(name, [" ".join(p) for p in paras if p]) for name, paras in novels]


def title_question(paragraph, rng):
    if len(ANY_TITLE.findall(paragraph)) != 1:
        return None
    match = TITLE_NAME.search(paragraph)
    if match is None or match.group(2) in NOT_NAMES:
        return None
    template = rng.choice(TITLE_TEMPLATES)
    return template.format(t=match.group(1)), match.group(2), match.start(2)


def number_question(paragraph, rng):
    matches = list(NUMBER_UNIT.finditer(paragraph))
    if len(matches) != 1:
        return None
    match = matches[0]
    unit = match.group(2).lower()
    template = rng.choice(NUMBER_TEMPLATES)
    return template.format(u=unit), match.group(1), match.start(1)


def speaker_question(paragraph, rng):
    matches = list(SPEAKER.finditer(paragraph))
    if len(matches) != 1 or matches[0].group(2) in NOT_NAMES:
        return None
    match = matches[0]
    template = rng.choice(SPEAKER_TEMPLATES)
    return template.format(v=match.group(1)), match.group(2), match.start(2)


def impossible_question(paragraph, kinds, rng):
    """A title or number question (one of `kinds`) whose title or unit the paragraph lacks.

    Absence is checked on substrings of the lower-cased paragraph ("sir" also in "desire"), which
    errs on the side of leaving a title or unit out. Speaker questions are not made unanswerable:
    "Who said something?" of a paragraph where someone "cried" would be a matter of opinion.
    """
    kinds = sorted(k for k in kinds if k != "speaker")
    if not kinds:
        return None
    kind = rng.choice(kinds)
    lower = paragraph.lower()
    if kind == "title":
        absent = [t for t in TITLES if t.lower().rstrip(".") not in lower]
        return rng.choice(TITLE_TEMPLATES).format(t=rng.choice(absent)) if absent else None
    absent = [u for u in UNITS if u.rstrip("s") not in lower]
    return rng.choice(NUMBER_TEMPLATES).format(u=rng.choice(absent)) if absent else None


def paragraph_questions(paragraph, rng):
    """{kind: (question, answer text, answer start)} for the cues the paragraph has."""
    found = {}
    for kind, make in (("title", title_question), ("number", number_question),
                       ("speaker", speaker_question)):
        question = make(paragraph, rng)
        if question is not None:
            found[kind] = question
    return found


def candidate_paragraphs(novels, rng):
    """[(novel, paragraph, {kind: question})] for every usable paragraph, in corpus order."""
    out = []
    for novel, paragraphs in novels:
        for paragraph in paragraphs:
            if not MIN_WORDS <= len(paragraph.split()) <= MAX_WORDS:
                continue
            questions = paragraph_questions(paragraph, rng)
            if questions:
                out.append((novel, paragraph, questions))
    return out


def split(candidates, rng):
    """(dev, train): whole paragraphs, about DEV_QUESTIONS and TRAIN_QUESTIONS questions."""
    order = list(range(len(candidates)))
    rng.shuffle(order)
    dev, train, dev_count, train_count = [], [], 0, 0
    for i in order:
        n = len(candidates[i][2])
        if dev_count < DEV_QUESTIONS:
            dev.append(i)
            dev_count += n
        elif train_count < TRAIN_QUESTIONS:
            train.append(i)
            train_count += n
    return sorted(dev), sorted(train)


def build(candidates, indices, name, rng, with_impossible):
    """A SQuAD JSON document: one article per novel, paragraphs in corpus order."""
    articles, by_novel, count = [], {}, 0
    for i in indices:
        novel, paragraph, questions = candidates[i]
        qas = []
        for kind in ("title", "number", "speaker"):
            if kind not in questions:
                continue
            question, text, start = questions[kind]
            assert paragraph[start:start + len(text)] == text
            count += 1
            qa = {"id": f"{name}-{count:05d}", "question": question,
                  "answers": [{"text": text, "answer_start": start}]}
            if with_impossible:
                qa["is_impossible"] = False
            qas.append(qa)
        if with_impossible and rng.random() < IMPOSSIBLE_FRACTION:
            question = impossible_question(paragraph, questions.keys(), rng)
            if question is not None:
                count += 1
                qas.append({"id": f"{name}-{count:05d}", "question": question, "answers": [],
                            "is_impossible": True})
        if novel not in by_novel:
            by_novel[novel] = {"title": novel, "paragraphs": []}
            articles.append(by_novel[novel])
        by_novel[novel]["paragraphs"].append({"context": paragraph, "qas": qas})
    version = "v2.0" if with_impossible else "1.1"
    return {"version": version, "data": articles}


def write(document, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def summary(document):
    qas = [qa for a in document["data"] for p in a["paragraphs"] for qa in p["qas"]]
    impossible = sum(1 for qa in qas if not qa["answers"])
    paragraphs = sum(len(a["paragraphs"]) for a in document["data"])
    return f"{len(qas)} questions ({impossible} unanswerable), {paragraphs} paragraphs"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=os.path.join(
        repo, "..", "shared", "data", "corpora", "austen_all.txt"))
    parser.add_argument("--out", default=os.path.join(repo, "tests", "testdata", "squad"))
    args = parser.parse_args()

    rng = random.Random(SEED)
    candidates = candidate_paragraphs(read_novels(args.corpus), rng)
    dev, train = split(candidates, rng)
    os.makedirs(args.out, exist_ok=True)
    for name, indices in (("train", train), ("dev", dev)):
        for version, with_impossible in (("v1.1", False), ("v2.0", True)):
            document = build(candidates, indices, name, random.Random(f"{SEED}-{name}-{version}"),
                             with_impossible)
            path = os.path.join(args.out, f"{name}-{version}.json")
            write(document, path)
            print(f"{path}: {summary(document)}, {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
