#!/usr/bin/python3
"""PyTorch references for attnviz's experiments (src/core/experiment.c), with hooks on the
torch interpreter of the lesson (lessons/lesson_torch.py, through gen_backward.Model):

  head ablation   a forward pre-hook on layer l's attn.w_o replaces the columns of head h of
                  its input (the concat) by 0, or by their mean over every (batch, position);
                  the loss is F.cross_entropy(logits / T, targets) as gen_backward's. For every
                  head: the loss ablated ("zero" and "mean"); for the head whose zeroing raises
                  the loss most, also the ablated run's l{l}.output, logits and probs.
  logit lens      a forward hook on every block keeps its output (the residual stream after
                  the layer); lm_tail (the final norm, the unembedding, softmax(· / T)) of each:
                  the top token, its probability and the next token's probability per position.

For the shipped trained lessons and gen_backward's random multi-layer lessons
(tests/ref/backward/NAME.lesson.json). Writes tests/ref/experiments/NAME.json:
  {"lesson", "clean_loss", "zero": [[layer, head, loss], ...], "mean": [...],
   "ablated": {"layer", "head", "stages": [{"name", "shape", "data"}]},
   "lens": {"top": [[...] per (layer, batch)], "top_prob": ..., "next_prob": ..., "second_prob": ...}}
tests/test_experiment.c compares attnviz's with them. Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_experiments.py
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_backward as gb  # noqa: E402  (its Model: the lesson's torch model and its loss)
import gen_reference as ref  # noqa: E402  (its number format)
import lesson_torch as lt  # noqa: E402

ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "ref", "experiments")
LESSONS = [("lessons/%s.json" % n, n) for n in gb.TRAINED] + [
    ("tests/ref/backward/%s.lesson.json" % n, n)
    for n in ["pre-rms-swiglu-gqa-rope-tied", "gelu-window-sinusoidal-temperature", "three-layers-rope-scaling-relu",
              "post-norm-relu-learned"]]


def ablate_hook(head, dv, kind):
    def hook(module, args):
        x = args[0].clone()
        cols = slice(head * dv, (head + 1) * dv)
        if kind == "zero":
            x[..., cols] = 0
        else:
            x[..., cols] = x[..., cols].double().mean(dim=(0, 1)).float()
        return (x,) + tuple(args[1:])
    return hook


def ablated_run(lesson, layer, head, kind):
    """The loss and the stages of the lesson's model with one head ablated by a hook."""
    m = gb.Model(lesson)
    attn = m.blocks[layer].attn
    handle = attn.w_o.register_forward_pre_hook(ablate_hook(head, attn.d_v, kind))
    with torch.no_grad():
        loss = float(m.loss())
    handle.remove()
    return loss, m


def logit_lens(lesson):
    m = gb.Model(lesson)
    outs = []
    hooks = [b.register_forward_hook(lambda mod, args, y: outs.append(y)) for b in m.blocks]
    with torch.no_grad():
        m.loss()
        probs = [dict(lt.lm_tail(m.lm, y))["probs"] for y in outs]
    for h in hooks:
        h.remove()
    t = m.targets
    top, top_p, next_p, second_p = [], [], [], []
    for p in probs:  # (B, L, V)
        srt = torch.sort(p, dim=-1, descending=True, stable=True)
        for b in range(p.shape[0]):
            top.append([int(i) for i in torch.argmax(p[b], dim=-1).tolist()])
            top_p.append(srt.values[b, :, 0].tolist())
            second_p.append(srt.values[b, :, 1].tolist())
            next_p.append([float(p[b, i, t[b, i]]) if t[b, i] >= 0 else float("nan") for i in range(p.shape[1])])
    return {"top": top, "top_prob": top_p, "next_prob": next_p, "second_prob": second_p}


def grid(rows):
    return "[" + ", ".join("[" + ", ".join(ref.fmt_num(v) for v in r) + "]" for r in rows) + "]"


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for path, name in LESSONS:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lesson = json.load(f)
        clean = gb.Model(lesson)
        with torch.no_grad():
            clean_loss = float(clean.loss())
        H = clean.blocks[0].attn.n_heads
        table = {}
        for kind in ["zero", "mean"]:
            table[kind] = [(l, h, ablated_run(lesson, l, h, kind)[0]) for l in range(len(clean.blocks))
                           for h in range(H)]
        top = max(table["zero"], key=lambda e: e[2])
        _, m = ablated_run(lesson, top[0], top[1], "zero")
        prefix = "" if len(m.blocks) == 1 else "l%d." % top[0]
        stages = [(n, m.stages[n]) for n in [prefix + "output", "logits", "probs"]]
        lens = logit_lens(lesson)
        text = ('{"lesson": %s, "clean_loss": %s,\n' % (json.dumps(path), ref.fmt_num(torch.tensor(clean_loss).item()))
                + "".join('"%s": [%s],\n' % (k, ", ".join("[%d, %d, %s]" % (l, h, ref.fmt_num(v)) for l, h, v in table[k]))
                          for k in ["zero", "mean"])
                + '"ablated": {"layer": %d, "head": %d, "stages": [\n' % (top[0], top[1])
                + gb.tensors_json(stages) + "\n]},\n"
                + '"lens": {' + ", ".join('"%s": %s' % (k, grid(v)) for k, v in lens.items()) + "}}\n")
        ref.write_text(os.path.join(OUT_DIR, name + ".json"), text)
        best = sorted(table["zero"], key=lambda e: -e[2])[0]
        print("%s: clean loss %.6f; zeroing l%d.h%d raises it most, to %.6f" % (name, clean_loss, *best))


if __name__ == "__main__":
    main()
