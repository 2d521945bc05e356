#!/usr/bin/python3
"""Writes tests/big/subword-lm-768.json: a language model of lessons/train_subword_lm.py's
shape (byte-level BPE of 512 merges on its fortunes, V = 768; d_model 64, 4 heads, 4
pre-norm layers with a GELU feed-forward of 256, 64 learned positions, a final norm and an
untied unembedding), its weights from the lesson format's own init generator (a small
file; the numbers do not matter, their count does): bench_edit's "a character typed"
row for a model of that size, shipped or not. Needs lessons/ (its BPE and the fortunes
text: apt-get install fortunes); the output is byte-for-byte reproducible."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lessons"))
import bpe  # noqa: E402
import train_subword_lm as T  # noqa: E402
from train_bpe_lm import MERGES, load_sayings  # noqa: E402

sayings = load_sayings()
merges = bpe.train(" ".join(s for i, s in enumerate(sayings) if i % 10 != 9), MERGES)
vocab, mlist = bpe.lesson_keys(merges)
lesson = {
    "title": {"en": "Subword LM of train_subword_lm.py's shape, untrained (V = %d)" % len(vocab),
              "zh": "train_subword_lm.py 形状的子词语言模型，未训练（V = %d）" % len(vocab)},
    "vocab": vocab, "tokenizer": "bpe", "merges": mlist,
    "model": {"n_layers": T.N_LAYERS, "d_model": T.C, "n_heads": T.H, "norm_first": True, "residual_norm": True,
              "ffn_hidden": T.FFN, "activation": "gelu", "positions": "learned", "max_positions": T.P,
              "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": T.EPS},
    "input": {"text": T.TEXT}, "mask": "causal",
    "weights": {"init": {"seed": 1}},
}
out = os.path.join(HERE, "subword-lm-768.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(lesson, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
