#!/usr/bin/env python3
"""Writes tests/big/long-256.json: a long causal self-attention lesson (L=256,
d_model 64, 4 heads, B=1) for the large-lesson tests (image mode, zoom, hover).
The input is seeded Gaussian noise ("token embeddings") plus a sinusoidal
position code, rounded to 4 decimals; weights come from the lesson format's own
init generator. Standard library only; the output is byte-for-byte reproducible."""
import json
import math
import os
import random

L, C = 256, 64
rng = random.Random(1)
data = []
for i in range(L):
    for c in range(C):
        freq = 10000 ** (-(c // 2 * 2) / C)
        pos = math.sin(i * freq) if c % 2 == 0 else math.cos(i * freq)
        data.append(round(0.8 * rng.gauss(0.0, 1.0) + 0.6 * pos, 4))
lesson = {
    "title": {"en": "Long sequence: L = 256, d_model 64, 4 heads, causal",
              "zh": "长序列：L = 256，d_model 64，4 个头，因果掩码"},
    "model": {"d_model": C, "n_heads": 4},
    "input": {"query": {"shape": [1, L, C], "data": data}},
    "mask": "causal",
    "weights": {"init": {"seed": 1}},
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "long-256.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(lesson, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
