"""What the training scripts of lessons/ share (train_induction.py, train_textbook.py,
train_tiny_lm.py): the command line (--out, --quiet), one thread and deterministic
algorithms (so a rerun writes the same bytes), writing the lesson only when every claim its
narration makes holds and the lesson, run from its own JSON (lesson_lm_forward), reproduces
the model; the models' pre-norm Block; the checks of the lessons' texts."""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import lesson_torch  # the lessons' interpreter
from lesson_file import check_target, lesson_text, save_lesson  # the lessons' checks and atomic write


def run(script, description, default_out, make, argv=None):
    """make(log) trains, measures and builds: (lesson, problems, max diff). Exit code 1 and
    a line per problem on stderr, else the lesson written to --out and 0."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=default_out, help="the lesson to write (default %(default)s)")
    ap.add_argument("--quiet", action="store_true", help="print only errors")
    args = ap.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    try:
        check_target(args.out)                # before minutes of training, not after
    except ValueError as e:
        print("%s: --out %s" % (script, e), file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    lesson, problems, diff = make(log)
    if problems:
        for p in problems:
            print("%s: %s" % (script, p), file=sys.stderr)
        return 1
    log("the lesson run from its JSON matches the model (max diff %.2g)" % diff)
    try:
        save_lesson(lesson, args.out)
    except ValueError as e:
        print("%s: %s" % (script, e), file=sys.stderr)
        return 1
    log("wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))
    return 0


# ----------------------------------------------------------------------------
# the models' block and the lessons run from their JSON
# ----------------------------------------------------------------------------

class Block(nn.Module):
    """Pre-norm causal self-attention with the lesson's names: s = x + W_O·attn(LayerNorm(x))
    (norm, w_q, w_k, w_v, w_o), then, with ffn > 0, s + W2·gelu(W1·LayerNorm(s)) (ffn_norm,
    ffn_w1, ffn_w2). The parameters are made in that order (a seed gives the same weights).
    forward(x) -> (y, attn, scores)."""

    def __init__(self, C, H, eps, fill, ffn=0):
        super().__init__()
        self.C, self.H, self.fill = C, H, fill
        self.norm = nn.LayerNorm(C, eps=eps)
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(C, C) for _ in range(4))
        if ffn:
            self.ffn_norm = nn.LayerNorm(C, eps=eps)
            self.ffn_w1, self.ffn_w2 = nn.Linear(C, ffn), nn.Linear(ffn, C)
        self.ffn = ffn

    def forward(self, x):
        B, L, _ = x.shape
        d = self.C // self.H
        n = self.norm(x)

        def split(t):
            return t.view(B, L, self.H, d).transpose(1, 2)
        q, k, v = split(self.w_q(n)), split(self.w_k(n)), split(self.w_v(n))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        keep = torch.tril(torch.ones(L, L, dtype=torch.bool))
        attn = torch.softmax(scores.masked_fill(~keep, self.fill), dim=-1)
        s = x + self.w_o((attn @ v).transpose(1, 2).reshape(B, L, self.C))
        if not self.ffn:
            return s, attn, scores
        return s + self.ffn_w2(F.gelu(self.ffn_w1(self.ffn_norm(s)))), attn, scores


class TinyGPT(nn.Module):
    """The trained language models' shape (train_tiny_lm.py, train_bpe_lm.py): learned token
    and position embeddings (P positions), n_layers pre-norm Blocks, a final LayerNorm and an
    untied unembedding, made in that order (a seed gives the same weights); ffn 0: attention
    only (train_induction.py). pos_init "sin": the positions start from the original
    Transformer's sinusoids (sin and cos of pos / 10000^(2i/C), times √2 so each number's mean
    square is 1) and are then learned like the others; the random draw still happens, so the
    weights after it are the same as without. forward(ids) -> (logits, [attn of each layer])."""

    def __init__(self, V, C, H, P, n_layers, ffn, eps, fill, pos_scale=0.1, pos_init="randn"):
        super().__init__()
        self.embed = nn.Embedding(V, C)
        self.pos_embed = nn.Parameter(pos_scale * torch.randn(P, C))
        if pos_init == "sin":
            ang = torch.arange(P, dtype=torch.float32)[:, None] / 10000 ** (torch.arange(0, C, 2) / C)
            with torch.no_grad():
                self.pos_embed[:, 0::2] = math.sqrt(2) * torch.sin(ang)
                self.pos_embed[:, 1::2] = math.sqrt(2) * torch.cos(ang)
        self.layers = nn.ModuleList(Block(C, H, eps, fill, ffn) for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(C, eps=eps)
        self.lm_head = nn.Linear(C, V, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.pos_embed[: ids.shape[1]]
        attns = []
        for layer in self.layers:
            x, a, _ = layer(x)
            attns.append(a)
        return self.lm_head(self.final_norm(x)), attns


def values(t):
    return t.detach().to(torch.float32).tolist()


def lm_weights(model):
    """A language model's weights as a lesson's "weights": its embed, pos_embed, final norm and
    lm_head, and each layer's Block (with its feed-forward when it has one)."""
    layers = []
    for b in model.layers:
        layer = {"w_q": values(b.w_q.weight), "b_q": values(b.w_q.bias),
                 "w_k": values(b.w_k.weight), "b_k": values(b.w_k.bias),
                 "w_v": values(b.w_v.weight), "b_v": values(b.w_v.bias),
                 "w_o": values(b.w_o.weight), "b_o": values(b.w_o.bias),
                 "norm_weight": values(b.norm.weight), "norm_bias": values(b.norm.bias)}
        if b.ffn:
            layer.update({"ffn_w1": values(b.ffn_w1.weight), "ffn_b1": values(b.ffn_w1.bias),
                          "ffn_w2": values(b.ffn_w2.weight), "ffn_b2": values(b.ffn_w2.bias),
                          "ffn_norm_weight": values(b.ffn_norm.weight), "ffn_norm_bias": values(b.ffn_norm.bias)})
        layers.append(layer)
    return {"embed": values(model.embed.weight), "pos_embed": values(model.pos_embed),
            "final_norm_weight": values(model.final_norm.weight), "final_norm_bias": values(model.final_norm.bias),
            "lm_head": values(model.lm_head.weight), "layers": layers}


