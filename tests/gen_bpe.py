#!/usr/bin/python3
"""gen_bpe.py: writes tests/ref/bpe_cases.json, the reference tests/test_bpe.c checks the C
byte-pair encoder (src/core/bpe.c) against: a vocabulary and merges trained by the Python
BPE (lessons/bpe.py, written from the algorithm, not from the C) on a small mixed text, and
the token ids of many strings (English, Chinese, emoji, punctuation, white space, control
characters, bytes of characters the merges cut, the empty text, a long one), seeded.

    python3 tests/gen_bpe.py        # (plain Python 3: no PyTorch needed)
"""

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lessons"))
import bpe  # noqa: E402

CORPUS = """the cat sat on the mat. the dog sat on the log! a cat and a dog ate the rats.
Attention is all you need: queries, keys and values; softmax over the keys.
It was the best of times, it was the worst of times, it was the age of wisdom.
In 1859, 2024 and 3000 the numbers 12, 345 and 6789 were written.
注意力机制：查询、键和值。你好，世界！我们学习注意力。你好世界。
emoji 😀😀 🎉🎉 👍🏽 and café, naïve, Zürich, São Paulo.
    indented   text\twith\ttabs
and two

blank lines.
""" * 3

PIECES = ["the", " the", "cat", " sat", "on", " mat", "attention", "Softmax", "QK", "1859", "42", "0",
          ".", ",", "!", "?", ";", ":", "'", "\"", "(", ")", "--", "...", "<0x41>", "<", ">",
          " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\x01", "\x7f", "\u0085",
          "你", "好", "世界", "注意力", "，", "。", "😀", "🎉", "👍🏽", "é", "e\u0301", "ß", "Ω", "→", "\u200b"]


def cases():
    fixed = ["", " ", "a", "the", " the", "the cat sat on the mat.", "你好，世界！", "😀", "😀😀😀 🎉",
             "  leading and trailing  ", "tabs\tand\nnewlines\n", "<0x41> is not a byte here",
             "In 1859, 2024 and 3000.", "注意力机制：查询、键和值。", "café naïve Zürich", "\x01\x02\x7f",
             "x" * 200, "the " * 60, "你好" * 50]
    rng = random.Random(39)
    rand = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(400)]
    return fixed + rand


def main():
    merges = bpe.train(CORPUS, 300)
    vocab, mlist = bpe.lesson_keys(merges)
    out = {"vocab": vocab, "merges": mlist,
           "cases": [{"text": t, "ids": bpe.encode(t, merges)} for t in cases()]}
    path = os.path.join(HERE, "ref", "bpe_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("%s: %d tokens (%d merges), %d texts" % (path, len(vocab), len(merges), len(out["cases"])))


if __name__ == "__main__":
    main()
