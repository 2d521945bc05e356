#!/usr/bin/python3
"""torch.autograd references for attnviz's backward pass (src/core/backward.c).

For every shipped trained lesson (lessons/NAME.json with a vocab) and for small random
language-model lessons of every variant the backward pass covers, builds the torch model
with lessons/lesson_torch.py (the Python reading of the lesson format), runs it with
gradients on, takes the loss

    F.cross_entropy(logits[b, l] / temperature, tokens[b, l + 1])   (mean; the last position
                                                                      and padding not counted)

and calls loss.backward(), keeping the gradient of every recorded stage (retain_grad) and
of every weight. Writes

    tests/ref/backward/NAME.lesson.json   the random lessons (the shipped ones are read in place)
    tests/ref/backward/NAME.grad.json     {"lesson": path, "loss", "targets", "grads": [{"name",
                                          "shape", "data"}]}: "grad.STAGE", "grad.[lL.]WEIGHT",
                                          "grad.model.WEIGHT" (embed, pos_embed, final norm, lm_head)

tests/test_backward.c compares attnviz's with them. Deterministic: run twice, the same bytes.

Usage (from the repo root):  /usr/bin/python3 tests/gen_backward.py
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_reference as ref  # noqa: E402  (its number format; it puts lessons/ on the path)
import lesson_torch as lt  # noqa: E402  (the lesson format's interpreter)

ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "ref", "backward")
TRAINED = ["induction-heads", "reversal-anti-diagonal", "tiny-lm-fortunes"]

BLOCK_PARAMS = [  # (module path under a block, the lesson's weight name)
    ("attn.w_q.weight", "w_q"), ("attn.w_q.bias", "b_q"), ("attn.w_k.weight", "w_k"), ("attn.w_k.bias", "b_k"),
    ("attn.w_v.weight", "w_v"), ("attn.w_v.bias", "b_v"), ("attn.w_o.weight", "w_o"), ("attn.w_o.bias", "b_o"),
    ("attn.sinks", "sinks"), ("norm.weight", "norm_weight"), ("norm.bias", "norm_bias"),
    ("ffn_w1.weight", "ffn_w1"), ("ffn_w1.bias", "ffn_b1"), ("ffn_w2.weight", "ffn_w2"), ("ffn_w2.bias", "ffn_b2"),
    ("ffn_gate.weight", "ffn_w_gate"), ("ffn_gate.bias", "ffn_b_gate"),
    ("ffn_norm.weight", "ffn_norm_weight"), ("ffn_norm.bias", "ffn_norm_bias"),
]


def default_targets(ids, mask_json):
    """tokens[:, 1:] at positions 0..L-2, -1 (not counted) at the last and where the next token
    is key padding."""
    B, L = ids.shape
    t = torch.full((B, L), -1, dtype=torch.int64)
    t[:, :-1] = ids[:, 1:]
    if isinstance(mask_json, dict) and "key_padding" in mask_json:
        for b, n in enumerate(mask_json["key_padding"]):
            t[b, max(int(n) - 1, 0):] = -1
    return t


def attr(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def lesson_targets(lesson, ids):
    """The lesson's "targets" (null: -1, not counted), else the default (default_targets)."""
    if "targets" in lesson:
        return torch.tensor([[-1 if t is None else t for t in row] for row in lesson["targets"]], dtype=torch.int64)
    return default_targets(ids, lesson.get("mask"))


