"""Reference metrics for tests/worker/trainer/glue_squad_e2e_test.cc, computed apart from lmtrain.

    python glue_squad_reference.py glue TASK DEV_TSV PREDICT_RESULTS_TXT
    python glue_squad_reference.py squad DEV_JSON PREDICTIONS_JSON...

glue: reads the gold labels of a GLUE dev file (cola: no header, label in column 1; qqp and
stsb: header, label last) and lm-train's predict_results.txt (index, prediction), and prints
the metrics of HF evaluate's "glue" metric (which calls sklearn / scipy, not installed here:
the same formulas in numpy) with run_glue's combined_score, plus "mse" (the mean squared error,
stsb: the regression loss).
squad: reads a SQuAD v2.0 file and each eval_predictions.json, scores the questions predicted with
transformers' own SQuAD code (transformers.data.metrics.squad_metrics: the official v2 script's
normalisation, exact and F1), no-answer probability 0 for every question as run_qa passes it,
and prints evaluate's "squad_v2" keys (exact, f1, total, HasAns_*, NoAns_*, best_*), one
object per predictions file, in a list.
Output: one line of JSON on stdout. A missing numpy or transformers fails with
ModuleNotFoundError (the test then skips its comparisons).
"""

import json
import sys

import numpy as np


def glue_gold(task, path):
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    if task == "cola":
        return [float(r[1]) for r in rows]
    return [float(r[-1]) for r in rows[1:]]


def predictions(path):
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [float(r[1]) for r in rows]


def matthews(p, g):
    tp = np.sum((p == 1) & (g == 1))
    tn = np.sum((p == 0) & (g == 0))
    fp = np.sum((p == 1) & (g == 0))
    fn = np.sum((p == 0) & (g == 1))
    denominator = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return 0.0 if denominator == 0 else float((tp * tn - fp * fn) / denominator)


def f1(p, g):
    tp = np.sum((p == 1) & (g == 1))
    precision = tp / max(1, np.sum(p == 1))
    recall = tp / max(1, np.sum(g == 1))
    return 0.0 if tp == 0 else float(2 * precision * recall / (precision + recall))


def ranks(x):
    """Ranks from 1 with ties averaged (scipy.stats.rankdata)."""
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def glue(task, dev, predicted):
    g, p = np.array(glue_gold(task, dev)), np.array(predictions(predicted))
    assert len(g) == len(p), (len(g), len(p))
    out = {"mse": float(np.mean((p - g) ** 2))}
    if task == "cola":
        out["matthews_correlation"] = matthews(p, g)
    elif task == "stsb":
        out["prediction_std"] = float(np.std(p))
        out["pearson"] = float(np.corrcoef(p, g)[0, 1])
        out["spearmanr"] = float(np.corrcoef(ranks(p), ranks(g))[0, 1])
        out["combined_score"] = (out["pearson"] + out["spearmanr"]) / 2
    else:
        out["accuracy"] = float(np.mean(p == g))
        out["f1"] = f1(p, g)
        out["combined_score"] = (out["accuracy"] + out["f1"]) / 2
    return out


def squad(dev, predicted):
    from transformers.data.metrics import squad_metrics as sm

    with open(predicted, encoding="utf-8") as f:
        preds = json.load(f)
    with open(dev, encoding="utf-8") as f:
        data = json.load(f)["data"]
    exact, f1s, has_ans = {}, {}, {}
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa["id"] not in preds:
                    continue
                gold = [a["text"] for a in qa["answers"] if sm.normalize_answer(a["text"])]
                has_ans[qa["id"]] = bool(gold)
                gold = gold or [""]
                exact[qa["id"]] = max(sm.compute_exact(a, preds[qa["id"]]) for a in gold)
                f1s[qa["id"]] = max(sm.compute_f1(a, preds[qa["id"]]) for a in gold)
    assert len(exact) == len(preds), "predictions for questions not in the file"
    na_probs = {k: 0.0 for k in preds}
    evaluation = sm.make_eval_dict(exact, f1s)
    has = [k for k, v in has_ans.items() if v]
    no = [k for k, v in has_ans.items() if not v]
    if has:
        sm.merge_eval(evaluation, sm.make_eval_dict(exact, f1s, qid_list=has), "HasAns")
    if no:
        sm.merge_eval(evaluation, sm.make_eval_dict(exact, f1s, qid_list=no), "NoAns")
    sm.find_all_best_thresh(evaluation, preds, exact, f1s, na_probs, has_ans)
    return dict(evaluation)


def main():
    if sys.argv[1] == "glue":
        result = glue(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        result = [squad(sys.argv[2], path) for path in sys.argv[3:]]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
