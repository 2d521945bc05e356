#!/usr/bin/env python3
"""Writes tests/big/wide-lm-18.json: a word-level language model lesson of d_model 64 (4
heads, one pre-norm layer, learned positions) on an 18-word sentence, its weights from the
lesson format's own init generator: the shape of a subword model's stages (18 rows of 64
columns: at 3840x2160 rows of under 20 px, whose token labels shrink) for test_render's
test_token_indices_apart. Standard library only; the output is byte-for-byte reproducible."""
import json
import os

words = "the cat sat on mat . a dog ran to park and saw bird in tree it sang".split()
lesson = {
    "title": {"en": "Wide LM: d_model 64, 18 words", "zh": "宽语言模型：d_model 64，18 个词"},
    "vocab": words, "tokenizer": "word",
    "model": {"n_layers": 1, "d_model": 64, "n_heads": 4, "norm_first": True, "residual_norm": True,
              "positions": "learned", "max_positions": 24, "final_norm": True},
    "input": {"text": "the cat sat on the mat . the dog ran to the park and saw a bird in the"},
    "mask": "causal",
    "weights": {"init": {"seed": 1}},
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wide-lm-18.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(lesson, f, ensure_ascii=False, separators=(",", ":"))
    f.write("\n")