class Model:
    """A lesson's torch model with gradients on: its parameters under attnviz's names
    ("w_q", "l1.w_q", "model.embed"; `params`), and loss() = one forward pass, its stages
    (`stages`, each retaining its gradient) and the cross-entropy against the targets."""

    def __init__(self, lesson):
        self.r = lt.resolve_lesson(lesson)
        self.lm = self.r["lm"]
        assert self.lm is not None, "a language model"
        self.module = lt.lesson_module(self.r, False)
        for p in self.module.parameters():
            p.requires_grad_(True)
        self.w = self.lm["weights"]
        for t in self.w.values():
            t.requires_grad_(True)
        self.blocks = [self.module] if self.r["n_layers"] == 1 else list(self.module.layers)
        self.targets = lesson_targets(lesson, self.lm["ids"])
        self.params = [("model." + n, self.w[n]) for n in ["embed", "pos_embed", "final_norm_weight",
                                                           "final_norm_bias", "lm_head"] if n in self.w]
        for i, block in enumerate(self.blocks):
            prefix = "" if self.r["n_layers"] == 1 else "l%d." % i
            self.params += [(prefix + name, attr(block, path)) for path, name in BLOCK_PARAMS
                            if attr(block, path) is not None]

    def loss(self):
        r, lm, w = self.r, self.lm, self.w
        # the embedding's stages again, from the weights that now take gradients (lm_weights made
        # them before): token_embed = E[ids], pos_embed, embedding
        ids = lm["ids"]
        B, L = ids.shape
        stages = {"token_embed": w["embed"][ids]}
        x = stages["token_embed"]
        if lm["positions"] != "none":
            pe = w["pos_embed"][:L] if lm["positions"] == "learned" else lt.sinusoidal_positions(L, x.shape[-1])
            stages["pos_embed"] = pe.unsqueeze(0).expand(B, L, x.shape[-1])
            x = stages["embedding"] = x + stages["pos_embed"]
        y = self.module(x, x, x, r["mask"])
        for i, block in enumerate(self.blocks):
            prefix = "" if r["n_layers"] == 1 else "l%d." % i
            stages.update((prefix + n, t) for n, t in block.trace.items())
        stages.update(lt.lm_tail(lm, y))
        for t in stages.values():
            if t.requires_grad:
                t.retain_grad()
        self.stages = stages
        logits = stages["logits"]
        return F.cross_entropy((logits / lm["temperature"]).reshape(B * L, -1), self.targets.reshape(-1),
                               ignore_index=-1)


def backward_lesson(lesson):
    """[(name, gradient)], the loss and the targets of one lesson, by torch.autograd."""
    m = Model(lesson)
    loss = m.loss()
    loss.backward()
    grads = [("grad." + n, t.grad) for n, t in reversed(list(m.stages.items())) if t.requires_grad and t.grad is not None]
    # the model's own weights, then each layer's (as attnviz lists them)
    grads += [("grad." + n, p.grad) for n, p in m.params if p.grad is not None]
    return float(loss), m.targets, grads


def tensors_json(named):
    """[(name, tensor)] as the lines of a JSON list of {"name", "shape", "data"} (float32)."""
    parts = []
    for name, t in named:
        t = t.detach().to(torch.float32)
        data = ", ".join(ref.fmt_num(v) for v in t.reshape(-1).tolist())
        parts.append('  {"name": "%s", "shape": %s, "data": [%s]}' % (name, json.dumps(list(t.shape)), data))
    return ",\n".join(parts)


def grad_json(lesson_path, loss, targets, grads):
    return ('{"lesson": %s, "loss": %s, "targets": %s,\n"grads": [\n' % (
        json.dumps(lesson_path), ref.fmt_num(np.float32(loss)), json.dumps(targets.tolist()))
        + tensors_json(grads) + "\n]}\n")


# ---- random lessons: one a variant, small shapes --------------------------------------------

def vec(rng, n, centre):
    return [float(np.float32(v)) for v in centre + 0.3 * rng.standard_normal(n)]


def norms(rng, C, names, rms):
    """Non-default γ (and β) for the norms named: the gradients of γ·x̂ + β are seen whole."""
    out = {}
    for n in names:
        out[n + "_weight"] = vec(rng, C, 1.0)
        if not rms:
            out[n + "_bias"] = vec(rng, C, 0.0)
    return out


