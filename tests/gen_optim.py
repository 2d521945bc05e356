#!/usr/bin/python3
"""torch.optim references for attnviz's optimizer step (src/core/optim.c).

Each case trains one lesson's model (tests/gen_backward.py's Model: lessons/lesson_torch.py's
reading of the lesson, the loss against the lesson's "targets" or the input shifted by one)
for N steps with torch.optim.SGD or torch.optim.AdamW (PyTorch's defaults but for the
options the case names, the same grammar as attnviz's --step), and writes

    tests/ref/optim/NAME.json    {"lesson": path, "optimizer": "adamw:lr=0.01,steps=5",
                                  "losses": [the loss before each step, then after the last],
                                  "weights": [{"name", "shape", "data"}]: every weight that has
                                  a gradient, after the last step ("w_q", "l1.w_q", "model.embed")}
    tests/ref/optim/NAME.lesson.json   a random lesson of its own (the others are read in place)

tests/test_optim.c trains the same in C and compares. The AdamW cases use lessons without a
key bias: its gradient is 0 but for rounding, and AdamW's m / √v turns rounding noise into
a step of about lr (torch's noise and attnviz's differ), so b_k is not comparable there.
Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_optim.py
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_backward as gb  # noqa: E402  (the model with gradients, the random lessons)
import gen_reference as ref  # noqa: E402  (its number format)

ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "ref", "optim")

# a lesson of its own: "targets" given (null and -1 not counted), no key bias (for AdamW)
TARGETS_LESSON = (dict(d_model=8, n_heads=2, qkv_bias=False, residual_norm=True, ffn_hidden=12,
                       positions="learned", max_positions=6), "causal", 2)

CASES = [  # name, lesson (a path, or "random:VARIANT"), optimizer
    ("adamw-one-step", "tests/ref/backward/pre-rms-swiglu-gqa-rope-tied.lesson.json", "adamw:lr=0.01"),
    ("adamw-five-steps", "tests/ref/backward/pre-rms-swiglu-gqa-rope-tied.lesson.json",
     "adamw:lr=0.01,beta1=0.8,beta2=0.99,eps=1e-6,weight_decay=0.1,steps=5"),
    ("adamw-targets", "tests/ref/optim/targets.lesson.json", "adamw:lr=0.005,steps=3"),
    ("sgd-three-steps", "tests/ref/backward/post-norm-relu-learned.lesson.json", "sgd:lr=0.1,steps=3"),
    ("sgd-momentum", "tests/ref/backward/gelu-tanh-padding-rope-interleaved-mqa.lesson.json",
     "sgd:lr=0.05,momentum=0.9,weight_decay=0.01,steps=4"),
    ("sgd-reversal", "lessons/reversal-anti-diagonal.json", "sgd:lr=0.5,steps=2"),
]


def optimizer(spec, params):
    """torch's optimizer for an attnviz --step spec, and its steps."""
    kind, _, rest = spec.partition(":")
    kw = dict(kv.split("=") for kv in rest.split(",")) if rest else {}
    steps = int(kw.pop("steps", 1))
    kw = {k: float(v) for k, v in kw.items()}
    kw.setdefault("lr", 1e-3)
    if kind == "sgd":
        return torch.optim.SGD(params, **kw), steps
    betas = (kw.pop("beta1", 0.9), kw.pop("beta2", 0.999))
    return torch.optim.AdamW(params, betas=betas, **kw), steps


def train(lesson, spec):
    m = gb.Model(lesson)
    opt, steps = optimizer(spec, [p for _, p in m.params])
    losses = []
    for k in range(steps + 1):
        opt.zero_grad()
        loss = m.loss()
        losses.append(float(loss))
        if k == steps:
            break
        loss.backward()
        opt.step()
    return losses, [(n, p) for n, p in m.params if p.grad is not None]


def case_json(path, spec, losses, weights):
    parts = []
    for name, t in weights:
        t = t.detach().to(torch.float32)
        data = ", ".join(ref.fmt_num(v) for v in t.reshape(-1).tolist())
        parts.append('  {"name": "%s", "shape": %s, "data": [%s]}' % (name, json.dumps(list(t.shape)), data))
    return ('{"lesson": %s, "optimizer": %s, "losses": [%s],\n"weights": [\n' % (
        json.dumps(path), json.dumps(spec), ", ".join(ref.fmt_num(np.float32(v)) for v in losses))
        + ",\n".join(parts) + "\n]}\n")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    lesson = gb.random_lesson("optim-targets", 200, TARGETS_LESSON)
    lesson["targets"] = [[3, None, 0, -1, 6, -1], [1, 2, None, 4, 5, -1]]
    ref.write_text(os.path.join(OUT_DIR, "targets.lesson.json"), ref.to_json(lesson) + "\n")
    for name, path, spec in CASES:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lesson = json.load(f)
        losses, weights = train(lesson, spec)
        ref.write_text(os.path.join(OUT_DIR, name + ".json"), case_json(path, spec, losses, weights))
        print("%s: loss %.6f -> %.6f, %d weights" % (name, losses[0], losses[-1], len(weights)))


if __name__ == "__main__":
    main()