def bpe_gpt_lesson(model, texts, vocab, mlist, text, n_layers, C, H, ffn, P, eps):
    """A TinyGPT with a byte-level BPE vocabulary as a lesson (train_bpe_lm.py,
    train_subword_lm.py): texts = (title, description, steps, notes, quiz)."""
    title, description, steps, notes, quiz = texts
    return {
        "title": title, "description": description, "vocab": vocab, "tokenizer": "bpe", "merges": mlist,
        "model": {"n_layers": n_layers, "d_model": C, "n_heads": H, "norm_first": True, "residual_norm": True,
                  "ffn_hidden": ffn, "activation": "gelu", "positions": "learned", "max_positions": P,
                  "final_norm": True, "qkv_bias": True, "out_bias": True, "norm_eps": eps},
        "input": {"text": text}, "mask": "causal",
        "weights": lm_weights(model),
        "steps": steps, "notes": notes, "quiz": quiz,
    }


def held_and_unigram_loss(model, x, y, V, train_ids, held_ids):
    """A language model's loss on held-out windows (x -> y) and, as its baseline, the loss of
    the training tokens' add-one frequencies on held_ids; and the model's attention on x."""
    with torch.no_grad():
        logits, attns = model(x)
    held = float(F.cross_entropy(logits.reshape(-1, V), y.reshape(-1)))
    counts = torch.bincount(train_ids, minlength=V).double() + 1.0   # (add-one: every token possible)
    p = counts / counts.sum()
    return held, float(-torch.log(p[held_ids]).mean()), attns


def lesson_lm_forward(lesson):
    """Runs a trained lesson dict as the lesson format describes it, with lessons/lesson_torch.py
    (the one Python interpreter of the format, also tests/gen_reference.py's):
    {"attn": [per layer (1, H, L, L)], "logits", "probs": (1, L, V)}."""
    stages = lesson_torch.run_lesson(lesson)
    named = dict(stages)
    return {"attn": [t for n, t in stages if n == "attn" or n.endswith(".attn")],
            "logits": named["logits"], "probs": named["probs"]}


def text_problems(lesson, limit=4000):
    """What a lesson's texts break: one over limit bytes, "steps" and "notes" not keyed alike."""
    problems = []
    texts = [("title", lesson["title"])] + ([("description", lesson["description"])] if "description" in lesson else [])
    texts += [("steps." + k, t) for k, t in lesson["steps"].items()]
    texts += [("notes." + k, t) for k, t in lesson["notes"].items()]
    for key, t in texts:
        for lang in ("en", "zh"):
            if len(t[lang].encode("utf-8")) > limit:
                problems.append("%s.%s: over %d bytes" % (key, lang, limit))
    if set(lesson["steps"]) != set(lesson["notes"]):
        problems.append("steps and notes differ in keys")
    return problems


def text_width(t):
    """A narration's width in Latin characters: a CJK character or punctuation counts 2."""
    return sum(2 if ord(ch) >= 0x2E80 else 1 for ch in t)


def narration_problems(lesson, limit=350):
    """The narrations wider than limit (a CJK character counting 2): a longer one makes the
    narration box taller, and at 640x400 the layout then put the stacked b2 of ffn_sum 1 px
    outside its area (tests/test_render.c, test_layout)."""
    return ["steps.%s: wider than %d (a CJK character counts 2)" % (key, limit)
            for key, t in lesson["steps"].items() if max(text_width(t["en"]), text_width(t["zh"])) > limit]


def json_max_diff(lesson, model, ids):
    """The largest difference between the lesson run from its own JSON text and the model (a
    TinyGPT) on ids: probabilities, logits and every layer's attention."""
    got = lesson_lm_forward(json.loads(lesson_text(lesson)))
    with torch.no_grad():
        logits, attns = model(ids)
    diffs = [float((got["probs"] - torch.softmax(logits, -1)).abs().max()),
             float((got["logits"] - logits).abs().max())]
    diffs += [float((g - a).abs().max()) for g, a in zip(got["attn"], attns)]
    return max(diffs)