VARIANTS = {
    # name: (model, mask, batch ids rows)
    "post-norm-relu-learned": (dict(d_model=8, n_heads=2, residual_norm=True, ffn_hidden=12, positions="learned",
                                    max_positions=8), "causal", 2),
    "pre-rms-swiglu-gqa-rope-tied": (dict(n_layers=2, d_model=8, n_heads=4, n_kv_heads=2, qkv_bias=False,
                                          out_bias=False, mask_fill="-inf", rope={"theta": 10000, "style": "half"},
                                          residual_norm=True, norm="rms", norm_first=True, norm_eps=1e-6,
                                          ffn_hidden=12, activation="swiglu", ffn_bias=False, tie_embeddings=True),
                                     "causal", 1),
    "gelu-window-sinusoidal-temperature": (dict(n_layers=2, d_model=8, n_heads=2, residual_norm=True,
                                                norm_first=True, ffn_hidden=10, activation="gelu",
                                                positions="sinusoidal", temperature=0.7),
                                           {"sliding_window": 3, "sink_tokens": 1}, 1),
    "gelu-tanh-padding-rope-interleaved-mqa": (dict(d_model=8, n_heads=2, n_kv_heads=1,
                                                    rope={"theta": 100, "style": "interleaved", "rotary_dim": 2},
                                                    residual_norm=True, ffn_hidden=10, activation="gelu_tanh",
                                                    final_norm=False), {"key_padding": [6, 4]}, 2),
    "alibi-sinks-dk-dv-scale-no-norm": (dict(d_model=8, n_heads=2, d_k=3, d_v=5, scale=2.0, alibi=True,
                                             attn_sinks=True, positions="learned", max_positions=6),
                                        "causal", 1),
    "three-layers-rope-scaling-relu": (dict(n_layers=3, d_model=8, n_heads=2, residual_norm=True, ffn_hidden=8,
                                            rope={"theta": 10000, "scaling": {"type": "linear", "factor": 2.0}},
                                            positions="none"), "causal", 1),
    # gpt-oss's learned sinks with StreamingLLM's sink tokens, a window, GQA, RoPE and decoding in two
    # layers (the loss reads the full pass; decode_output is its copy token by token)
    "sinks-decode-window-gqa-rope": (dict(n_layers=2, d_model=8, n_heads=4, n_kv_heads=2, attn_sinks=True,
                                          decode=True, rope={"theta": 10000, "style": "half"}, mask_fill="-inf",
                                          residual_norm=True, norm_first=True, ffn_hidden=8),
                                     {"sliding_window": 3, "sink_tokens": 1}, 2),
}


def random_lesson(name, seed, variant=None):
    model, mask, B = variant or VARIANTS[name]
    rng = np.random.default_rng(seed)
    V, L = 7, 6
    vocab = list("abcdefg")
    ids = rng.integers(0, V, size=(B, L)).tolist()
    C, n_layers = model["d_model"], model.get("n_layers", 1)
    rms = model.get("norm") == "rms"
    block_norms = (["norm"] if model.get("residual_norm") else []) + (["ffn_norm"] if model.get("ffn_hidden") else [])
    weights = {"init": {"seed": seed}}
    layers = [norms(rng, C, block_norms, rms) for _ in range(n_layers)]
    if n_layers > 1:
        weights["layers"] = layers
    else:
        weights.update(layers[0])
    if model.get("final_norm", True):
        weights.update(norms(rng, C, ["final_norm"], rms))
    return {"title": "backward: " + name, "vocab": vocab, "model": model, "input": {"ids": ids}, "mask": mask,
            "weights": weights}


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    jobs = [("lessons/%s.json" % n, n) for n in TRAINED]
    for k, name in enumerate(VARIANTS):
        path = "tests/ref/backward/%s.lesson.json" % name
        ref.write_text(os.path.join(ROOT, path), ref.to_json(random_lesson(name, 100 + k)) + "\n")
        jobs.append((path, name))
    for path, name in jobs:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lesson = json.load(f)
        loss, targets, grads = backward_lesson(lesson)
        ref.write_text(os.path.join(OUT_DIR, name + ".grad.json"), grad_json(path, loss, targets, grads))
        print("%s: loss %.6f, %d gradients" % (name, loss, len(grads)))


if __name__ == "__main__":
    main()
