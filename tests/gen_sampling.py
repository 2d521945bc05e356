#!/usr/bin/python3
"""gen_sampling.py: the reference of attnviz's next-token sampling (src/core/sample.c),
tests/ref/sampling.json, from PyTorch (Debian's python3-torch, /usr/bin/python3):

  probs = softmax(logits / T)                       (the lesson's `probs` stage)
  top-k: Hugging Face's TopKLogitsWarper            scores < topk(scores, k).values[-1] -> -inf
  top-p: Hugging Face's TopPLogitsWarper            sort ascending, softmax, cumsum; where
                                                    cumsum <= 1 - p -> -inf (the last kept)
  kept = softmax(filtered scores)                   what generate() draws from

written out here from transformers' published warpers (the package is not installed),
in their order (temperature, top-k, top-p). Each case: V, T, top_k (0 off), top_p
(1 off), the probs (float32) the C code is given and the kept probabilities it must
return. The seeded draw's u (the lessons' init generator, lessons/torch_modules.py's,
stream 3000) at a few positions is written too.

    /usr/bin/python3 tests/gen_sampling.py
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lessons"))
import torch_modules  # noqa: E402  (the init generator)

STREAM = 3000


def F32(x):
    """A float32 value as the shortest of the 9-digit decimals that give it back."""
    return float("%.9g" % x)


def top_k_warp(scores, k):
    if k <= 0:
        return scores
    k = min(k, scores.shape[-1])
    remove = scores < torch.topk(scores, k)[0][..., -1, None]
    return scores.masked_fill(remove, -float("inf"))


def top_p_warp(scores, p):
    if p >= 1.0:
        return scores
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove_sorted = cumulative <= (1 - p)
    remove_sorted[..., -1:] = 0
    remove = remove_sorted.scatter(-1, sorted_indices, remove_sorted)
    return scores.masked_fill(remove, -float("inf"))


def main():
    g = torch.Generator().manual_seed(39)
    cases = []
    settings = [(0, 1.0), (1, 1.0), (3, 1.0), (5, 0.9), (0, 0.9), (0, 0.5), (10, 0.75), (40, 0.95), (0, 0.05),
                (2000, 1.0), (7, 0.3)]
    for i in range(44):
        V = [5, 23, 64, 300, 1024 if i % 20 == 4 else 120][i % 5]
        T = [1.0, 0.5, 2.0, 1.0, 0.75][(i // 5) % 5]
        k, p = settings[i % len(settings)]
        logits = torch.randn(V, generator=g) * (1 + i % 4)
        scores = logits / T
        probs = torch.softmax(scores, -1)
        kept = torch.softmax(top_p_warp(top_k_warp(scores, k), p), -1)
        cases.append({"V": V, "temperature": T, "top_k": k, "top_p": p,
                      "probs": [F32(x) for x in probs.tolist()], "kept": [F32(x) for x in kept.tolist()],
                      "n_kept": int((kept > 0).sum())})
    u = {str(pos): float((torch_modules.init_tensor(1, STREAM, [pos + 1], 1)[pos] + 1) / 2) for pos in (0, 1, 7, 19, 63)}
    path = os.path.join(HERE, "ref", "sampling.json")
    with open(path, "w") as f:
        json.dump({"cases": cases, "u_seed1": u}, f)
        f.write("\n")
    print("%s: %d cases (torch %s)" % (path, len(cases), torch.__version__))


if __name__ == "__main__":
    main()
