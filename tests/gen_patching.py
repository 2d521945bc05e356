#!/usr/bin/python3
"""PyTorch references for attnviz's activation patching (src/core/experiment_patch.c), with hooks
on the torch interpreter of the lesson (lessons/lesson_torch.py, through gen_backward.Model):

  the clean run (the lesson's text) keeps, by hooks, every block's output (the residual stream
  after the layer) and every attn.w_o's input (the concat: head h's output in its d_v columns);
  the corrupted run (another text of the same length) is run again once per patch, with a
  forward hook on block l that puts the clean output's row `pos` in place of its own (the
  residual), or a forward pre-hook on block l's attn.w_o that puts the clean concat's columns of
  head h at row pos in place (the head's output). At batch 0's last position, t is the clean
  run's most probable token and recovered = (p_patched[t] − p_corrupt[t]) / (p_clean[t] − p_corrupt[t]).

Writes tests/ref/patching/NAME.json: {"lesson", "corrupt", "token", "p_clean",
"p_corrupt", "residual": [[...] per layer], "heads": [[...] per (layer, head)]}; test_experiment
compares attnviz's. Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_patching.py
"""

import copy
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_backward as gb  # noqa: E402  (its Model: the lesson's torch model)
import gen_reference as ref  # noqa: E402  (its number format)

ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "ref", "patching")
# (lesson, its clean text as the lesson has it, a corrupted text of the same token length)
CASES = [("induction-heads", "qkdmbxakdmbx"), ("tiny-lm-fortunes", "to be or not so be")]


def run(lesson, text, hooks=()):
    """The probabilities (B, L, V) of the lesson with `text`; hooks: (module getter, kind, fn)."""
    les = copy.deepcopy(lesson)
    les["input"] = {"text": text}
    m = gb.Model(les)
    handles = []
    for get, kind, fn in hooks:
        mod = get(m)
        handles.append(mod.register_forward_hook(fn) if kind == "fwd" else mod.register_forward_pre_hook(fn))
    with torch.no_grad():
        m.loss()
    for h in handles:
        h.remove()
    return m, m.stages["probs"]


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, corrupt in CASES:
        path = "lessons/%s.json" % name
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lesson = json.load(f)
        outs, cats = {}, {}
        probe = gb.Model(lesson)
        n_layers = len(probe.blocks)
        hooks = []
        for l in range(n_layers):
            hooks.append((lambda m, l=l: m.blocks[l], "fwd", lambda mod, a, y, l=l: outs.__setitem__(l, y.detach().clone())))
            hooks.append((lambda m, l=l: m.blocks[l].attn.w_o, "pre",
                          lambda mod, a, l=l: cats.__setitem__(l, a[0].detach().clone())))
        clean_m, pc = run(lesson, lesson["input"]["text"], hooks)
        L = pc.shape[1]
        t = int(torch.argmax(pc[0, L - 1]))
        _, px = run(lesson, corrupt)
        p_clean, p_corrupt = float(pc[0, L - 1, t]), float(px[0, L - 1, t])
        gap = p_clean - p_corrupt

        def recovered(hook):
            _, pp = run(lesson, corrupt, [hook])
            return (float(pp[0, L - 1, t]) - p_corrupt) / gap

        def resid_hook(l, pos):
            def fn(mod, a, y):  # in place: the block's output is its last stage (BlockStack checks it)
                y[:, pos] = outs[l][:, pos]
            return (lambda m: m.blocks[l], "fwd", fn)

        def head_hook(l, h, pos, dv):
            def fn(mod, a):
                x = a[0].clone()
                x[:, pos, h * dv:(h + 1) * dv] = cats[l][:, pos, h * dv:(h + 1) * dv]
                return (x,) + tuple(a[1:])
            return (lambda m: m.blocks[l].attn.w_o, "pre", fn)

        resid = [[recovered(resid_hook(l, i)) for i in range(L)] for l in range(n_layers)]
        attn = clean_m.blocks[0].attn
        heads = [[recovered(head_hook(l, h, i, attn.d_v)) for i in range(L)]
                 for l in range(n_layers) for h in range(attn.n_heads)]
        grid = lambda rows: "[" + ", ".join("[" + ", ".join(ref.fmt_num(v) for v in r) + "]" for r in rows) + "]"
        text = ('{"lesson": %s, "corrupt": %s, "token": %d, "p_clean": %s, "p_corrupt": %s,\n"residual": %s,\n'
                '"heads": %s}\n' % (json.dumps(path), json.dumps(corrupt), t, ref.fmt_num(p_clean),
                                    ref.fmt_num(p_corrupt), grid(resid), grid(heads)))
        ref.write_text(os.path.join(OUT_DIR, "%s.json" % name), text)
        print("%s: token %d, p clean %.4f, corrupt %.4f" % (name, t, p_clean, p_corrupt))


if __name__ == "__main__":
    main()
