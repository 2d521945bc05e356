#!/usr/bin/python3
"""PyTorch references of the vision transformer (issue 42 item 8; lessons/torch_vit.py, written from
Dosovitskiy et al. 2020): random shapes — 8×8 images with patches of 2 and 4, a non-square 6×10 one,
odd head counts (3, 5) and a d_k that does not divide d_model — written as

    tests/ref/vit-*.lesson.json / .expected.json   (test_attention compares every stage)
    tests/ref/lessons/NAME.expected.json           for every lessons/*.json with an "image"

Each variant's encoder is also checked against nn.TransformerEncoderLayer(norm_first=True) with the
same weights. Usage (from the repo root): /usr/bin/python3 tests/gen_vit.py; deterministic.
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lessons"))
sys.path.insert(0, HERE)

from gen_reference import expected_json, write_text  # noqa: E402
from lesson_file import lesson_text  # noqa: E402
from torch_vit import VisionTransformer, check_encoder  # noqa: E402

# name: (height, width, patch, d_model, heads, layers, ffn, classes, d_k, batch, seed)
VARIANTS = {
    "vit-8x8-p2-3heads": (8, 8, 2, 9, 3, 2, 7, 10, None, 2, 1),
    "vit-8x8-p4-5heads": (8, 8, 4, 10, 5, 1, 6, 3, None, 3, 2),
    "vit-6x10-p2-dk3": (6, 10, 2, 8, 3, 2, 5, 4, 3, 1, 3),
}


def randomize(vit, g):
    with torch.no_grad():
        for p in vit.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5 + (1.0 if p.dim() == 1 and p.shape[0] == vit.d_model
                                                                 and p is vit.norm.weight else 0.0))


def main():
    torch.set_num_threads(1)
    out = os.path.join(HERE, "ref")
    ok = True
    for name, (h, w, p, C, H, NL, F, K, dk, B, seed) in VARIANTS.items():
        torch.manual_seed(seed)
        g = torch.Generator().manual_seed(seed)
        vit = VisionTransformer(h, w, p, C, H, NL, F, K, d_k=dk)
        randomize(vit, g)
        img = torch.rand((B, h, w), generator=g) * 16
        lesson = vit.lesson("ViT reference %s" % name, [chr(ord("a") + k) for k in range(K)],
                            img if B > 1 else img[0])
        with torch.no_grad():
            vit(img)
        stages = vit.stages()
        write_text(os.path.join(out, name + ".lesson.json"), lesson_text(lesson))
        write_text(os.path.join(out, name + ".expected.json"), expected_json(lesson["title"], stages))
        enc = check_encoder(vit, img)
        print("%-22s %d stages; nn.TransformerEncoderLayer: %s" % (name, len(stages),
              "n/a (d_k given)" if enc is None else "max diff %.2g" % enc))
        if enc is not None and enc > 1e-5:
            ok = False
    lessons = os.path.join(HERE, "..", "lessons")
    for f in sorted(os.listdir(lessons)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(lessons, f), encoding="utf-8") as fh:
            lesson = json.load(fh)
        if "image" not in lesson:
            continue
        vit = VisionTransformer.from_lesson(lesson)
        with torch.no_grad():
            vit(torch.tensor(lesson["input"]["image"], dtype=torch.float32).reshape(-1, vit.height, vit.width))
        write_text(os.path.join(out, "lessons", f[:-5] + ".expected.json"), expected_json(lesson["title"], vit.stages()))
        print("lessons/%s" % f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
