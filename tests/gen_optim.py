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

and the first 50 steps of lessons/train_induction.py, as the script runs them (its model from
its seed, a new batch of 64 sequences a step from its generator, Adam at lr 3e-3 with its
cosine decay over 6000 steps; the weights after step 50 are the lesson's checkpoint of step
50, which this checks bit for bit):

    tests/ref/train/induction-50.lesson.json   the induction lesson's model, checkpoint 0's
                                               weights (the script's initial ones), batch 1
    tests/ref/train/induction-50.json          {"lr", "total_steps", "batches": [50 × 64
                                               strings of 15 letters: the 14 input tokens, the
                                               targets the 14 after them], "losses": [50]}

tests/test_optim.c trains the same in C and compares. The AdamW cases use lessons without a
key bias: its gradient is 0 but for rounding, and AdamW's m / √v turns rounding noise into
a step of about lr (torch's noise and attnviz's differ), so b_k is not comparable there.
Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_optim.py
"""

import json
import math
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
    return ('{"lesson": %s, "optimizer": %s, "losses": [%s],\n"weights": [\n' % (
        json.dumps(path), json.dumps(spec), ", ".join(ref.fmt_num(np.float32(v)) for v in losses))
        + gb.tensors_json(weights) + "\n]}\n")


def flat(weights, b_k=True):
    """A lesson's weights dict as one float32 vector (its tensors in key order, layers too;
    without the key biases when not b_k)."""
    parts = [flat(v, b_k) for v in weights["layers"]] if "layers" in weights else []
    parts += [np.asarray(weights[k], dtype=np.float32).reshape(-1) for k in sorted(weights)
              if k != "layers" and (b_k or k != "b_k")]
    return np.concatenate(parts)


def induction_50(steps=50):
    """The script's first steps, replayed: (lesson, reference) as JSON-ready dicts."""
    sys.path.insert(0, os.path.join(ROOT, "lessons"))
    import train_induction as ti
    with open(os.path.join(ROOT, "lessons", "induction-heads.json"), encoding="utf-8") as f:
        shipped = json.load(f)
    torch.set_num_threads(1)  # as trained.py runs the script: one thread, deterministic
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(ti.SEED)  # as ti.train: the model, its generator, Adam, the schedule
    model = ti.AttnOnly()
    gen = torch.Generator().manual_seed(ti.SEED + 1)
    opt = torch.optim.Adam(model.parameters(), lr=ti.LR)
    assert np.array_equal(flat(ti.trained.lm_weights(model)), flat(shipped["checkpoints"][0]["weights"])), "the start"
    batches, losses = [], []
    for step in range(1, steps + 1):
        x, y, _ = ti.make_batch(gen, ti.BATCH)
        batches.append(["".join(ti.VOCAB[t] for t in row) + ti.VOCAB[int(yr[-1])] for row, yr in zip(x.tolist(), y)])
        logits, _ = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, ti.V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = ti.LR * 0.5 * (1 + math.cos(math.pi * step / ti.STEPS))
        losses.append(float(loss))
    ck = shipped["checkpoints"][1]
    # the script's checkpoint of step 50 (made on another machine): the same within rounding
    # but the key biases, whose gradient is 0 up to rounding noise that Adam's m / √v scales
    # up to steps of about lr (torch against torch: 3e-4 there, 1.2e-7 elsewhere)
    d = np.abs(flat(ti.trained.lm_weights(model), False) - flat(ck["weights"], False)).max()
    assert ck["step"] == steps and d <= 1e-6, "the checkpoint of step 50: max |Δ| %g" % d
    first = batches[0]
    lesson = {"title": "the induction lesson's first training batch", "vocab": shipped["vocab"],
              "model": shipped["model"], "input": {"ids": [[ti.VOCAB.index(c) for c in r[:-1]] for r in first]},
              "mask": "causal", "targets": [[ti.VOCAB.index(c) for c in r[1:]] for r in first],
              "weights": shipped["checkpoints"][0]["weights"]}
    ref_json = ('{"lr": %s, "total_steps": %d, "checkpoint": %d,\n"losses": [%s],\n"batches": [\n%s\n]}\n' % (
        ti.LR, ti.STEPS, 1, ", ".join(ref.fmt_num(np.float32(v)) for v in losses),
        ",\n".join(json.dumps(b) for b in batches)))
    return lesson, ref_json


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    train_dir = os.path.join(HERE, "ref", "train")
    os.makedirs(train_dir, exist_ok=True)
    lesson, ref_json = induction_50()
    ref.write_text(os.path.join(train_dir, "induction-50.lesson.json"), ref.to_json(lesson) + "\n")
    ref.write_text(os.path.join(train_dir, "induction-50.json"), ref_json)
    print("induction-50: the script's first 50 steps, its checkpoint of step 50 matched (b_k aside)")
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
