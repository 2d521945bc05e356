#!/usr/bin/python3
"""The training scripts' own batches, for attnviz's task generators (src/core/task.c).

For each trained lesson's task, the first batches its script's data function draws from a
torch.Generator at the task's seed (lessons/train_textbook.py's make_batch,
lessons/train_tiny_lm.py's windows over load_corpus()'s training text, train_induction.py's
make_batch at the seed of its held-out batch), written as token ids:

    tests/ref/train/tasks.json   [{"lesson": path, "seed": S, "batch": B, "length": L,
                                   "ids": [steps × B × L], "targets": [steps × B × L]}, …]

(The induction lesson's training batches themselves, 50 × 64, are in induction-50.json, made
by tests/gen_optim.py.) The corpus case needs Debian's fortunes-min; without it the case is
left out (and tests/test_task.c says so). tests/test_task.c draws the same in C and compares.
Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_tasks.py
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "lessons"))

STEPS, BATCH = 3, 8


def case(lesson, seed, draw, length):
    gen = torch.Generator().manual_seed(seed)
    ids, targets = [], []
    for _ in range(STEPS):
        x, y = draw(gen)
        ids.append(x.tolist())
        targets.append(y.tolist())
    return {"lesson": lesson, "seed": seed, "batch": BATCH, "length": length, "ids": ids, "targets": targets}


def main():
    import train_induction as ti
    import train_textbook as tt
    import train_tiny_lm as tl
    cases = [
        case("lessons/induction-heads.json", ti.SEED + 3000, lambda g: ti.make_batch(g, BATCH)[:2], ti.P),
        case("lessons/reversal-anti-diagonal.json", tt.SEED + 1, lambda g: tt.make_batch(g, BATCH), tt.P),
    ]
    if all(os.path.exists(os.path.join(tl.FORTUNE_DIR, f)) for f in tl.FILES):
        train_text, _, _ = tl.load_corpus()
        stream = tl.encode(train_text)
        cases.append(case("lessons/tiny-lm-fortunes.json", tl.SEED + 1, lambda g: tl.windows(g, stream, BATCH), tl.P))
        cases[-1]["corpus_length"] = len(train_text)
    else:
        print("gen_tasks.py: fortunes-min is not installed: the corpus case left out", file=sys.stderr)
    out = os.path.join(HERE, "ref", "train", "tasks.json")
    with open(out, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(c, separators=(", ", ": ")) for c in cases) + "\n]\n")
    print("%s: %d cases" % (out, len(cases)))


if __name__ == "__main__":
    main()
