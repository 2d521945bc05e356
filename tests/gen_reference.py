#!/usr/bin/python3
"""PyTorch reference data for attnviz.

Builds each lesson variant below as an ordinary PyTorch module (float32,
torch.manual_seed fixed, nn.Linear / view+transpose / masked_fill / softmax,
the way tutorial code is written), runs it, and writes

    tests/ref/NAME.lesson.json    the lesson holding the exact weights, inputs, mask
    tests/ref/NAME.expected.json  {"title": ..., "stages": [{"name", "shape", "data"}, ...]}

It also writes

    tests/ref/from-torch-{mha,custom}.lesson.json / .expected.json
        lessons made by lessons/from_torch.py from a torch.nn.MultiheadAttention and from
        a module of separate head modules, with the stages of those modules
    tests/ref/lessons/NAME.expected.json
        for every lesson of the library, lessons/NAME.json, its stages run in PyTorch

Usage (from the repo root):  /usr/bin/python3 tests/gen_reference.py [--precision]

The output is deterministic: running it twice gives byte-identical files.
After writing, every lesson file is read back, interpreted by lessons/lesson_torch.py
(run_lesson: the Python reading of the lesson format, independent of the C one) and re-run; the result must be
bit-identical to the module that produced it, so the lesson really holds what
torch used.  --precision additionally re-runs every variant in float64 and
prints how far float32 is from it per stage (a hint for test tolerances).

The modules the variants are built from, and the interpreter, are lessons/lesson_torch.py's
(check_random.py, from_torch.py and the training scripts use the same).
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REF_DIR = os.path.join(HERE, "ref")
LESSONS_DIR = os.path.join(os.path.dirname(HERE), "lessons")


def _lessons_module(name):
    """lessons/NAME.py, imported without writing lessons/__pycache__."""
    sys.path.insert(0, LESSONS_DIR)
    no_cache, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        return __import__(name)
    finally:
        sys.path.remove(LESSONS_DIR)
        sys.dont_write_bytecode = no_cache


# the lesson format's modules and interpreter (lessons/torch_modules.py, lessons/lesson_torch.py)
_lessons_module("torch_modules")
_lessons_module("lesson_torch")
from torch_modules import (STAGES, BlockStack, LanguageModel, PerHeadMultiHeadAttention, block_output,  # noqa: E402
                           init_block, init_lm, make_block, mask_json, sliding_window_mask, tensor_json,
                           window_mask)
from lesson_torch import LM_MODEL_KEYS, lesson_module, lm_tail, resolve_lesson, run_lesson, tokenize  # noqa: E402


# ----------------------------------------------------------------------------
# number / JSON formatting
# ----------------------------------------------------------------------------

def fmt_num(x):
    """A JSON number with float32-round-trip precision; non-finite as strings."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return '"nan"'
    if math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    return "%.9g" % x


def _compact(obj):
    return _from_torch_module().compact_json(obj, fmt_num)


def to_json(obj, indent=0, width=100):
    """lessons/from_torch.py's writer, with non-finite numbers as strings."""
    return _from_torch_module().to_json(obj, indent, width, fmt_num)




def expected_json(title, stages):
    lines = ["{", '"title": ' + _compact(title) + ",", '"stages": [']
    parts = []
    for name, t in stages:
        t = t.detach().to(torch.float32).cpu()
        data = ", ".join(fmt_num(v) for v in t.reshape(-1).tolist())
        parts.append('  {"name": "%s", "shape": %s, "data": [%s]}'
                     % (name, _compact(list(t.shape)), data))
    lines.append(",\n".join(parts))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# ----------------------------------------------------------------------------
# variants
# ----------------------------------------------------------------------------

ARANGE_LESSON_TEXT = (
    '{"title": {"en": "The classic: arange(0,32) as 2×4×4, 2 heads", '
    '"zh": "经典示例：arange(0,32) 变形为 2×4×4，2 个头"}, '
    '"model": {"d_model": 4, "n_heads": 2}, '
    '"input": {"query": {"shape": [2,4,4], "arange": [0,32]}}, '
    '"weights": {"init": {"seed": 42}}}\n')


class Variant:
    def __init__(self, name, title, model_json, block, query, key=None, value=None,
                 mask=None, mask_lesson=None, query_2d=False, key_ref=None, tokens=None,
                 lesson_text=None, weights=None):
        self.name, self.title, self.model_json, self.block = name, title, model_json, block
        self.query = query
        self.key = query if key is None else key
        self.value = self.key if value is None else value
        self.mask, self.mask_lesson = mask, mask_lesson
        self.query_2d, self.key_ref, self.tokens = query_2d, key_ref, tokens
        self.lesson_text = lesson_text
        self.weights = weights          # the lesson's weights object, when not the module's tensors

    def run(self, dtype=torch.float32):
        block = self.block.to(dtype)
        args = [t.to(dtype) for t in (self.query, self.key, self.value)]
        if self.query_2d:                      # the module wants (B, L, d)
            args = [t.unsqueeze(0) for t in args]
        with torch.no_grad():
            block(*args, self.mask)
        stages = block.stages()
        self.block.to(torch.float32)
        return stages

    def lesson(self):
        def t(x):
            return tensor_json(x)
        inp = {"query": t(self.query)}
        if self.key is not self.query:
            inp["key"] = t(self.key)
        elif self.key_ref:
            inp["key"] = self.key_ref
        if self.value is self.key:
            pass
        elif self.value is self.query:
            inp["value"] = "query"
        else:
            inp["value"] = t(self.value)
        if getattr(self.block.attn, "position_ids", None) is not None:
            inp["position_ids"] = self.block.attn.position_ids.tolist()
        les = {"title": self.title, "model": self.model_json, "input": inp}
        if self.mask_lesson is not None:
            les["mask"] = self.mask_lesson
        les["weights"] = self.block.lesson_weights() if self.weights is None else self.weights
        if self.tokens:
            les["tokens"] = self.tokens
        return les

    def lesson_file_text(self):
        if self.lesson_text is not None:
            return self.lesson_text
        return to_json(self.lesson()) + "\n"


class LMVariant(Variant):
    """A language-model variant: a LanguageModel run on token ids; its lesson holds the vocab,
    the tokenizer and the input as text (each text tokenized again must give the ids) or ids."""

    def __init__(self, name, title, model_json, lm, vocab, ids, text=None, tokenizer=None,
                 mask=None, mask_lesson=None, weights=None):
        super().__init__(name, title, model_json, lm, ids, mask=mask, mask_lesson=mask_lesson, weights=weights)
        self.vocab, self.ids, self.text, self.tokenizer = vocab, ids, text, tokenizer
        if text is not None:
            texts = text if isinstance(text, list) else [text]
            assert [tokenize(t, vocab, tokenizer or "char", "text") for t in texts] == ids.tolist(), text

    def run(self, dtype=torch.float32):
        lm = self.block.to(dtype)
        with torch.no_grad():
            lm(self.ids, self.mask)
        stages = lm.stages()
        self.block.to(torch.float32)
        return stages

    def lesson(self):
        les = {"title": self.title, "vocab": self.vocab}
        if self.tokenizer is not None:
            les["tokenizer"] = self.tokenizer
        les["model"] = self.model_json
        les["input"] = {"text": self.text} if self.text is not None else {"ids": self.ids.tolist()}
        pos = getattr(self.block.body.attn, "position_ids", None)
        if pos is not None:
            les["input"]["position_ids"] = pos.tolist()
        if self.mask_lesson is not None:
            les["mask"] = self.mask_lesson
        les["weights"] = self.weights
        return les


