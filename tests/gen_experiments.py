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
  attribution     (pre-norm models) each head's direct contribution to the next token's logit:
                  its part of the concat (a pre-hook on w_o) through W_O, the final norm frozen at
                  the final residual (a hook on the last block) and the token's row of W_U.

For the shipped trained lessons and gen_backward's random multi-layer lessons
(tests/ref/backward/NAME.lesson.json). Writes tests/ref/experiments/NAME.json:
  {"lesson", "clean_loss", "zero": [[layer, head, loss], ...], "mean": [...],
   "ablated": {"layer", "head", "stages": [{"name", "shape", "data"}]},
   "lens": {"top": [[...] per (layer, batch)], "top_prob": ..., "next_prob": ..., "second_prob": ...},
   "dla": {"token": [[...] per batch], "contrib": [[...] per (layer, head, batch)]} (pre-norm only)}
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


def logit_attribution(lesson):
    """Each head's direct contribution to the next token's logit, from hooks: a pre-hook on every
    attn.w_o keeps its input (the concat), a forward hook on the last block its output (the final
    residual x). In float64: c = concat[..., h] · W_O[:, h]ᵀ; the final norm frozen at x
    (LayerNorm: (c − mean c) / √(var x + eps), RMSNorm: c / √(mean x² + eps)) times γ; · W_U[t].
    None for a model that is not pre-norm."""
    m = gb.Model(lesson)
    if not m.blocks[-1].norm_first:
        return None
    concats, outs = [], []
    hooks = [b.attn.w_o.register_forward_pre_hook(lambda mod, args: concats.append(args[0].detach().clone()))
             for b in m.blocks]
    hooks.append(m.blocks[-1].register_forward_hook(lambda mod, args, y: outs.append(y.detach().clone())))
    with torch.no_grad():
        m.loss()
    for h in hooks:
        h.remove()
    lm, x = m.lm, outs[-1].double()
    C = x.shape[-1]
    scale = torch.ones(x.shape[:-1], dtype=torch.float64)
    gamma = torch.ones(C, dtype=torch.float64)
    centre = False
    if lm["final_norm"]:
        gamma = lm["weights"]["final_norm_weight"].detach().double()
        if lm["norm"] == "rms":
            scale = torch.rsqrt(x.pow(2).mean(-1) + lm["norm_eps"])
        else:
            centre = True
            scale = torch.rsqrt(x.var(-1, unbiased=False) + lm["norm_eps"])
    wu, t = lm["w_u"].detach().double(), m.targets
    B, L = t.shape
    rows = []
    for layer, block in enumerate(m.blocks):
        wo, dv, H = block.attn.w_o.weight.detach().double(), block.attn.d_v, block.attn.n_heads
        cat = concats[layer].double()
        for h in range(H):
            c = cat[..., h * dv:(h + 1) * dv] @ wo[:, h * dv:(h + 1) * dv].t()
            if centre:
                c = c - c.mean(-1, keepdim=True)
            y = c * scale.unsqueeze(-1) * gamma
            for b in range(B):
                rows.append([float(y[b, i] @ wu[t[b, i]]) if t[b, i] >= 0 else float("nan") for i in range(L)])
    return {"token": t.tolist(), "contrib": rows}


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
        dla = logit_attribution(lesson)
        text = ('{"lesson": %s, "clean_loss": %s,\n' % (json.dumps(path), ref.fmt_num(torch.tensor(clean_loss).item()))
                + "".join('"%s": [%s],\n' % (k, ", ".join("[%d, %d, %s]" % (l, h, ref.fmt_num(v)) for l, h, v in table[k]))
                          for k in ["zero", "mean"])
                + '"ablated": {"layer": %d, "head": %d, "stages": [\n' % (top[0], top[1])
                + gb.tensors_json(stages) + "\n]},\n"
                + '"lens": {' + ", ".join('"%s": %s' % (k, grid(v)) for k, v in lens.items()) + "}"
                + (',\n"dla": {"token": %s, "contrib": %s}' % (json.dumps(dla["token"]), grid(dla["contrib"])) if dla else "")
                + "}\n")
        ref.write_text(os.path.join(OUT_DIR, name + ".json"), text)
        best = sorted(table["zero"], key=lambda e: -e[2])[0]
        print("%s: clean loss %.6f; zeroing l%d.h%d raises it most, to %.6f" % (name, clean_loss, *best))


if __name__ == "__main__":
    main()
