#!/usr/bin/python3
"""PyTorch references of attnviz's encoder–decoder (model.decoder_layers) against nn.Transformer.

For each row below: an nn.Transformer (batch_first, dropout 0) of random shapes — odd head
counts, source and target lengths that differ, post-norm and norm_first, ReLU and GELU — with
its LayerNorms drawn around 1 and 0, random src and tgt; every stage from
lessons/torch_encdec.py (checked there against the module's own hooks and output), written as

    tests/ref/encdec-NAME.lesson.json    the module as a lesson (weights explicit)
    tests/ref/encdec-NAME.expected.json  its stages, which test_attention compares with C's

With --lesson PATH it writes tests/ref/lessons/NAME.expected.json for a shipped lesson instead
(the lesson's weights loaded into an nn.Transformer, its stages checked the same way).

Usage (repo root): /usr/bin/python3 tests/gen_encdec.py [--lesson lessons/X.json]
Deterministic: twice gives the same bytes.
"""

import argparse
import json
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lessons"))
import gen_reference as G  # noqa: E402  (its number and JSON formatting)
import torch_encdec as T  # noqa: E402

# name, seed, d_model, heads, encoder layers, decoder layers, ffn, Ls, Lt, batch, norm_first, activation
ROWS = [
    ("post-3h", 11, 9, 3, 1, 1, 7, 5, 3, 2, False, "relu"),
    ("pre-5h-gelu", 12, 10, 5, 2, 1, 6, 3, 6, 1, True, "gelu"),
    ("post-2x2", 13, 6, 1, 2, 2, 5, 7, 4, 2, False, "relu"),
    ("pre-3h-1x3", 14, 6, 3, 1, 3, 4, 2, 5, 1, True, "relu"),
]


def build(seed, C, H, E, D, F_, nf, act):
    torch.manual_seed(seed)
    m = nn.Transformer(C, H, E, D, F_, dropout=0.0, activation=act, batch_first=True, norm_first=nf).eval()
    T.random_norms(m, torch.Generator().manual_seed(seed))
    return m


def write_pair(name, title, model, src, tgt, out_dir, tokens=None):
    st = T.stages(model, src, tgt)
    lesson = {"title": title, "model": T.lesson_model(model),
              "input": {"query": T._t(tgt), "key": T._t(src)}, "weights": T.lesson_weights(model)}
    if tokens:
        lesson["tokens"] = tokens
    G.write_text(os.path.join(out_dir, name + ".lesson.json"), G.to_json(lesson) + "\n")
    G.write_text(os.path.join(out_dir, name + ".expected.json"), G.expected_json(title, st))


def from_lesson(path):
    """nn.Transformer holding a lesson's weights, and its src and tgt."""
    with open(path, encoding="utf-8") as f:
        ls = json.load(f)
    m, w = ls["model"], ls["weights"]
    E = m["n_layers"] - 2 * m["decoder_layers"]
    model = nn.Transformer(m["d_model"], m["n_heads"], E, m["decoder_layers"], m["ffn_hidden"], dropout=0.0,
                           activation=m.get("activation", "relu"), batch_first=True,
                           norm_first=m.get("norm_first", False), layer_norm_eps=m.get("norm_eps", 1e-5)).eval()

    def put(p, v):
        with torch.no_grad():
            p.copy_(torch.tensor(v, dtype=torch.float32))

    def mha(a, norm, lw):
        put(a.in_proj_weight, lw["w_q"] + lw["w_k"] + lw["w_v"])
        put(a.in_proj_bias, lw["b_q"] + lw["b_k"] + lw["b_v"])
        put(a.out_proj.weight, lw["w_o"]), put(a.out_proj.bias, lw["b_o"])
        put(norm.weight, lw["norm_weight"]), put(norm.bias, lw["norm_bias"])

    def ffn(layer, norm, lw):
        put(layer.linear1.weight, lw["ffn_w1"]), put(layer.linear1.bias, lw["ffn_b1"])
        put(layer.linear2.weight, lw["ffn_w2"]), put(layer.linear2.bias, lw["ffn_b2"])
        put(norm.weight, lw["ffn_norm_weight"]), put(norm.bias, lw["ffn_norm_bias"])
    L = w["layers"]
    for i, layer in enumerate(model.encoder.layers):
        mha(layer.self_attn, layer.norm1, L[i]), ffn(layer, layer.norm2, L[i])
    for i, layer in enumerate(model.decoder.layers):
        mha(layer.self_attn, layer.norm1, L[E + 2 * i])
        mha(layer.multihead_attn, layer.norm2, L[E + 2 * i + 1]), ffn(layer, layer.norm3, L[E + 2 * i + 1])
    put(model.encoder.norm.weight, w["enc_norm_weight"]), put(model.encoder.norm.bias, w["enc_norm_bias"])
    put(model.decoder.norm.weight, w["final_norm_weight"]), put(model.decoder.norm.bias, w["final_norm_bias"])
    src = torch.tensor(ls["input"]["key"], dtype=torch.float32)
    tgt = torch.tensor(ls["input"]["query"], dtype=torch.float32)
    return ls, model, src, tgt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lesson", help="a shipped lesson: write tests/ref/lessons/NAME.expected.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.lesson:
        ls, model, src, tgt = from_lesson(args.lesson)
        name = os.path.splitext(os.path.basename(args.lesson))[0]
        G.write_text(os.path.join(HERE, "ref", "lessons", name + ".expected.json"),
                     G.expected_json(ls["title"], T.stages(model, src, tgt)))
        return
    for name, seed, C, H, E, D, F_, Ls, Lt, B, nf, act in ROWS:
        model = build(seed, C, H, E, D, F_, nf, act)
        g = torch.Generator().manual_seed(seed + 100)
        src, tgt = torch.randn(B, Ls, C, generator=g), torch.randn(B, Lt, C, generator=g)
        title = "nn.Transformer, %d encoder + %d decoder layers, %d heads, source %d, target %d%s" % (
            E, D, H, Ls, Lt, ", norm_first" if nf else "")
        write_pair("encdec-" + name, title, model, src, tgt, os.path.join(HERE, "ref"))


if __name__ == "__main__":
    main()