def rope_lm_by_hand(lm, ids, eps):
    """The logits of lm-rope-attn-only written out again with plain torch, apart from the
    modules: nn.Embedding, then per layer RMSNorm as x / sqrt(mean(x²) + eps)·γ, F.linear
    projections, RoPE as a complex product (the pair (x_i, x_{i+d/2}) times e^{i·pos·θ_i}, in
    float64), repeat_kv, a causal -inf softmax and the residual; the final RMSNorm and an
    nn.Linear head. Returns the logits and each layer's attention output."""
    B, L = ids.shape
    emb = nn.Embedding.from_pretrained(lm.tok.weight.detach().clone())
    head = nn.Linear(lm.tok.embedding_dim, lm.tok.num_embeddings, bias=False)
    with torch.no_grad():
        head.weight.copy_(lm.lm_head.weight)

    def rms(x, g):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    causal = torch.ones(L, L, dtype=torch.bool).tril()
    outs = []
    with torch.no_grad():
        x = emb(ids)
        for block in lm.body.layers:
            a = block.attn
            H, Hkv, d = a.n_heads, a.n_kv_heads, a.d_k
            h = rms(x, block.norm.weight)
            q = F.linear(h, a.w_q.weight, a.w_q.bias).view(B, L, H, d).transpose(1, 2)
            k = F.linear(h, a.w_k.weight, a.w_k.bias).view(B, L, Hkv, d).transpose(1, 2)
            v = F.linear(h, a.w_v.weight, a.w_v.bias).view(B, L, Hkv, d).transpose(1, 2)
            ang = torch.arange(L, dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, d, 2).double() / d)
            turn = torch.polar(torch.ones_like(ang), ang)

            def rope(t):
                c = torch.complex(t[..., : d // 2].double(), t[..., d // 2:].double()) * turn
                return torch.cat([c.real, c.imag], dim=-1).float()
            q, k = rope(q), rope(k)
            s = q @ repeat_kv(k, H // Hkv).transpose(-2, -1) / math.sqrt(d)
            p = F.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
            o = (p @ repeat_kv(v, H // Hkv)).transpose(1, 2).reshape(B, L, H * d)
            o = F.linear(o, a.w_o.weight, a.w_o.bias)
            outs.append(o)
            x = x + o
        return head(rms(x, lm.final_norm.weight)), outs


def copy_to_encoder_layer(block, layer):
    """Copies a block's weights (LayerNorm, biases) into an nn.TransformerEncoderLayer."""
    with torch.no_grad():
        a = block.attn
        layer.self_attn.in_proj_weight.copy_(torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight]))
        layer.self_attn.in_proj_bias.copy_(torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias]))
        layer.self_attn.out_proj.weight.copy_(a.w_o.weight)
        layer.self_attn.out_proj.bias.copy_(a.w_o.bias)
        for mine, theirs in [(block.ffn_w1, layer.linear1), (block.ffn_w2, layer.linear2),
                             (block.norm, layer.norm1), (block.ffn_norm, layer.norm2)]:
            theirs.weight.copy_(mine.weight)
            theirs.bias.copy_(mine.bias)


NEG_INF = float("-inf")

# One row per single-block variant, built by variant_from_row in this order (each seeds torch
# first, so the rows are independent):
#   name, title      the reference's name (tests/ref/NAME.*) and its lesson's title
#   seed             torch.manual_seed before the block is made (its weights), then the inputs
#   block            make_block's arguments: the module, written as tutorial PyTorch code
#   model            the lesson's model object, written independently of block (the round trip
#                    through the lesson file checks that they agree, bit for bit)
#   x                the input's shape (self-attention), or q / k / v: the shapes drawn in that
#                    order (k and v default to the query, v to k)
#   mask             "causal"; {"key_padding": lens}; {"sliding_window": W[, "sink_tokens": S]};
#                    a 0/1 list (the lesson holds the same numbers), with "view" its shape
#   norms            the block's norms drawn around 1 and 0 (before the input)
#   sinks            gpt-oss's sink logits per head
#   positions        position_ids: {"offset": P} (P, P+1, …) or {"left_padding": attention_mask}
#   query_2d, key_ref, tokens   as Variant's
VARIANT_ROWS = [
    dict(name="fused-padding-mask", title="Fused multi-head attention with a (B,1,1,Lk) padding mask", seed=2,
         block=dict(d_model=8, n_heads=2, mask_fill=-1e9), model={"d_model": 8, "n_heads": 2, "mask_fill": -1e9},
         x=(2, 5, 8), mask={"tensor": [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "view": (2, 1, 1, 5)}),
    dict(name="cross-key-padding", title={"en": "Cross-attention: 3 queries, 5 keys, key padding",
                                          "zh": "交叉注意力：3 个查询、5 个键，键填充掩码"}, seed=3,
         block=dict(d_model=8, n_heads=2, mask_fill=-1e10), model={"d_model": 8, "n_heads": 2, "mask_fill": -1e10},
         q=(2, 3, 8), k=(2, 5, 8), v=(2, 5, 8), mask={"key_padding": [5, 3]}),
    # RoPE details: a partial rotary dimension (GPT-NeoX's rotate_half on the first rotary_dim
    # values, GPT-J's interleaved rotary_dim), odd head counts, and position_ids: decoding after a
    # prompt of P tokens (P, P+1, ...) and left padding (Hugging Face's position_ids =
    # attention_mask.cumsum(-1) - 1, the pads at 1 as its masked_fill(…, 1))
    dict(name="rope-partial-half", title="RoPE, rotate_half on 4 of d_k = 6 (partial rotary), 3 heads", seed=32,
         block=dict(d_model=18, n_heads=3, rope=(10000.0, "half", 4)),
         model={"d_model": 18, "n_heads": 3, "rope": {"style": "half", "rotary_dim": 4}}, x=(2, 5, 18)),
    dict(name="rope-interleaved-offset", title="RoPE interleaved, rotary_dim 6 of 10, positions 12..18, causal", seed=33,
         block=dict(d_model=10, n_heads=1, d_k=10, d_v=4, rope=(500.0, "interleaved", 6), mask_fill=NEG_INF),
         model={"d_model": 10, "n_heads": 1, "d_k": 10, "d_v": 4, "mask_fill": "-inf",
                "rope": {"theta": 500, "style": "interleaved", "rotary_dim": 6}},
         x=(1, 7, 10), positions={"offset": 12}, mask="causal"),
    dict(name="rope-left-padding-decode", title="RoPE with left padding's position_ids, MQA, KV-cache decoding", seed=34,
         block=dict(d_model=8, n_heads=2, n_kv_heads=1, rope=(10000.0, "half"), decode=True),
         model={"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "rope": {"style": "half"}, "decode": True},
         x=(2, 6, 8), positions={"left_padding": [[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]]}, mask="causal"),
] + [
    # rope_scaling, Hugging Face's four types, each where it changes the numbers: positions past
    # original_max_position_embeddings (dynamic NTK grows the base there)
    dict(name="rope-scaling-" + kind, title="RoPE scaling: %s, positions 3..8" % kind, seed=40 + i,
         block=dict(d_model=16, n_heads=2, rope=(100.0, "half", 8, sc), mask_fill=NEG_INF),
         model={"d_model": 16, "n_heads": 2, "mask_fill": "-inf", "rope": {"theta": 100, "style": "half", "scaling": sc}},
         x=(1, 6, 16), positions={"offset": 3}, mask="causal")
    for i, (kind, sc) in enumerate([
        ("linear", {"type": "linear", "factor": 4.0}),
        ("dynamic", {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4}),
        ("yarn", {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 16}),
        ("llama3", {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 16,
                    "low_freq_factor": 1.0, "high_freq_factor": 4.0})])
] + [
    "causal-bottom-right",
    dict(name="causal-decoder", title="Causal (decoder) self-attention", seed=4,
         block=dict(d_model=8, n_heads=2, mask_fill=-1e10), model={"d_model": 8, "n_heads": 2, "mask_fill": -1e10},
         x=(2, 6, 8), mask="causal"),
    dict(name="per-head-causal-neginf", title={"en": "Separate head modules (nn.ModuleList), causal mask with -inf",
                                               "zh": "每个头一个模块（nn.ModuleList），-inf 因果掩码"}, seed=5,
         block=dict(d_model=6, n_heads=3, qkv_bias=False, mask_fill=NEG_INF, per_head=True),
         model={"d_model": 6, "n_heads": 3, "qkv_bias": False, "mask_fill": "-inf"}, x=(2, 5, 6), mask="causal"),
    dict(name="dk-dv-ffn-norm", title="d_k=2 but d_v=4, no biases, residual + LayerNorm, feed-forward", seed=6,
         block=dict(d_model=6, n_heads=2, d_k=2, d_v=4, qkv_bias=False, out_bias=False, residual_norm=True,
                    norm_eps=1e-6, ffn_hidden=12),
         model={"d_model": 6, "n_heads": 2, "d_k": 2, "d_v": 4, "qkv_bias": False, "out_bias": False,
                "residual_norm": True, "norm_eps": 1e-6, "ffn_hidden": 12}, norms=True, x=(2, 4, 6)),
    # StreamingLLM: a sliding window of 3 with the first 2 tokens kept as attention sinks, GQA with
    # RoPE, decoded token by token (the cache's rows 0, 1 and the last 3 are read)
    dict(name="streaming-sinks-decode",
         title="StreamingLLM: a window of 3 and 2 attention-sink tokens, MQA, RoPE, decoding", seed=64,
         block=dict(d_model=8, n_heads=2, n_kv_heads=1, rope=(10000.0, "half"), decode=True, mask_fill=NEG_INF),
         model={"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "mask_fill": "-inf", "rope": {"style": "half"},
                "decode": True}, x=(2, 9, 8), mask={"sliding_window": 3, "sink_tokens": 2}),
    # gpt-oss's attention sinks (transformers' GptOssAttention, eager_attention_forward): a learned
    # logit per head joins each softmax and takes weight without a value, so rows sum to less
    # than 1; GQA with RoPE and a sliding window of 3 as gpt-oss's alternate layers, -inf, decoded
    # token by token too. The sinks are set apart (one large, one very negative). Then in a plain
    # fully masked row (-inf): the sink takes all, the row is 0, not NaN
    dict(name="gpt-oss-sinks-decode", title="gpt-oss's sink logits: GQA 4/2, RoPE, a window of 3, decoding", seed=65,
         block=dict(d_model=8, n_heads=4, n_kv_heads=2, rope=(10000.0, "half"), decode=True, mask_fill=NEG_INF,
                    attn_sinks=True),
         model={"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "mask_fill": "-inf", "rope": {"style": "half"},
                "attn_sinks": True, "decode": True}, sinks=[1.5, -0.5, 0.25, -4.0], x=(2, 6, 8),
         mask={"sliding_window": 3}),
    dict(name="gpt-oss-sinks-masked-row", title="gpt-oss's sink logits with a fully masked row (-inf)", seed=66,
         block=dict(d_model=4, n_heads=2, mask_fill=NEG_INF, attn_sinks=True),
         model={"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "attn_sinks": True}, sinks=[0.0, 2.0], x=(1, 3, 4),
         mask={"tensor": [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]}),
    # today's blocks. A Llama-style decoder layer (transformers' LlamaDecoderLayer: pre-norm with
    # RMSNorm, GQA with RoPE, no biases, SwiGLU's LlamaMLP), decoded token by token too; pre-norm
    # with LayerNorm and exact GELU, checked against nn.TransformerEncoderLayer(norm_first=True,
    # activation="gelu") with the same weights; post-norm with RMSNorm and GELU's tanh form, odd
    # sizes, key padding.
    dict(name="llama-block-decode",
         title="A Llama-style block: RMSNorm, GQA with RoPE, SwiGLU, pre-norm; KV-cache decoding", seed=61,
         block=dict(d_model=8, n_heads=4, n_kv_heads=2, qkv_bias=False, out_bias=False, rope=(10000.0, "half"),
                    residual_norm=True, norm_eps=1e-6, ffn_hidden=12, norm="rms", norm_first=True,
                    activation="swiglu", ffn_bias=False, decode=True, mask_fill=NEG_INF),
         model={"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                "mask_fill": "-inf", "rope": {"style": "half"}, "residual_norm": True, "norm_eps": 1e-6,
                "norm": "rms", "norm_first": True, "ffn_hidden": 12, "activation": "swiglu",
                "ffn_bias": False, "decode": True}, norms=True, x=(2, 5, 8), mask="causal"),
    "prenorm-gelu-layernorm",
    dict(name="postnorm-rms-gelu-tanh", title="Post-norm with RMSNorm and GELU (tanh), 3 heads, key padding", seed=63,
         block=dict(d_model=6, n_heads=3, residual_norm=True, ffn_hidden=10, norm="rms", activation="gelu_tanh",
                    norm_eps=1e-5),
         model={"d_model": 6, "n_heads": 3, "residual_norm": True, "ffn_hidden": 10, "norm": "rms",
                "activation": "gelu_tanh"}, norms=True, x=(2, 5, 6), mask={"key_padding": [5, 3]}),
] + [
    # a fully masked query row, once with -1e9 (uniform row), once with -inf (NaN row)
    dict(name=name, title="A fully masked query row: " + what, seed=7, block=dict(d_model=4, n_heads=2, mask_fill=fill),
         model={"d_model": 4, "n_heads": 2, "mask_fill": fill_json}, x=(2, 4, 4),
         mask={"tensor": [[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]]})
    for name, fill, fill_json, what in [("masked-row-1e9", -1e9, -1e9, "-1e9 gives a uniform row"),
                                         ("masked-row-neginf", NEG_INF, "-inf", "-inf gives a NaN row")]
] + [
    # no sqrt(d_k) scaling, and a custom divisor
    dict(name=name, title=title, seed=8, block=dict(d_model=4, n_heads=2, scale=scale),
         model={"d_model": 4, "n_heads": 2, "scale": scale}, x=(2, 3, 4))
    for name, scale, title in [("no-scale", 1, "No scaling: scores = QKᵀ (scale 1)"),
                               ("scale-3", 3, "Custom scale: scores = QKᵀ / 3")]
] + [
    # qkv bias but no output bias; 2-D query (B = 1); value separate from key
    dict(name="no-out-bias-2d", title="Unbatched input (Lq, d_model), separate value, no output bias", seed=9,
         block=dict(d_model=6, n_heads=2, qkv_bias=True, out_bias=False),
         model={"d_model": 6, "n_heads": 2, "qkv_bias": True, "out_bias": False}, q=(4, 6), v=(4, 6),
         query_2d=True, key_ref="query", tokens={"query": ["the", "cat", "sat", "down"]}),
    dict(name="ffn-key-padding", title="Feed-forward after attention (no residual norm), key padding", seed=10,
         block=dict(d_model=8, n_heads=4, ffn_hidden=16), model={"d_model": 8, "n_heads": 4, "ffn_hidden": 16},
         x=(2, 5, 8), mask={"key_padding": [3, 5]}),
    dict(name="big-causal", title="Bigger: 3 sequences of 7, d_model 12, 3 heads, causal", seed=11,
         block=dict(d_model=12, n_heads=3, mask_fill=-1e9, residual_norm=True),
         model={"d_model": 12, "n_heads": 3, "mask_fill": -1e9, "residual_norm": True}, x=(3, 7, 12), mask="causal"),
    # Llama-style: GQA (4 query heads, 2 K/V heads), RoPE rotate_half, causal, no biases
    dict(name="gqa-rope-causal", title="Llama-style: GQA 4/2 heads, RoPE (rotate_half), causal", seed=12,
         block=dict(d_model=16, n_heads=4, qkv_bias=False, out_bias=False, mask_fill=NEG_INF, n_kv_heads=2,
                    rope=(10000.0, "half")),
         model={"d_model": 16, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                "mask_fill": "-inf", "rope": {"theta": 10000, "style": "half"}}, x=(2, 6, 16), mask="causal"),
    # multi-query attention, RoPE interleaved (GPT-J / Meta pairs), theta 500, no mask
    dict(name="mqa-rope-interleaved", title="MQA (3 query heads, 1 K/V head), d_k 4, d_v 2, RoPE interleaved", seed=13,
         block=dict(d_model=12, n_heads=3, d_k=4, d_v=2, n_kv_heads=1, rope=(500.0, "interleaved")),
         model={"d_model": 12, "n_heads": 3, "d_k": 4, "d_v": 2, "n_kv_heads": 1,
                "rope": {"theta": 500, "style": "interleaved"}}, x=(1, 9, 12)),
    # Mistral-style: GQA + RoPE + sliding window 3 over 8 tokens
    dict(name="sliding-window-gqa", title="Mistral-style: sliding window 3, GQA 4/2, RoPE", seed=14,
         block=dict(d_model=8, n_heads=4, qkv_bias=False, out_bias=False, mask_fill=NEG_INF, n_kv_heads=2,
                    rope=(10000.0, "half")),
         model={"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                "mask_fill": "-inf", "rope": {"style": "half"}}, x=(2, 8, 8), mask={"sliding_window": 3}),
    # ALiBi, 4 heads (a power of two), causal with -1e9; then 6 heads (not a power of two: the
    # paper's interleaved slopes), no mask
    dict(name="alibi-causal", title="ALiBi, 4 heads, causal", seed=15, block=dict(d_model=8, n_heads=4, alibi=True),
         model={"d_model": 8, "n_heads": 4, "alibi": True}, x=(2, 6, 8), mask="causal"),
    dict(name="alibi-6-heads-gqa", title="ALiBi with 6 heads (not a power of two), GQA 6/3, residual + LayerNorm",
         seed=16, block=dict(d_model=12, n_heads=6, alibi=True, n_kv_heads=3, residual_norm=True),
         model={"d_model": 12, "n_heads": 6, "n_kv_heads": 3, "alibi": True, "residual_norm": True}, x=(1, 5, 12)),
    # GQA in cross-attention with key padding, biases, d_k != d_v; sliding window 1
    dict(name="gqa-cross-padding", title="GQA 4/2 in cross-attention, key padding, d_k 2, d_v 3", seed=17,
         block=dict(d_model=8, n_heads=4, d_k=2, d_v=3, n_kv_heads=2, mask_fill=-1e10),
         model={"d_model": 8, "n_heads": 4, "d_k": 2, "d_v": 3, "n_kv_heads": 2, "mask_fill": -1e10},
         q=(2, 3, 8), k=(2, 5, 8), mask={"key_padding": [4, 2]}),
    dict(name="sliding-window-1", title="Sliding window 1: each token sees only itself", seed=18,
         block=dict(d_model=4, n_heads=2), model={"d_model": 4, "n_heads": 2}, x=(1, 4, 4),
         mask={"sliding_window": 1}),
    # FlashAttention tiles: causal, key blocks of 3 over 7 keys (a short last block); over a sliding
    # window with -inf: whole blocks masked (the running max stays -inf: Check_inf), GQA and RoPE;
    # with a fully masked row (-inf: NaN, as the standard pass) and ALiBi
    dict(name="flash-causal", title="FlashAttention tiles 2×3, causal", seed=19,
         block=dict(d_model=8, n_heads=2, flash=(2, 3)),
         model={"d_model": 8, "n_heads": 2, "flash": {"block_q": 2, "block_k": 3}}, x=(2, 7, 8), mask="causal"),
    dict(name="flash-window-neginf", title="FlashAttention tiles 4×2 over a sliding window 2 with -inf, GQA, RoPE",
         seed=20, block=dict(d_model=8, n_heads=4, n_kv_heads=2, rope=(10000.0, "half"), mask_fill=NEG_INF, flash=(4, 2)),
         model={"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "mask_fill": "-inf", "rope": {"style": "half"},
                "flash": {"block_q": 4, "block_k": 2}}, x=(1, 8, 8), mask={"sliding_window": 2}),
    dict(name="flash-masked-row-alibi", title="FlashAttention tiles 1×4, ALiBi, a fully masked row with -inf", seed=21,
         block=dict(d_model=4, n_heads=2, mask_fill=NEG_INF, alibi=True, flash=(1, 4)),
         model={"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "alibi": True, "flash": {"block_q": 1, "block_k": 4}},
         x=(1, 5, 4), mask={"tensor": [[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0],
                                       [1, 1, 1, 1, 1]]}),
    # KV-cache decoding, Llama-style: GQA + RoPE + causal; with ALiBi over a sliding window, biases,
    # d_k != d_v, residual + LayerNorm; and MQA with interleaved RoPE and FlashAttention tiles
    dict(name="decode-gqa-rope", title="KV-cache decoding: GQA 4/2, RoPE, causal", seed=22,
         block=dict(d_model=8, n_heads=4, qkv_bias=False, out_bias=False, mask_fill=NEG_INF, n_kv_heads=2,
                    rope=(10000.0, "half"), decode=True),
         model={"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                "mask_fill": "-inf", "rope": {"style": "half"}, "decode": True}, x=(2, 6, 8), mask="causal"),
    dict(name="decode-alibi-window", title="KV-cache decoding: ALiBi, sliding window 3, d_k 2, d_v 3", seed=23,
         block=dict(d_model=6, n_heads=3, d_k=2, d_v=3, alibi=True, decode=True, residual_norm=True),
         model={"d_model": 6, "n_heads": 3, "d_k": 2, "d_v": 3, "alibi": True, "decode": True,
                "residual_norm": True}, x=(2, 5, 6), mask={"sliding_window": 3}),
    dict(name="decode-mqa-flash",
         title="KV-cache decoding and FlashAttention tiles: MQA, interleaved RoPE (theta 100)", seed=24,
         block=dict(d_model=8, n_heads=2, n_kv_heads=1, rope=(100.0, "interleaved"), decode=True, flash=(2, 2)),
         model={"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "rope": {"theta": 100, "style": "interleaved"},
                "decode": True, "flash": {"block_q": 2, "block_k": 2}}, x=(1, 5, 8), mask="causal"),
    # several layers and language models: code below (each checked against PyTorch's own modules)
    # the attention of 2026's model cards (issue 42), odd head counts, lengths the tiles do not divide:
    # QK-norm as Qwen3 (RMSNorm of each head's q and k over d_k with γ of size d_k, before RoPE),
    # with Gemma 2's soft-capping c·tanh(s / c) of the scaled scores before the mask
    dict(name="qk-norm-softcap-rope", title="QK-norm (Qwen3) and soft-capping at 2 (Gemma 2): 3 heads, RoPE, causal",
         seed=91, block=dict(d_model=12, n_heads=3, rope=(10000.0, "half"), qk_norm=True, norm_eps=1e-6, softcap=2.0,
                             mask_fill=NEG_INF),
         model={"d_model": 12, "n_heads": 3, "mask_fill": "-inf", "norm_eps": 1e-6, "rope": {"style": "half"},
                "qk_norm": True, "attn_logit_softcapping": 2}, qk_gamma=True, x=(2, 5, 12), mask="causal"),
    # Gemma's query_pre_attn_scalar (the scale √7, not √d_k = √2) with a cap of 1.5 over ALiBi's
    # biased scores, 5 heads, key padding
    dict(name="qpas-softcap-alibi", title="query_pre_attn_scalar 7, soft-capping at 1.5 over ALiBi, 5 heads, padding",
         seed=92, block=dict(d_model=10, n_heads=5, scale=float(np.float32(math.sqrt(7.0))), alibi=True, softcap=1.5),
         model={"d_model": 10, "n_heads": 5, "query_pre_attn_scalar": 7, "alibi": True,
                "attn_logit_softcapping": 1.5}, x=(2, 6, 10), mask={"key_padding": [6, 4]}),
    # gated attention as Qwen3-Next (concat ⊙ σ(x·W_Gᵀ + b_G) before W_O) in a pre-norm RMSNorm block:
    # GQA 3/1, d_v 3 ≠ d_k 2, the gate read from the normed input
    dict(name="gated-attn-gqa-prenorm", title="Gated attention (Qwen3-Next): GQA 3/1, d_v 3, pre-norm RMSNorm, causal",
         seed=93, block=dict(d_model=9, n_heads=3, n_kv_heads=1, d_k=2, d_v=3, attn_gate=True, residual_norm=True,
                             norm="rms", norm_first=True, ffn_hidden=7),
         model={"d_model": 9, "n_heads": 3, "n_kv_heads": 1, "d_k": 2, "d_v": 3, "attn_gate": True,
                "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 7}, norms=True, x=(2, 5, 9), mask="causal"),
    # the gate without biases, QK-norm, and FlashAttention's tiles (3×2 over 7 keys) on the normed heads
    dict(name="gated-qk-norm-flash", title="Gated attention without biases, QK-norm, FlashAttention tiles 3×2, 3 heads",
         seed=94, block=dict(d_model=6, n_heads=3, qkv_bias=False, out_bias=False, qk_norm=True, attn_gate=True,
                             flash=(3, 2)),
         model={"d_model": 6, "n_heads": 3, "qkv_bias": False, "out_bias": False, "qk_norm": True, "attn_gate": True,
                "flash": {"block_q": 3, "block_k": 2}}, qk_gamma=True, x=(1, 7, 6), mask="causal"),
    # the conventions (issue 41), each off its default: FlashAttention's window of W + 1 keys
    # (window_size = (W, 0)) with a StreamingLLM sink; fully masked rows as zeros (SDPA >= 2.5,
    # FlashAttention), also in the tiles; torch.finfo(float32).min as the fill; BLOOM's ALiBi m·j
    dict(name="conv-window-flash", title="Conventions: a window of W + 1 keys (FlashAttention's), W 2, a sink",
         seed=95, block=dict(d_model=8, n_heads=2, mask_fill=NEG_INF, rope=(10000.0, "half"), window_conv="flash"),
         model={"d_model": 8, "n_heads": 2, "mask_fill": "-inf", "rope": {"style": "half"},
                "window_convention": "flash"}, x=(1, 7, 8), mask={"sliding_window": 2, "sink_tokens": 1}),
    dict(name="conv-masked-rows-zero", title="Conventions: a fully masked row as zeros (SDPA >= 2.5), -inf",
         seed=96, block=dict(d_model=4, n_heads=2, mask_fill=NEG_INF, masked_rows="zero"),
         model={"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "masked_rows": "zero"}, x=(2, 4, 4),
         mask={"tensor": [[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]]}),
    dict(name="conv-masked-rows-zero-flash", title="Conventions: fully masked rows as zeros in FlashAttention's tiles",
         seed=97, block=dict(d_model=4, n_heads=2, mask_fill=NEG_INF, alibi=True, flash=(2, 2), masked_rows="zero"),
         model={"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "alibi": True, "masked_rows": "zero",
                "flash": {"block_q": 2, "block_k": 2}},
         x=(1, 5, 4), mask={"tensor": [[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0],
                                       [1, 1, 1, 1, 1]]}),
    dict(name="conv-fill-finfo-min", title="Conventions: torch.finfo(float32).min as the fill, a fully masked row",
         seed=98, block=dict(d_model=4, n_heads=2, mask_fill=float(torch.finfo(torch.float32).min)),
         model={"d_model": 4, "n_heads": 2, "mask_fill": float(torch.finfo(torch.float32).min)}, x=(2, 4, 4),
         mask={"tensor": [[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]]}),
    # FlashAttention-1's accumulator (Algorithm 1 of the paper): causal over 7 keys in blocks of 3, and
    # a sliding window with -inf where whole blocks are masked, a fully masked row (NaN, as FA2)
    dict(name="conv-flash-fa1", title="Conventions: FlashAttention-1's accumulator, tiles 2×3, causal", seed=101,
         block=dict(d_model=8, n_heads=2, flash=(2, 3), flash_acc="fa1"),
         model={"d_model": 8, "n_heads": 2, "flash": {"block_q": 2, "block_k": 3}, "flash_accumulator": "fa1"},
         x=(2, 7, 8), mask="causal"),
    dict(name="conv-flash-fa1-masked", title="Conventions: FlashAttention-1's accumulator, whole blocks masked with -inf",
         seed=102, block=dict(d_model=4, n_heads=2, mask_fill=NEG_INF, alibi=True, flash=(1, 2), flash_acc="fa1"),
         model={"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "alibi": True, "flash_accumulator": "fa1",
                "flash": {"block_q": 1, "block_k": 2}},
         x=(1, 5, 4), mask={"tensor": [[0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 0, 0, 1],
                                       [1, 1, 1, 1, 1]]}),
    # StreamingLLM's positions within the cache (its pos_shift): the decoding of streaming-sinks-decode
    dict(name="conv-streaming-cache-positions",
         title="Conventions: StreamingLLM's positions within the cache (pos_shift), a window of 3, 2 sinks", seed=103,
         block=dict(d_model=8, n_heads=2, n_kv_heads=1, rope=(10000.0, "half"), decode=True, mask_fill=NEG_INF,
                    stream_pos="cache"),
         model={"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "mask_fill": "-inf", "rope": {"style": "half"},
                "decode": True, "streaming_positions": "cache"}, x=(2, 9, 8), mask={"sliding_window": 3, "sink_tokens": 2}),
    dict(name="conv-alibi-key", title="Conventions: ALiBi as m·j (BLOOM's), 4 heads, causal", seed=99,
         block=dict(d_model=8, n_heads=4, alibi=True, alibi_form="key"),
         model={"d_model": 8, "n_heads": 4, "alibi": True, "alibi_form": "key"}, x=(2, 6, 8), mask="causal"),
    "conv-local-global-window-flash",
    "stack-3-local-global",
    "mla-q-lora-3-heads", "mla-dsa-prenorm", "dsa-gqa-padding", "stack-2-mla-dsa",
    "stack-2-post", "stack-3-prenorm-rope-gqa-decode", "stack-2-flash-alibi-layers",
    "lm-char-2-layer", "lm-word-sinusoidal-tied", "lm-rope-attn-only",
    "gdn-hybrid-3-heads", "deltanet-5-heads-parallel", "linear-plain-after-full",
]


def random_norms(block, d):
    """The block's norms drawn around 1 (weight) and 0 (bias), norm then ffn_norm."""
    with torch.no_grad():
        for ln in (block.norm, block.ffn_norm):
            ln.weight.copy_(1 + 0.25 * torch.randn(d))
            if getattr(ln, "bias", None) is not None:
                ln.bias.copy_(0.1 * torch.randn(d))


def key_padding_mask(lens, Lk):
    """(B, 1, 1, Lk): key j of batch b is kept when j < lens[b]."""
    lens = torch.tensor(lens)
    return (torch.arange(Lk)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)


def variant_from_row(row):
    """A Variant from a row of VARIANT_ROWS (see there)."""
    torch.manual_seed(row["seed"])
    block = make_block(**row["block"])
    d = row["block"]["d_model"]
    if row.get("norms"):
        random_norms(block, d)
    if row.get("qk_gamma"):            # QK-norm's γ drawn around 1
        with torch.no_grad():
            for g in (block.attn.q_norm, block.attn.k_norm):
                g.weight.copy_(1 + 0.25 * torch.randn(g.weight.shape))
    if "sinks" in row:
        with torch.no_grad():
            block.attn.sinks.copy_(torch.tensor(row["sinks"]))
    if "x" in row:
        q = k = v = torch.randn(*row["x"])
    else:
        q = torch.randn(*row["q"])
        k = torch.randn(*row["k"]) if "k" in row else q
        v = torch.randn(*row["v"]) if "v" in row else k
    Lq, Lk = q.shape[-2], k.shape[-2]
    pos = row.get("positions")
    if pos and "offset" in pos:
        block.attn.position_ids = torch.arange(Lq).view(1, Lq) + pos["offset"]
    elif pos:
        am = torch.tensor(pos["left_padding"])
        block.attn.position_ids = (am.cumsum(-1) - 1).masked_fill(am == 0, 1)
    spec = row.get("mask")
    mask = mask_lesson = None
    if spec == "causal":
        mask, mask_lesson = torch.tril(torch.ones(Lq, Lk)), "causal"
    elif isinstance(spec, dict) and "key_padding" in spec:
        mask, mask_lesson = key_padding_mask(spec["key_padding"], Lk), spec
    elif isinstance(spec, dict) and "sliding_window" in spec:
        mask, mask_lesson = window_mask(Lq, spec["sliding_window"], spec.get("sink_tokens", 0),
                                        row["block"].get("window_conv", "inclusive")), spec
    elif spec is not None:
        mask = torch.tensor(spec["tensor"])
        mask = mask.view(*spec["view"]) if "view" in spec else mask
        mask_lesson = mask_json(mask)
    return Variant(row["name"], row["title"], row["model"], block, q, k, v, mask=mask, mask_lesson=mask_lesson,
                   query_2d=row.get("query_2d", False), key_ref=row.get("key_ref"), tokens=row.get("tokens"))


# The classic arange example, weights from the init generator
def variant_arange_2x4x4():
    les = json.loads(ARANGE_LESSON_TEXT)
    r = resolve_lesson(les)
    block = make_block(4, 2)
    block.load_lesson_weights(r["weights"])
    x = torch.arange(0, 32, dtype=torch.float32).view(2, 4, 4)
    return Variant("arange-2x4x4", les["title"], les["model"], block, x,
                   lesson_text=ARANGE_LESSON_TEXT)


# Causal aligned bottom-right: 3 new tokens after a prompt of 2 attend to all 5
# positions; FlashAttention >= 2.1 (flash_attn_func(causal=True), its README's example
# for seqlen_q = 2, seqlen_k = 5) lets query i see keys j <= i + Lk - Lq
def variant_causal_bottom_right():
    torch.manual_seed(31)
    block = make_block(8, 2)
    x = torch.randn(2, 5, 8)
    q = x[:, 2:].clone()
    mask = torch.tril(torch.ones(3, 5), diagonal=5 - 3)
    return Variant("causal-bottom-right",
                   {"en": "Causal aligned bottom-right: 3 queries after a prompt of 2, 5 keys",
                    "zh": "右下角对齐的因果掩码：提示 2 个词元之后的 3 个查询，5 个键"},
                   {"d_model": 8, "n_heads": 2}, block, q, x, x,
                   mask=mask, mask_lesson={"causal": "bottom_right"})


# Pre-norm with LayerNorm and exact GELU, checked against nn.TransformerEncoderLayer(
# norm_first=True, activation="gelu") with the same weights
def variant_prenorm_gelu_layernorm():
    torch.manual_seed(62)
    block = make_block(6, 2, residual_norm=True, ffn_hidden=10, norm_first=True, activation="gelu")
    random_norms(block, 6)
    x = torch.randn(2, 4, 6)
    # the same layer as PyTorch's own module: its output must equal ours
    layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=10, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True).eval()
    with torch.no_grad():
        copy_to_encoder_layer(block, layer)
        want = layer(x)
        got = block(x, x, x, None)
        assert torch.allclose(want, got, atol=1e-6, rtol=1e-5), (want - got).abs().max()
    return Variant("prenorm-gelu-layernorm",
                   "Pre-norm with LayerNorm and GELU (nn.TransformerEncoderLayer(norm_first=True, activation=\"gelu\"))",
                   {"d_model": 6, "n_heads": 2, "residual_norm": True, "ffn_hidden": 10, "norm_first": True,
                    "activation": "gelu"}, block, x)


# Several layers (model.n_layers, issue 25): layer 0 reads the input, layer l > 0 the
# output of layer l − 1 (its last stage), each layer with its own weights (a seed gives layer
# l the generator's tensors i + 64·l) and the same mask; the stages are named l0.…, l1.….
# Post-norm with ReLU over the classic arange input, causal, checked against
# nn.TransformerEncoder with the same two layers
def variant_stack_2_post():
    blocks = [init_block(make_block(4, 2, residual_norm=True, ffn_hidden=8), 42, l) for l in range(2)]
    stack = BlockStack(blocks)
    x = torch.arange(0, 32, dtype=torch.float32).view(2, 4, 4)
    mask = torch.tril(torch.ones(4, 4))
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True),
                                2, enable_nested_tensor=False).eval()
    for block, layer in zip(blocks, enc.layers):
        copy_to_encoder_layer(block, layer)
    with torch.no_grad():
        got = stack(x, x, x, mask)
    with torch.enable_grad():               # the layers' Python code, not 1.13's inference fast path
        want = enc(x, mask=torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)).detach()
    assert torch.allclose(want, got, atol=1e-5, rtol=1e-4), (want - got).abs().max()
    return Variant("stack-2-post", "Two layers, post-norm with ReLU: arange(0,32) as 2×4×4, causal",
                   {"d_model": 4, "n_heads": 2, "n_layers": 2, "residual_norm": True, "ffn_hidden": 8},
                   stack, x, mask=mask, mask_lesson="causal", weights={"init": {"seed": 42}})


# Three Llama-style layers (pre-norm, RMSNorm, SwiGLU, GQA with RoPE), each decoded token
# by token on its own input
def variant_stack_3_prenorm_rope_gqa_decode():
    torch.manual_seed(71)
    stack = BlockStack([init_block(make_block(8, 4, n_kv_heads=2, rope=(10000.0, "half"), residual_norm=True,
                                              ffn_hidden=12, norm="rms", norm_first=True, activation="swiglu",
                                              ffn_bias=False, decode=True), 7, l) for l in range(3)])
    x = torch.randn(1, 6, 8)
    return Variant("stack-3-prenorm-rope-gqa-decode",
                   "Three pre-norm layers: RMSNorm, SwiGLU, GQA 4/2 with RoPE, causal, KV-cache decoding",
                   {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "n_layers": 3, "rope": {"style": "half"},
                    "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 12,
                    "activation": "swiglu", "ffn_bias": False, "decode": True}, stack, x,
                   mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal", weights={"init": {"seed": 7}})


# Two pre-norm layers with LayerNorm and GELU, ALiBi, FlashAttention tiles 2×2, key padding;
# weights.layers: layer 0 gives its own w_q, layer 1 its own norm_weight, the rest is seeded
def variant_stack_2_flash_alibi_layers():
    torch.manual_seed(72)
    blocks = [init_block(make_block(6, 2, alibi=True, flash=(2, 2), residual_norm=True, ffn_hidden=10,
                                    norm_first=True, activation="gelu"), 9, l) for l in range(2)]
    w_q = 0.5 * torch.randn(6, 6)
    g = 1 + 0.25 * torch.randn(6)
    with torch.no_grad():
        blocks[0].attn.w_q.weight.copy_(w_q)
        blocks[1].norm.weight.copy_(g)
    x = torch.randn(2, 5, 6)
    lens = torch.tensor([5, 3])
    mask = (torch.arange(5)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)
    return Variant("stack-2-flash-alibi-layers",
                   "Two pre-norm layers, LayerNorm and GELU, ALiBi, FlashAttention tiles 2×2, key padding; "
                   "weights per layer",
                   {"d_model": 6, "n_heads": 2, "n_layers": 2, "alibi": True, "flash": {"block_q": 2, "block_k": 2},
                    "residual_norm": True, "norm_first": True, "ffn_hidden": 10, "activation": "gelu"},
                   BlockStack(blocks), x, mask=mask, mask_lesson={"key_padding": [5, 3]},
                   weights={"layers": [{"w_q": tensor_json(w_q)}, {"norm_weight": tensor_json(g)}],
                            "init": {"seed": 9}})


# A local/global pattern (Gemma 2/3's sliding and full layers, Hugging Face's config.layer_types):
# the pattern [sliding, full] repeated over 3 layers (sliding, full, sliding), a window of 2 in
# the sliding layers, whose RoPE base is Gemma 3's rope_local_base_freq (10 here; the full layers
# 1e6 with linear scaling 2); pre-norm RMSNorm with SwiGLU, QK-norm, soft-capping at 3, 5 heads
def variant_stack_3_local_global():
    torch.manual_seed(95)
    types = ["sliding_attention", "full_attention"]
    blocks = []
    for l in range(3):
        sliding = types[l % 2] == "sliding_attention"
        rope = (10.0, "half", None, None) if sliding else (1e6, "half", None, {"type": "linear", "factor": 2.0})
        blocks.append(init_block(make_block(10, 5, rope=rope, residual_norm=True, ffn_hidden=8, norm="rms",
                                            norm_first=True, activation="swiglu", ffn_bias=False, qk_norm=True,
                                            softcap=3.0, window=2 if sliding else 0, mask_fill=NEG_INF), 95, l))
    x = torch.randn(2, 6, 10)
    return Variant("stack-3-local-global",
                   "Local/global layers: [sliding, full] over 3 layers, a window of 2, RoPE bases 10 and 1e6, "
                   "QK-norm, soft-capping at 3, 5 heads",
                   {"d_model": 10, "n_heads": 5, "n_layers": 3, "mask_fill": "-inf",
                    "rope": {"theta": 1e6, "style": "half", "scaling": {"type": "linear", "factor": 2}},
                    "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 8,
                    "activation": "swiglu", "ffn_bias": False, "qk_norm": True, "attn_logit_softcapping": 3,
                    "layer_types": types, "sliding_window": 2, "rope_local_base_freq": 10},
                   BlockStack(blocks), x, mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal",
                   weights={"init": {"seed": 95}})


def variant_conv_local_global_window_flash():
    """A sliding layer's own window of W + 1 keys (model.window_convention "flash"), then a full one."""
    torch.manual_seed(100)
    types = ["sliding_attention", "full_attention"]
    blocks = [init_block(make_block(8, 2, residual_norm=True, norm_first=True, window=2 if l == 0 else 0,
                                    mask_fill=NEG_INF, window_conv="flash"), 100, l) for l in range(2)]
    x = torch.randn(1, 6, 8)
    return Variant("conv-local-global-window-flash",
                   "Conventions: a sliding layer's window of W + 1 keys (FlashAttention's), W 2, then a full layer",
                   {"d_model": 8, "n_heads": 2, "n_layers": 2, "mask_fill": "-inf", "residual_norm": True,
                    "norm_first": True, "layer_types": types, "sliding_window": 2, "window_convention": "flash"},
                   BlockStack(blocks), x, mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal",
                   weights={"init": {"seed": 100}})


# Language models (a vocab): token ids -> embedding (+ positions) -> the layers -> final
# norm -> logits -> probs. Each is also checked against plain torch: nn.Embedding,
# nn.TransformerEncoder's layers (or the layers written out by hand), the norm, a linear head.
# Characters, learned positions, two pre-norm GELU layers, a final LayerNorm, an untied head;
# weights.layers gives layer 0 its norm_weight and layer 1 its ffn_norm_bias, the final norm
# stands beside them, the rest is seeded
def variant_lm_char_2_layer():
    torch.manual_seed(81)
    vocab = list("abcdefg") + [" "]
    text = "abcab cab"
    ids = torch.tensor([tokenize(text, vocab, "char", "text")])
    blocks = [init_block(make_block(8, 2, residual_norm=True, ffn_hidden=16, norm_first=True, activation="gelu"), 81, l)
              for l in range(2)]
    lm = init_lm(LanguageModel(BlockStack(blocks), len(vocab), 8, "learned", max_positions=12), 81)
    g0, b1 = 1 + 0.25 * torch.randn(8), 0.1 * torch.randn(8)
    fg, fb = 1 + 0.25 * torch.randn(8), 0.1 * torch.randn(8)
    with torch.no_grad():
        blocks[0].norm.weight.copy_(g0)
        blocks[1].ffn_norm.bias.copy_(b1)
        lm.final_norm.weight.copy_(fg)
        lm.final_norm.bias.copy_(fb)
    L = ids.shape[1]
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation="gelu",
                                                           batch_first=True, norm_first=True),
                                2, norm=nn.LayerNorm(8), enable_nested_tensor=False).eval()
    for block, layer in zip(blocks, enc.layers):
        copy_to_encoder_layer(block, layer)
    emb, pos, head = nn.Embedding(8, 8), nn.Embedding(12, 8), nn.Linear(8, 8, bias=False)
    with torch.no_grad():
        for mine, theirs in [(lm.tok, emb), (lm.pos, pos), (lm.final_norm, enc.norm), (lm.lm_head, head)]:
            theirs.load_state_dict(mine.state_dict())
        got = lm(ids, torch.tril(torch.ones(L, L)))
    with torch.enable_grad():               # the layers' Python code, not 1.13's inference fast path
        want = head(enc(emb(ids) + pos(torch.arange(L)),
                        mask=torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1))).detach()
    assert torch.allclose(want, got, atol=1e-5, rtol=1e-4), (want - got).abs().max()
    assert torch.allclose(F.softmax(want, dim=-1), lm.trace["probs"], atol=1e-6)
    return LMVariant("lm-char-2-layer",
                     "A character language model: learned positions, two pre-norm GELU layers, final LayerNorm, "
                     "causal",
                     {"d_model": 8, "n_heads": 2, "n_layers": 2, "residual_norm": True, "norm_first": True,
                      "ffn_hidden": 16, "activation": "gelu", "positions": "learned", "max_positions": 12},
                     lm, vocab, ids, text=text, mask=torch.tril(torch.ones(L, L)), mask_lesson="causal",
                     weights={"init": {"seed": 81},
                              "layers": [{"norm_weight": tensor_json(g0)}, {"ffn_norm_bias": tensor_json(b1)}],
                              "final_norm_weight": tensor_json(fg), "final_norm_bias": tensor_json(fb)})


# Words (split on spaces: the double space and the leading one give no token), a batch of
# two texts, sinusoidal positions, one post-norm ReLU layer and no final norm (final_norm
# false: a post-norm layer already ends in a norm), the head tied to a given embedding,
# temperature 0.7
def variant_lm_word_sinusoidal_tied():
    torch.manual_seed(82)
    vocab = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park"]
    texts = ["the cat sat on  mat", " a dog ran to park"]
    ids = torch.tensor([tokenize(t, vocab, "word", "text") for t in texts])
    L = ids.shape[1]
    block = init_block(make_block(6, 2, residual_norm=True, ffn_hidden=12), 82)
    lm = LanguageModel(block, len(vocab), 6, "sinusoidal", seq_len=L, final_norm=False, tie=True, temperature=0.7)
    E = 0.8 * torch.randn(len(vocab), 6)
    with torch.no_grad():
        lm.tok.weight.copy_(E)
        got = lm(ids, torch.tril(torch.ones(L, L)))
    layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=12, dropout=0.0, batch_first=True).eval()
    copy_to_encoder_layer(block, layer)
    emb = nn.Embedding.from_pretrained(E.clone())
    # the positions in float64 from the paper's formula: PE(pos, 2i) = sin(pos / 10000^(2i/d)), cos at 2i+1
    i2 = torch.arange(0, 6, 2, dtype=torch.float64)
    angle = torch.arange(L, dtype=torch.float64)[:, None] / 10000.0 ** (i2 / 6)
    pe = torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2).float()
    with torch.enable_grad():
        want = F.linear(layer(emb(ids) + pe, src_mask=torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)),
                        emb.weight).detach()
    assert torch.allclose(want, got, atol=1e-5, rtol=1e-4), (want - got).abs().max()
    assert torch.allclose(F.softmax(want / 0.7, dim=-1), lm.trace["probs"], atol=1e-6)
    return LMVariant("lm-word-sinusoidal-tied",
                     "A word language model: two texts, sinusoidal positions, one post-norm layer, tied "
                     "embeddings, temperature 0.7",
                     {"d_model": 6, "n_heads": 2, "residual_norm": True, "ffn_hidden": 12,
                      "positions": "sinusoidal", "final_norm": False, "tie_embeddings": True, "temperature": 0.7},
                     lm, vocab, ids, text=texts, tokenizer="word", mask=torch.tril(torch.ones(L, L)),
                     mask_lesson="causal", weights={"init": {"seed": 82}, "embed": tensor_json(E)})


# Token ids in, no positions but RoPE, two pre-norm attention-only layers (RMSNorm, GQA
# 4/2), each decoded token by token, a final RMSNorm, every tensor seeded
def variant_lm_rope_attn_only():
    g = torch.Generator().manual_seed(83)
    vocab = ["<s>", "up", "down", "left", "right"]
    ids = torch.randint(0, len(vocab), (1, 7), generator=g)
    L = ids.shape[1]
    blocks = [init_block(make_block(8, 4, n_kv_heads=2, rope=(10000.0, "half"), residual_norm=True, norm="rms",
                                    norm_first=True, decode=True), 83, l) for l in range(2)]
    lm = init_lm(LanguageModel(BlockStack(blocks), len(vocab), 8, norm="rms"), 83)
    with torch.no_grad():
        got = lm(ids, torch.tril(torch.ones(L, L)))
    want, outs = rope_lm_by_hand(lm, ids, 1e-5)
    assert torch.allclose(want, got, atol=1e-5, rtol=1e-4), (want - got).abs().max()
    for block, o in zip(blocks, outs):
        assert torch.allclose(o, block.trace["output"], atol=1e-5, rtol=1e-4)
        assert torch.allclose(block.trace["decode_output"], block.trace["output"], atol=1e-5, rtol=1e-4)
    return LMVariant("lm-rope-attn-only",
                     "A language model on token ids: RoPE, two pre-norm attention-only layers, GQA 4/2, "
                     "final RMSNorm, KV-cache decoding",
                     {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "n_layers": 2, "rope": {"style": "half"},
                      "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 0, "decode": True},
                     lm, vocab, ids, mask=torch.tril(torch.ones(L, L)), mask_lesson="causal",
                     weights={"init": {"seed": 83}})


# DeepSeek's attention (issue 42 items 1 and 6; lessons/torch_mla.py follows DeepSeek-V2 §2.1 and
# transformers' DeepseekV3Attention, the absorbed form DeepSeek-V3's inference/model.py, the indexer
# DeepSeek-V3.2-Exp's eq. (1)): odd head counts, ranks and top-k that do not divide L. The module is
# built from the lesson (seeded weights, the latent norms' γ given), as resolve_lesson reads it.
def deepseek_variant(name, title, model, x_shape, mask, weights, seed):
    torch.manual_seed(seed)
    x = torch.randn(*x_shape)
    les = {"title": title, "model": model, "input": {"query": tensor_json(x)}, "mask": mask, "weights": weights}
    r = resolve_lesson(les)
    return Variant(name, title, model, lesson_module(r, False), x, mask=r["mask"], mask_lesson=mask, weights=weights)


def variant_mla_q_lora_3_heads():
    g = torch.Generator().manual_seed(96)
    return deepseek_variant(
        "mla-q-lora-3-heads", "MLA: 3 heads, d_k 6 = 4 + RoPE 2, d_v 4, q_lora_rank 5, kv_lora_rank 3, causal, -inf",
        {"d_model": 10, "n_heads": 3, "d_k": 6, "d_v": 4, "qkv_bias": False, "mask_fill": "-inf",
         "rope": {"style": "half"}, "q_lora_rank": 5, "kv_lora_rank": 3, "qk_rope_head_dim": 2},
        (2, 7, 10), "causal", {"init": {"seed": 96}, "q_latent_norm": tensor_json(1 + 0.25 * torch.randn(5, generator=g)),
                               "kv_latent_norm": tensor_json(1 + 0.25 * torch.randn(3, generator=g))}, 96)


def variant_mla_dsa_prenorm():
    return deepseek_variant(
        "mla-dsa-prenorm", "MLA without query compression and sparse attention (3 indexer heads, top-3 of 7): "
        "5 heads, interleaved RoPE, pre-norm SwiGLU",
        {"d_model": 8, "n_heads": 5, "d_k": 5, "d_v": 3, "qkv_bias": False, "out_bias": False,
         "rope": {"theta": 100, "style": "interleaved"}, "residual_norm": True, "norm": "rms", "norm_first": True,
         "ffn_hidden": 6, "activation": "swiglu", "ffn_bias": False, "kv_lora_rank": 4, "qk_rope_head_dim": 2,
         "index_n_heads": 3, "index_head_dim": 2, "index_topk": 3}, (2, 7, 8), "causal", {"init": {"seed": 97}}, 97)


def variant_dsa_gqa_padding():
    return deepseek_variant(
        "dsa-gqa-padding", "Sparse attention over GQA 3/1: 1 indexer head of 3, top-4 of 9 keys, key padding, "
        "soft-capping at 2",
        {"d_model": 6, "n_heads": 3, "n_kv_heads": 1, "attn_logit_softcapping": 2, "index_n_heads": 1,
         "index_head_dim": 3, "index_topk": 4}, (2, 9, 6), {"key_padding": [9, 5]}, {"init": {"seed": 98}}, 98)


def variant_stack_2_mla_dsa():
    return deepseek_variant(
        "stack-2-mla-dsa", "Two MLA layers with sparse attention (top-2 of 5), q_lora_rank 3, 3 heads",
        {"d_model": 6, "n_heads": 3, "n_layers": 2, "d_k": 4, "qkv_bias": False, "rope": {"theta": 500},
         "residual_norm": True, "q_lora_rank": 3, "kv_lora_rank": 5, "qk_rope_head_dim": 2, "index_n_heads": 3,
         "index_head_dim": 1, "index_topk": 2}, (1, 5, 6), "causal", {"init": {"seed": 99}}, 99)


# Linear attention and Gated DeltaNet (issue 42 item 5; lessons/torch_delta.py, from the Gated DeltaNet
# paper's recurrence and the WY/UT matrix form): hybrid patterns, odd head counts, L 5, 7 and 9, every
# rule; each linear layer's recurrence checked equal to its matrix form before the reference is written.
def linear_variant(name, title, model, x_shape, seed):
    var = deepseek_variant(name, title, model, x_shape, "causal", {"init": {"seed": seed}}, seed)
    with torch.no_grad():
        var.block(var.query, var.query, var.query, var.mask)
    blocks = list(var.block.layers) if hasattr(var.block, "layers") else [var.block]
    for block in blocks:
        tr = block.trace
        if "lin_out" in tr:
            assert torch.allclose(tr["lin_out"], tr["lin_parallel"], atol=1e-5, rtol=1e-4), \
                (name, (tr["lin_out"] - tr["lin_parallel"]).abs().max())
    return var


def variant_gdn_hybrid_3_heads():
    return linear_variant(
        "gdn-hybrid-3-heads", "A full layer, then Gated DeltaNet twice (a 1:2 hybrid, Qwen3-Next's kinds of layer): 3 heads, "
        "d_k 4, d_v 3, QK-norm, RoPE and the sigmoid gate in the full layer",
        {"d_model": 9, "n_heads": 3, "d_k": 4, "d_v": 3, "n_layers": 3, "qkv_bias": False, "out_bias": False,
         "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 6, "activation": "swiglu",
         "ffn_bias": False, "rope": {"style": "half"}, "qk_norm": True, "attn_gate": True,
         "layer_types": ["full_attention", "linear_attention", "linear_attention"]}, (2, 7, 9), 101)


def variant_deltanet_5_heads_parallel():
    return linear_variant(
        "deltanet-5-heads-parallel", "DeltaNet (no gate) in every layer, the output from the matrix form: 5 heads, "
        "d_k 2, d_v 3, post-norm with a ReLU FFN",
        {"d_model": 10, "n_heads": 5, "d_k": 2, "d_v": 3, "n_layers": 2, "residual_norm": True, "ffn_hidden": 7,
         "layer_types": ["linear_attention"], "linear_rule": "delta", "linear_form": "parallel"}, (1, 9, 10), 102)


def variant_linear_plain_after_full():
    return linear_variant(
        "linear-plain-after-full", "Plain linear attention (S += k·vᵀ) after a full layer: 1 head, d_k 3, biases",
        {"d_model": 3, "n_heads": 1, "n_layers": 2, "layer_types": ["full_attention", "linear_attention"],
         "linear_rule": "linear"}, (2, 5, 3), 103)


VARIANT_CODE = {"arange-2x4x4": variant_arange_2x4x4, "causal-bottom-right": variant_causal_bottom_right, "prenorm-gelu-layernorm": variant_prenorm_gelu_layernorm, "stack-2-post": variant_stack_2_post, "stack-3-prenorm-rope-gqa-decode": variant_stack_3_prenorm_rope_gqa_decode, "stack-2-flash-alibi-layers": variant_stack_2_flash_alibi_layers, "lm-char-2-layer": variant_lm_char_2_layer, "lm-word-sinusoidal-tied": variant_lm_word_sinusoidal_tied, "lm-rope-attn-only": variant_lm_rope_attn_only,
                "stack-3-local-global": variant_stack_3_local_global,
                "mla-q-lora-3-heads": variant_mla_q_lora_3_heads, "mla-dsa-prenorm": variant_mla_dsa_prenorm,
                "dsa-gqa-padding": variant_dsa_gqa_padding, "stack-2-mla-dsa": variant_stack_2_mla_dsa,
                "conv-local-global-window-flash": variant_conv_local_global_window_flash,
                "gdn-hybrid-3-heads": variant_gdn_hybrid_3_heads,
                "deltanet-5-heads-parallel": variant_deltanet_5_heads_parallel,
                "linear-plain-after-full": variant_linear_plain_after_full}


def variants():
    """Every variant: the table's rows, and by name the builders that need code (VARIANT_CODE)."""
    out = [VARIANT_CODE["arange-2x4x4"]()]
    for row in VARIANT_ROWS:
        out.append(VARIANT_CODE[row]() if isinstance(row, str) else variant_from_row(row))
    return out


# ----------------------------------------------------------------------------
# the lesson library: lessons/*.json -> ref/lessons/NAME.expected.json
# ----------------------------------------------------------------------------

def lesson_stages(lesson):
    """Runs a lesson (any lesson file, narration and tokens ignored) as PyTorch modules.

    Like run_lesson(), but lessons whose Q/K/V weights are in the per-head form run as
    per-head modules and also get q_proj/k_proj/v_proj: the per-head projections
    concatenated, torch.cat([head.query(x) for head in heads], -1), which is what the
    fused projection of the same weights computes."""
    r = resolve_lesson(lesson)
    per_head = r["per_head_form"]
    module = lesson_module(r, per_head)
    blocks = list(module.layers) if r["n_layers"] > 1 else [module]
    out = [] if r["lm"] is None else list(r["lm"]["stages"])
    with torch.no_grad():
        y = module(r["query"], r["key"], r["value"], r["mask"])
        for i, block in enumerate(blocks):
            stages = dict(block.stages())
            if per_head:
                # the attention's inputs: the lesson's (layer 0) or the layer before's output,
                # normed first in a pre-norm block
                q, k, v = (r["query"], r["key"], r["value"]) if i == 0 else \
                    (blocks[i - 1].trace[block_output(blocks[i - 1])],) * 3
                if block.norm_first:
                    q = k = v = block.trace["attn_norm"]
                heads = block.attn.heads
                stages["q_proj"] = torch.cat([h.query(q) for h in heads], -1)
                stages["k_proj"] = torch.cat([h.key(k) for h in heads], -1)
                stages["v_proj"] = torch.cat([h.value(v) for h in heads], -1)
            prefix = "l%d." % i if r["n_layers"] > 1 else ""
            out += [(prefix + n, stages[n]) for n in STAGES if n in stages]
    return out if r["lm"] is None else out + lm_tail(r["lm"], y)


def lesson_references(out_dir, lessons_dir=LESSONS_DIR):
    """Writes out_dir/NAME.expected.json for every lessons_dir/NAME.json; returns ok."""
    os.makedirs(out_dir, exist_ok=True)
    ok = True
    names = sorted(f[:-5] for f in os.listdir(lessons_dir) if f.endswith(".json"))
    for name in names:
        with open(os.path.join(lessons_dir, name + ".json"), encoding="utf-8") as f:
            lesson = json.load(f)
        if "image" in lesson:  # a vision transformer: tests/gen_vit.py writes its reference
            continue
        if "decoder_layers" in lesson["model"]:  # an encoder-decoder: tests/gen_encdec.py --lesson writes it
            continue
        stages = lesson_stages(lesson)
        epath = os.path.join(out_dir, name + ".expected.json")
        write_text(epath, expected_json(lesson["title"], stages))
        with open(epath, encoding="utf-8") as f:
            exp = json.load(f)["stages"]
        for (sname, t), e in zip(stages, exp):
            et = torch.tensor([float(x) for x in e["data"]], dtype=torch.float32).view(e["shape"])
            if e["name"] != sname or not same_bits(t, et):
                print("lessons/%s: %s does not round-trip through the expected file" % (name, sname))
                ok = False
        # the other way of writing the same maths (fused <-> per-head) must agree
        # (GQA, RoPE and ALiBi are written fused only)
        other = dict(run_lesson(lesson, per_head=not resolve_lesson(lesson)["per_head_form"]))
        for sname, t in stages:
            if sname in other and not close(t, other[sname]):
                print("lessons/%s: %s differs between fused and per-head modules" % (name, sname))
                ok = False
        print("lessons/%-30s %s" % (name + ".json", " ".join(n for n, _ in stages)))
    return ok


def close(a, b, atol=1e-5, rtol=1e-4):
    """Equal within atol + rtol·|b|, NaN and inf at the same places."""
    a, b = a.double(), b.double()
    if a.shape != b.shape or not torch.equal(torch.isnan(a), torch.isnan(b)):
        return False
    fin = torch.isfinite(b)
    if not torch.equal(a[~fin & ~torch.isnan(b)], b[~fin & ~torch.isnan(b)]):
        return False
    return bool(((a[fin] - b[fin]).abs() <= atol + rtol * b[fin].abs()).all())


# ----------------------------------------------------------------------------
# from_torch.py round trips: ref/from-torch-{mha,custom}.lesson.json + .expected.json
# ----------------------------------------------------------------------------

def _from_torch_module():
    return _lessons_module("from_torch")


def _mha_masked(mask, shape_fn):
    if mask is None:
        return None
    if mask.dtype == torch.bool or mask.dtype == torch.uint8:
        return shape_fn(mask != 0)
    return shape_fn(torch.isneginf(mask))       # float additive mask of 0 / -inf


def mha_reference_stages(mha, query, key=None, value=None, attn_mask=None, key_padding_mask=None):
    """Every stage of a torch.nn.MultiheadAttention call, batch first.

    attn (per head, need_weights=True, average_attn_weights=False) and output are what
    the module returns; the stages before them are written out with the module's own
    parameters (in_proj_weight/in_proj_bias split in q|k|v thirds, view + transpose,
    Q·Kᵀ/√d, the masks as -inf), and head_out/concat follow from the returned attn.
    Checks that softmax(masked_scores) and concat·W_Oᵀ + b_O agree with the module."""
    key = query if key is None else key
    value = key if value is None else value
    unbatched = query.dim() == 2

    def bf(t):
        if unbatched:
            return t.unsqueeze(0)
        return t if mha.batch_first else t.transpose(0, 1)

    q, k, v = bf(query), bf(key), bf(value)
    E, H = mha.embed_dim, mha.num_heads
    d = E // H
    B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
    W, b = mha.in_proj_weight, mha.in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
    was = mha.training
    mha.eval()
    with torch.no_grad():
        qp, kp, vp = F.linear(q, W[:E], bq), F.linear(k, W[E:2 * E], bk), F.linear(v, W[2 * E:], bv)
        qh = qp.view(B, Lq, H, d).transpose(1, 2)
        kh = kp.view(B, Lk, H, d).transpose(1, 2)
        vh = vp.view(B, Lk, H, d).transpose(1, 2)
        scores = torch.matmul(qh, kh.transpose(-2, -1)) / math.sqrt(d)
        masked = torch.zeros(B, H, Lq, Lk, dtype=torch.bool)
        am = _mha_masked(attn_mask, lambda m: m.view(B, H, Lq, Lk) if m.dim() == 3 else m)
        if am is not None:
            masked = masked | am
        kpm = _mha_masked(key_padding_mask, lambda m: m.reshape(B, 1, 1, Lk))
        if kpm is not None:
            masked = masked | kpm
        masked_scores = scores.masked_fill(masked, float("-inf"))
        out, attn = mha(query, key, value, key_padding_mask=key_padding_mask, need_weights=True,
                        attn_mask=attn_mask, average_attn_weights=False)
        if unbatched:
            attn = attn.unsqueeze(0)
        out = bf(out)
        head_out = torch.matmul(attn, vh)
        concat = head_out.transpose(1, 2).reshape(B, Lq, E)
        if not close(F.softmax(masked_scores, dim=-1), attn):
            raise RuntimeError("mha_reference_stages: softmax(masked_scores) differs from the module")
        if not close(F.linear(concat, mha.out_proj.weight, mha.out_proj.bias), out):
            raise RuntimeError("mha_reference_stages: concat·W_Oᵀ + b_O differs from the module")
    mha.train(was)
    return [("q_proj", qp), ("k_proj", kp), ("v_proj", vp), ("q_heads", qh), ("k_heads", kh),
            ("v_heads", vh), ("scores", scores), ("masked_scores", masked_scores), ("attn", attn),
            ("head_out", head_out), ("concat", concat), ("output", out)]


def from_torch_fixtures():
    """[(name, lesson dict made by lessons/from_torch.py, torch stages)] for the round trip."""
    ft = _from_torch_module()
    out = []

    # nn.MultiheadAttention, sequence first (L, B, E), bias, bool causal attn_mask plus a
    # key_padding_mask: from_torch.py combines them into one (B, Lq, Lk) 0/1 mask, fill -inf
    torch.manual_seed(21)
    mha = nn.MultiheadAttention(6, 2, batch_first=False)
    with torch.no_grad():
        mha.in_proj_bias.uniform_(-0.3, 0.3)
        mha.out_proj.bias.uniform_(-0.3, 0.3)
    x = torch.randn(5, 2, 6)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    lesson = ft.lesson_from_module(
        mha, x, mask=causal, key_padding_mask=pad,
        title={"en": "From PyTorch: nn.MultiheadAttention, causal + key padding",
               "zh": "来自 PyTorch：nn.MultiheadAttention，因果掩码 + 键填充"})
    out.append(("from-torch-mha", lesson,
                mha_reference_stages(mha, x, attn_mask=causal, key_padding_mask=pad)))

    # a custom module: separate head modules (nn.ModuleList), d_k != d_v, cross-attention,
    # a (B, 1, 1, Lk) padding mask (1 = attend) that becomes {"key_padding": [...]}
    torch.manual_seed(22)
    attn = PerHeadMultiHeadAttention(6, 2, d_k=2, d_v=3, qkv_bias=True, out_bias=True,
                                     mask_fill=-1e9)
    q = torch.randn(2, 3, 6)
    kv = torch.randn(2, 4, 6)
    val = torch.randn(2, 4, 6)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]]).view(2, 1, 1, 4)
    lesson = ft.lesson_from_module(
        attn, q, kv, val, mask=mask,
        title={"en": "From PyTorch: separate head modules, cross-attention, d_k 2, d_v 3",
               "zh": "来自 PyTorch：独立的头模块，交叉注意力，d_k 2、d_v 3"})
    with torch.no_grad():
        attn(q, kv, val, mask)
    stages = [(n, attn.trace[n]) for n in STAGES if n in attn.trace]
    out.append(("from-torch-custom", lesson, stages))

    # a Hugging Face-style grouped-query module (q_proj/k_proj/v_proj/o_proj, no bias,
    # num_key_value_heads) with repeat_kv written as HF writes it (expand + reshape),
    # causal: from_torch.py must find n_kv_heads from the k/v layers' sizes
    torch.manual_seed(23)
    gqa = HFGroupedAttention(8, 4, 2)
    x = torch.randn(2, 5, 8)
    causal = torch.tril(torch.ones(5, 5))
    lesson = ft.lesson_from_module(
        gqa, x, mask=causal,
        title={"en": "From PyTorch: a grouped-query module (4 heads, 2 K/V heads), causal",
               "zh": "来自 PyTorch：分组查询模块（4 个头、2 个 K/V 头），因果掩码"})
    with torch.no_grad():
        gqa(x, causal)
    stages = [(n, gqa.trace[n]) for n in STAGES if n in gqa.trace]
    out.append(("from-torch-gqa", lesson, stages))
    return out


def repeat_kv(hidden_states, n_rep):
    """Hugging Face transformers' repeat_kv: (B, Hkv, L, d) -> (B, Hkv·n_rep, L, d)."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class HFGroupedAttention(nn.Module):
    """Llama's attention without RoPE, as Hugging Face writes it: separate q/k/v/o
    projections without bias, k/v with num_key_value_heads heads, repeat_kv."""

    def __init__(self, hidden_size, num_heads, num_key_value_heads):
        super().__init__()
        self.num_heads, self.num_key_value_heads = num_heads, num_key_value_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size, bias=False)
        self.mask_fill = float("-inf")   # found by from_torch.py (FILL_ATTRS)
        self.trace = {}

    def forward(self, x, mask=None):
        tr = self.trace = {}
        B, L, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        tr["q_proj"], tr["k_proj"], tr["v_proj"] = q, k, v
        q = q.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, L, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, L, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        tr["q_heads"], tr["k_heads"], tr["v_heads"] = q, k, v
        n_rep = self.num_heads // self.num_key_value_heads
        scores = torch.matmul(q, repeat_kv(k, n_rep).transpose(2, 3)) / math.sqrt(self.head_dim)
        tr["scores"] = scores
        if mask is not None:
            scores = scores.masked_fill(mask == 0, self.mask_fill)
        tr["masked_scores"] = scores
        attn = F.softmax(scores, dim=-1)
        tr["attn"] = attn
        out = torch.matmul(attn, repeat_kv(v, n_rep))
        tr["head_out"] = out
        out = out.transpose(1, 2).reshape(B, L, -1)
        tr["concat"] = out
        out = self.o_proj(out)
        tr["output"] = out
        return out


def from_torch_references(out_dir):
    ft = _from_torch_module()
    ok = True
    for name, lesson, stages in from_torch_fixtures():
        text = ft.lesson_text(lesson)
        lpath = os.path.join(out_dir, name + ".lesson.json")
        write_text(lpath, text)
        write_text(os.path.join(out_dir, name + ".expected.json"),
                   expected_json(lesson["title"], stages))
        # this file's own reading of the lesson must agree with the module
        with open(lpath, encoding="utf-8") as f:
            again = dict(run_lesson(json.load(f)))
        for sname, t in stages:
            if sname in again and not close(again[sname], t):
                print("%s: %s from the lesson file differs from the module" % (name, sname))
                ok = False
        print("%-24s %s" % (name, " ".join(n for n, _ in stages)))
    return ok


# ----------------------------------------------------------------------------

def same_bits(a, b):
    if a.shape != b.shape:
        return False
    nan = torch.isnan(a)
    return bool(torch.equal(nan, torch.isnan(b)) and torch.equal(a[~nan], b[~nan]))


def layer_by_layer(lesson, stages):
    """Checks a lesson of several layers against one-layer lessons; returns what differs.
    The lesson cut to its first layer (n_layers 1, weights.layers[:1] or the same seed) must give
    the l0. stages under today's names, and every layer l must give, bit for bit, the stages of a
    one-layer lesson holding layer l's weights whose input is layer l − 1's output."""
    r = resolve_lesson(lesson)
    got = dict(stages)
    bad = []

    def compare(l, one):
        ones = [(n, t) for n, t in run_lesson(one) if n in STAGES]     # (a language model's own stages aside)
        mine = [(n[len("l%d." % l):], t) for n, t in stages if n.startswith("l%d." % l)]
        if [n for n, _ in ones] != [n for n, _ in mine]:
            bad.append("layer %d: stages %s, one layer %s" % (l, [n for n, _ in mine], [n for n, _ in ones]))
        bad.extend("l%d.%s" % (l, n) for n, t in ones if not same_bits(t, got.get("l%d.%s" % (l, n), torch.empty(0))))
        return dict(ones)

    wj = lesson["weights"]
    first = dict(lesson, model=dict(lesson["model"], n_layers=1),
                 weights=dict(wj, layers=wj["layers"][:1]) if "layers" in wj else wj)
    compare(0, first)
    model = {k: v for k, v in lesson["model"].items() if k != "n_layers" and k not in LM_MODEL_KEYS}
    last = block_output(make_block(**r["cfg"]))
    x = r["query"]
    # a language model's layer l: a lesson without the vocab whose input is the embedding (l = 0)
    plain = {k: v for k, v in lesson.items() if k not in ("vocab", "tokenizer")}
    inp = {k: v for k, v in lesson["input"].items() if k not in ("text", "ids")}
    for l, w in enumerate(r["layers"]):
        one = dict(plain, title="layer %d" % l, model=model, input=dict(inp, query=tensor_json(x)),
                   weights={n: tensor_json(t) for n, t in w.items()})
        x = compare(l, one)[last]
    return bad


def layernorm_edges(out_dir):
    """tests/ref/layernorm-edges.json: torch.nn.LayerNorm on rows where float32
    overflows inside its kernel (issue 15, item 8: [3e38, -3e38, 3e38, -3e38] is
    NaN, not 0) and on random rows of every length class of its 8-lane, 16-chunk
    moments; test_tensor compares tensor_layer_norm with them."""
    g = torch.Generator().manual_seed(15)
    big = [
        [3e38, -3e38, 3e38, -3e38], [3e38, 0, 0, 0], [3e38] * 4, [1e20, -1e20, 1e20, -1e20],
        [1e20] * 4, [1e19] * 4, [-2e19, 2e19, 1, 1], [3e38, -3e38], [1.5e38, 1.5e38, 1.5e38, -1.5e38],
        [1, 2, 3, 4, 5, 6, 7, 8, 3e38, -3e38, 1, 1, 1, 1, 1, 1, 1], [3e38, -3e38] + [0] * 14,
        [1e30 * (k % 3 - 1) for k in range(40)], [0.0] * 5, [7.0] * 9, [1e-30, -1e-30, 2e-30],
    ]
    rows = [(r, None) for r in big]
    for n in (1, 3, 7, 8, 9, 16, 17, 127, 128, 129, 256, 300, 1024):
        x = torch.randn(n, generator=g) * 3 + 1
        rows.append((x.tolist(), None))
        rows.append(((x * 1e18).tolist(), None))
    for n in (4, 24):
        x = torch.randn(n, generator=g)
        rows.append((x.tolist(), (torch.randn(n, generator=g).tolist(), torch.randn(n, generator=g).tolist())))
    cases = []
    for x, wb in rows:
        ln = torch.nn.LayerNorm(len(x), eps=1e-5)
        if wb is not None:
            with torch.no_grad():
                ln.weight.copy_(torch.tensor(wb[0]))
                ln.bias.copy_(torch.tensor(wb[1]))
        xt = torch.tensor(x, dtype=torch.float32)
        y = ln(xt[None])[0].detach()
        case = {"x": tensor_json(xt), "y": tensor_json(y)}
        if wb is not None:
            case["weight"] = tensor_json(ln.weight.detach())
            case["bias"] = tensor_json(ln.bias.detach())
        cases.append(case)
    write_text(os.path.join(out_dir, "layernorm-edges.json"),
               to_json({"torch": torch.__version__, "eps": 1e-5, "cases": cases}) + "\n")
    print("%-24s %d rows" % ("layernorm-edges", len(cases)))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=REF_DIR, help="output directory (default tests/ref)")
    ap.add_argument("--precision", action="store_true",
                    help="also print float32-vs-float64 deviation per stage")
    args = ap.parse_args()

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    ok = True
    for var in variants():
        stages = var.run()
        lesson_text = var.lesson_file_text()
        lpath = os.path.join(args.out, var.name + ".lesson.json")
        epath = os.path.join(args.out, var.name + ".expected.json")
        write_text(lpath, lesson_text)
        write_text(epath, expected_json(json.loads(lesson_text)["title"], stages))

        # read both files back: the lesson must reproduce the stages bit for bit,
        # and the expected file must hold them exactly
        with open(lpath, encoding="utf-8") as f:
            again = run_lesson(json.load(f))
        with open(epath, encoding="utf-8") as f:
            exp = json.load(f)["stages"]
        names = [n for n, _ in stages]
        if [n for n, _ in again] != names:
            print("%s: stage list differs on re-run" % var.name)
            ok = False
        again = dict(again)
        for (name, t), e in zip(stages, exp):
            et = torch.tensor([float(x) for x in e["data"]], dtype=torch.float32).view(e["shape"])
            if e["name"] != name or not same_bits(t, et):
                print("%s: %s does not round-trip through the expected file" % (var.name, name))
                ok = False
            if not same_bits(t, again[name]):
                print("%s: %s differs when re-run from the lesson file" % (var.name, name))
                ok = False
        # (a local/global pattern's layers differ by design: no one-layer lesson is one of them)
        if int(var.model_json.get("n_layers", 1)) > 1 and "layer_types" not in var.model_json:
            for what in layer_by_layer(json.loads(lesson_text), stages):
                print("%s: %s differs from the one-layer lessons" % (var.name, what))
                ok = False
        print("%-24s %s" % (var.name, " ".join(names)))

        if args.precision:
            d64 = dict(var.run(torch.float64))
            worst = []
            for name, t in stages:
                a, b = t.double(), d64[name]
                fin = torch.isfinite(a) & torch.isfinite(b)
                err = (a[fin] - b[fin]).abs()
                rel = err / (1e-5 + 1e-4 * b[fin].abs())
                worst.append("%s %.1e (%.2f tol)" % (name, float(err.max()) if err.numel() else 0.0,
                                                     float(rel.max()) if rel.numel() else 0.0))
            print("    f32 vs f64 max|err| (fraction of atol 1e-5 + rtol 1e-4):")
            print("      " + ", ".join(worst))
    ok = layernorm_edges(args.out) and ok
    ok = from_torch_references(args.out) and ok
    ok = lesson_references(os.path.join(args.out, "lessons")) and ok
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
