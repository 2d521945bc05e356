#!/usr/bin/python3
"""lessons/from_torch.py against PyTorch, through attnviz --dump.

For each case: build a module (torch.nn.MultiheadAttention in its variants, the
custom modules of gen_reference.py that mirror the reference variants, and
hand-written modules in other common naming styles), convert it with
lesson_from_module(), write the lesson, run `attnviz --dump LESSON`, and compare
with what torch computed: `output` and the per-head `attn` (for
nn.MultiheadAttention: need_weights=True, average_attn_weights=False), plus every
other stage torch exposes (mha_reference_stages / the reference modules' traces),
with atol 1e-5, rtol 1e-4 and NaN at the same places.  Also checks the lesson's
mask form and that unsupported modules and masks are rejected with a clear message.

Usage (from the repo root; needs torch, so not part of CI):
    /usr/bin/python3 tests/from_torch_check.py [--binary build/attnviz] [-v] [--keep DIR]
Prints "N passed, M failed" and exits 1 if anything failed.
"""

import argparse
import contextlib
import io
import math
import os
import sys
import tempfile
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True          # no __pycache__ in lessons/ or tests/
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "lessons"))
import check_random as cr  # noqa: E402
import gen_reference as ref  # noqa: E402
import from_torch as ft  # noqa: E402
import torch_modules as tm  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def halves(*shape):
    """Random multiples of 0.5 (exact in float32, readable in the lesson)."""
    return torch.randint(-5, 6, shape).float() / 2


def randomise_biases(mha):
    with torch.no_grad():
        if mha.in_proj_bias is not None:
            mha.in_proj_bias.uniform_(-0.5, 0.5)
        if mha.out_proj.bias is not None:
            mha.out_proj.bias.uniform_(-0.5, 0.5)
    return mha


def triu_bool(Lq, Lk):
    return torch.triu(torch.ones(Lq, Lk, dtype=torch.bool), diagonal=1)


# ----------------------------------------------------------------------------
# torch.nn.MultiheadAttention
# ----------------------------------------------------------------------------

def mha_case(name, E=4, H=2, B=2, Lq=4, Lk=None, batch_first=True, bias=True, cross=False,
             attn_mask=None, kpm=None, unbatched=False, seed=0, want_mask=None, **kw):
    """Returns a case dict: module, call kwargs for lesson_from_module, torch stages."""
    torch.manual_seed(seed)
    Lk = Lk or Lq
    mha = randomise_biases(nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first))

    def shape(L):
        if unbatched:
            return (L, E)
        return (B, L, E) if batch_first else (L, B, E)
    q = halves(*shape(Lq))
    k = halves(*shape(Lk)) if cross else None
    v = halves(*shape(Lk)) if cross else None
    am = attn_mask(Lq, Lk) if callable(attn_mask) else attn_mask
    args = dict(query=q, key=k, value=v, key_padding_mask=kpm, **kw)
    args["mask"] = am
    torch_mask = triu_bool(Lq, Lk) if isinstance(am, str) else am
    stages = ref.mha_reference_stages(mha, q, k, v, attn_mask=torch_mask, key_padding_mask=kpm)
    return dict(name=name, module=mha, args=args, stages=stages, want_mask=want_mask)


@case
def mha_batch_first_bias_nomask():
    return mha_case("mha batch_first, bias, no mask", want_mask=None)


@case
def mha_seq_first_bias_causal():
    return mha_case("mha seq-first, bias, bool causal attn_mask", batch_first=False,
                    attn_mask=lambda Lq, Lk: triu_bool(Lq, Lk), want_mask="causal", seed=1)


@case
def mha_batch_first_nobias_causal():
    return mha_case("mha batch_first, no bias, bool causal attn_mask", bias=False, E=6, H=3, Lq=5,
                    attn_mask=lambda Lq, Lk: triu_bool(Lq, Lk), want_mask="causal", seed=2)


@case
def mha_seq_first_nobias_padding():
    return mha_case("mha seq-first, no bias, key_padding_mask suffix", batch_first=False, bias=False,
                    B=3, Lq=5, kpm=torch.tensor([[False] * 5, [False] * 3 + [True] * 2,
                                                 [False] + [True] * 4]),
                    want_mask={"key_padding": [5, 3, 1]}, seed=3)


@case
def mha_padding_not_suffix():
    kpm = torch.tensor([[False, True, False, False, True], [False] * 5])
    return mha_case("mha key_padding_mask not a suffix -> (B,1,Lk) tensor", Lq=5, kpm=kpm,
                    want_mask=[[[1, 0, 1, 1, 0]], [[1, 1, 1, 1, 1]]], seed=4)


@case
def mha_causal_and_padding():
    return mha_case("mha bool causal + key_padding_mask -> (B,Lq,Lk)", Lq=4, batch_first=False,
                    attn_mask=lambda Lq, Lk: triu_bool(Lq, Lk),
                    kpm=torch.tensor([[False] * 4, [False, False, True, True]]),
                    want_mask=[[[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]],
                               [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]], seed=5)


@case
def mha_float_causal():
    def m(Lq, Lk):
        return torch.zeros(Lq, Lk).masked_fill(triu_bool(Lq, Lk), float("-inf"))
    return mha_case("mha float 0/-inf causal attn_mask", attn_mask=m, want_mask="causal", seed=6)


@case
def mha_bool_general_2d():
    am = torch.tensor([[False, True, False, False], [False, False, True, False],
                       [True, False, False, False], [False, False, False, True]])
    return mha_case("mha bool (Lq,Lk) attn_mask -> 0/1 tensor", attn_mask=am,
                    want_mask=[[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 0]], seed=7)


@case
def mha_3d_mask():
    B, H, L = 2, 2, 4
    per_batch = torch.tensor([[[False, True, True, True], [False, False, True, True],
                               [False, False, False, True], [False, False, False, False]],
                              [[False, False, True, False], [True, False, False, False],
                               [False, False, False, False], [False, True, False, True]]])
    am = per_batch[:, None].expand(B, H, L, L).reshape(B * H, L, L)
    return mha_case("mha (B*H,Lq,Lk) attn_mask equal over heads", attn_mask=am,
                    want_mask=(~per_batch).long().tolist(), seed=8)


@case
def mha_cross_padding():
    return mha_case("mha cross-attention Lq 3, Lk 5, key padding", Lq=3, Lk=5, cross=True,
                    kpm=torch.tensor([[False] * 5, [False] * 3 + [True] * 2]),
                    want_mask={"key_padding": [5, 3]}, seed=9)


@case
def mha_unbatched():
    return mha_case("mha unbatched (L, E) input, causal", unbatched=True, Lq=5, B=1,
                    attn_mask=lambda Lq, Lk: triu_bool(Lq, Lk), want_mask="causal", seed=10)


@case
def mha_unbatched_seq_first_padding():
    return mha_case("mha unbatched, batch_first=False, 1-D key_padding_mask", unbatched=True,
                    batch_first=False, Lq=4, B=1, kpm=torch.tensor([False, False, False, True]),
                    want_mask={"key_padding": [3]}, seed=11)


@case
def mha_fully_masked_row():
    am = torch.tensor([[False, True, False, False], [True, True, True, True],
                       [False, False, False, True], [False, False, False, False]])
    return mha_case("mha fully masked row -> NaN like PyTorch", attn_mask=am,
                    want_mask=[[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], seed=12)


@case
def mha_causal_string():
    return mha_case("mha mask='causal' string", attn_mask="causal", Lq=5, E=8, H=4,
                    want_mask="causal", seed=13)


@case
def mha_fill_override():
    c = mha_case("mha mask_fill=-1e10 override (no fully masked row)", mask_fill=-1e10,
                 attn_mask=lambda Lq, Lk: triu_bool(Lq, Lk), want_mask="causal", seed=14)
    c["stages"] = [(n, t) for n, t in c["stages"] if n != "masked_scores"]   # -1e10, not -inf
    c["want_model"] = {"mask_fill": -1e10}
    return c


@case
def mha_tokens_title():
    c = mha_case("mha tokens, title, steps passed through", Lq=3, B=1,
                 tokens=["a", "b", "c"], title={"en": "T", "zh": "标题"},
                 steps={"softmax": {"en": "rows sum to 1", "zh": "每行和为 1"}}, seed=15)
    c["want_keys"] = {"tokens": ["a", "b", "c"], "title": {"en": "T", "zh": "标题"}}
    return c


# ----------------------------------------------------------------------------
# custom modules: the reference-variant modules of gen_reference.py
# ----------------------------------------------------------------------------

def traced_case(name, module, q, k=None, v=None, mask=None, call_2d=False, want_mask=None, **kw):
    k_ = q if k is None else k
    v_ = k_ if v is None else v
    with torch.no_grad():
        if call_2d:
            module(q[None], k_[None], v_[None], mask)
        else:
            module(q, k_, v_, mask)
    stages = list(module.trace.items())     # with call_2d: (1, L, ...) like attnviz's 2-D input
    args = dict(query=q, key=k, value=v, mask=mask, **kw)
    return dict(name=name, module=module, args=args, stages=stages, want_mask=want_mask)


@case
def ref_fused_padding():
    torch.manual_seed(2)
    m = tm.MultiHeadAttention(8, 2, mask_fill=-1e9)
    x = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).view(2, 1, 1, 5)
    return traced_case("custom fused-padding-mask (w_q..w_o, (B,1,1,Lk) mask)", m, x, mask=mask,
                       want_mask={"key_padding": [3, 5]})


@case
def ref_cross_key_padding():
    torch.manual_seed(3)
    m = tm.MultiHeadAttention(8, 2, mask_fill=-1e10)
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    mask = (torch.arange(5)[None, :] < torch.tensor([5, 3])[:, None]).view(2, 1, 1, 5)
    return traced_case("custom cross-key-padding (bool keep mask, fill -1e10)", m, q, k, v, mask=mask,
                       want_mask={"key_padding": [5, 3]})


@case
def ref_causal_decoder():
    torch.manual_seed(4)
    m = tm.MultiHeadAttention(8, 2, mask_fill=-1e10)
    return traced_case("custom causal-decoder (tril mask -> causal)", m, torch.randn(2, 6, 8),
                       mask=torch.tril(torch.ones(6, 6)), want_mask="causal")


@case
def ref_per_head_causal_neginf():
    torch.manual_seed(5)
    m = tm.PerHeadMultiHeadAttention(6, 3, qkv_bias=False, mask_fill=float("-inf"))
    return traced_case("custom per-head-causal-neginf (ModuleList of heads)", m, torch.randn(2, 5, 6),
                       mask=torch.tril(torch.ones(5, 5)), want_mask="causal")


@case
def ref_per_head_bias_dk_dv():
    torch.manual_seed(55)
    m = tm.PerHeadMultiHeadAttention(6, 2, d_k=2, d_v=3, qkv_bias=True, mask_fill=-1e9)
    return traced_case("custom per-head with biases, d_k 2, d_v 3, no mask", m, torch.randn(2, 4, 6))


@case
def ref_gqa_causal():
    torch.manual_seed(61)
    m = tm.MultiHeadAttention(8, 4, qkv_bias=False, mask_fill=float("-inf"), n_kv_heads=2)
    return traced_case("custom GQA 4/2 (smaller w_k, w_v -> n_kv_heads), causal", m, torch.randn(2, 5, 8),
                       mask=torch.tril(torch.ones(5, 5)), want_mask="causal")


@case
def ref_mqa_dk_dv_bias():
    torch.manual_seed(62)
    m = tm.MultiHeadAttention(12, 3, d_k=2, d_v=4, n_kv_heads=1, mask_fill=-1e9)
    return traced_case("custom MQA 3/1 with biases, d_k 2, d_v 4, no mask", m, torch.randn(2, 4, 12))


@case
def ref_dk_dv():
    torch.manual_seed(6)
    m = tm.MultiHeadAttention(6, 2, d_k=2, d_v=4, qkv_bias=False, out_bias=False)
    return traced_case("custom dk-dv (d_k 2, d_v 4, no biases)", m, torch.randn(2, 4, 6))


@case
def ref_masked_row_1e9():
    torch.manual_seed(7)
    m = tm.MultiHeadAttention(4, 2, mask_fill=-1e9)
    mask = torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]])
    return traced_case("custom masked-row-1e9 (uniform row)", m, torch.randn(2, 4, 4), mask=mask,
                       want_mask=mask.tolist())


@case
def ref_masked_row_neginf():
    torch.manual_seed(7)
    m = tm.MultiHeadAttention(4, 2, mask_fill=float("-inf"))
    mask = torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]])
    return traced_case("custom masked-row-neginf (NaN row)", m, torch.randn(2, 4, 4), mask=mask,
                       want_mask=mask.tolist())


@case
def ref_no_scale():
    torch.manual_seed(8)
    m = tm.MultiHeadAttention(4, 2, scale=1)
    return traced_case("custom no-scale (scale attribute 1)", m, torch.randn(2, 3, 4))


@case
def ref_scale_3():
    torch.manual_seed(8)
    m = tm.MultiHeadAttention(4, 2, scale=3)
    return traced_case("custom scale-3 (scale attribute 3)", m, torch.randn(2, 3, 4))


@case
def ref_no_out_bias_2d():
    torch.manual_seed(9)
    m = tm.MultiHeadAttention(6, 2, qkv_bias=True, out_bias=False)
    x, v = torch.randn(4, 6), torch.randn(4, 6)
    c = traced_case("custom no-out-bias-2d (2-D query, module wants (B,L,C))", m, x, None, v,
                    call_2d=True)
    return c


@case
def ref_ffn_key_padding_attention():
    torch.manual_seed(10)
    m = tm.MultiHeadAttention(8, 4)
    mask = (torch.arange(5)[None, :] < torch.tensor([3, 5])[:, None]).unsqueeze(1).unsqueeze(2)
    return traced_case("custom ffn-key-padding's attention (4 heads)", m, torch.randn(2, 5, 8),
                       mask=mask, want_mask={"key_padding": [3, 5]})


@case
def ref_big_causal():
    torch.manual_seed(11)
    m = tm.MultiHeadAttention(12, 3, mask_fill=-1e9)
    return traced_case("custom big-causal (3x7x12, 3 heads)", m, torch.randn(3, 7, 12),
                       mask=torch.tril(torch.ones(7, 7)), want_mask="causal")


# ----------------------------------------------------------------------------
# custom modules in other naming styles
# ----------------------------------------------------------------------------

def _heads(x, B, L, H, d):
    return x.view(B, L, H, d).transpose(1, 2)


class ProjStyle(nn.Module):
    """q_proj/k_proj/v_proj/out_proj, num_heads; bool attn_mask with True = masked, -inf."""

    def __init__(self, C, H):
        super().__init__()
        self.num_heads, self.head_dim = H, C // H
        self.q_proj, self.k_proj = nn.Linear(C, C), nn.Linear(C, C)
        self.v_proj, self.out_proj = nn.Linear(C, C), nn.Linear(C, C)

    def forward(self, x, attn_mask=None):
        B, L, C = x.shape
        H, d = self.num_heads, self.head_dim
        q, k, v = (_heads(p(x), B, L, H, d) for p in (self.q_proj, self.k_proj, self.v_proj))
        s = q @ k.transpose(-2, -1) / math.sqrt(d)
        if attn_mask is not None:
            s = s.masked_fill(attn_mask, float("-inf"))
        self.attn = F.softmax(s, dim=-1)
        return self.out_proj((self.attn @ v).transpose(1, 2).reshape(B, L, C))


class LucidStyle(nn.Module):
    """to_q/to_k/to_v without bias, to_out = Sequential(Linear, Dropout), heads (int),
    scale = dim_head ** -0.5 as a multiplier, forward(x, context=None, mask=None)."""

    def __init__(self, C, heads, dim_head):
        super().__init__()
        inner = heads * dim_head
        self.heads, self.scale = heads, dim_head ** -0.5
        self.to_q = nn.Linear(C, inner, bias=False)
        self.to_k = nn.Linear(C, inner, bias=False)
        self.to_v = nn.Linear(C, inner, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner, C), nn.Dropout(0.1))

    def forward(self, x, context=None, mask=None):
        context = x if context is None else context
        B, Lq, _ = x.shape
        Lk = context.shape[1]
        h = self.heads
        q = self.to_q(x).view(B, Lq, h, -1).transpose(1, 2)
        k = self.to_k(context).view(B, Lk, h, -1).transpose(1, 2)
        v = self.to_v(context).view(B, Lk, h, -1).transpose(1, 2)
        s = q @ k.transpose(-2, -1) * self.scale
        if mask is not None:                                  # (B, Lk) bool, True = keep
            s = s.masked_fill(~mask[:, None, None, :], -torch.finfo(s.dtype).max)
        self.attn = s.softmax(dim=-1)
        return self.to_out((self.attn @ v).transpose(1, 2).reshape(B, Lq, -1))


class NanoGPTStyle(nn.Module):
    """nanoGPT's CausalSelfAttention: fused c_attn, c_proj, n_head, its own causal mask."""

    def __init__(self, C, n_head, block_size=16):
        super().__init__()
        self.n_head, self.n_embd = n_head, C
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        self.attn = F.softmax(att, dim=-1)
        return self.c_proj((self.attn @ v).transpose(1, 2).contiguous().view(B, T, C))


class WStyle(nn.Module):
    """W_q/W_k/W_v/W_o and h, forward(query, key, value, mask) with mask == 0 masked."""

    def __init__(self, C, h, d_k=None, d_v=None):
        super().__init__()
        self.h = h
        self.d_k = d_k or C // h
        self.d_v = d_v or self.d_k
        self.W_q, self.W_k = nn.Linear(C, h * self.d_k), nn.Linear(C, h * self.d_k)
        self.W_v, self.W_o = nn.Linear(C, h * self.d_v), nn.Linear(h * self.d_v, C)

    def forward(self, query, key, value, mask=None):
        B, Lq, _ = query.shape
        Lk = key.shape[1]
        q = _heads(self.W_q(query), B, Lq, self.h, self.d_k)
        k = _heads(self.W_k(key), B, Lk, self.h, self.d_k)
        v = _heads(self.W_v(value), B, Lk, self.h, self.d_v)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask.unsqueeze(1) == 0, -1e9)
        self.attn = F.softmax(s, dim=-1)
        return self.W_o((self.attn @ v).transpose(1, 2).reshape(B, Lq, -1))


class LinearStyle(nn.Module):
    """linear_q/linear_k/linear_v/linear_out (ESPnet names), no heads attribute."""

    def __init__(self, C, H):
        super().__init__()
        self._H = H
        self.linear_q, self.linear_k = nn.Linear(C, C), nn.Linear(C, C)
        self.linear_v, self.linear_out = nn.Linear(C, C), nn.Linear(C, C)

    def forward(self, query, key, value, mask=None):
        B, Lq, C = query.shape
        Lk = key.shape[1]
        H, d = self._H, C // self._H
        q = _heads(self.linear_q(query), B, Lq, H, d)
        k = _heads(self.linear_k(key), B, Lk, H, d)
        v = _heads(self.linear_v(value), B, Lk, H, d)
        s = q @ k.transpose(-2, -1) / math.sqrt(d)
        if mask is not None:
            s = s + mask                                  # additive float mask 0 / -inf
        self.attn = F.softmax(s, dim=-1)
        return self.linear_out((self.attn @ v).transpose(1, 2).reshape(B, Lq, C))


class OddNames(nn.Module):
    """Names no heuristic knows; passed with names=... ."""

    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.enc = nn.ModuleDict({"a": nn.Linear(C, C), "b": nn.Linear(C, C, bias=False),
                                  "c": nn.Linear(C, C)})
        self.mix = nn.Linear(C, C, bias=False)

    def forward(self, x):
        B, L, C = x.shape
        d = C // self.H
        q = _heads(self.enc["a"](x), B, L, self.H, d)
        k = _heads(self.enc["b"](x), B, L, self.H, d)
        v = _heads(self.enc["c"](x), B, L, self.H, d)
        self.attn = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
        return self.mix((self.attn @ v).transpose(1, 2).reshape(B, L, C))


def style_case(name, module, args, want_mask=None, want_model=None):
    """Torch reference: run the module as from_torch would (its output) and its self.attn."""
    module.eval()
    with torch.no_grad():
        if "forward" in args and args["forward"] is not None:
            k = args["query"] if args.get("key") is None else args["key"]
            out = args["forward"](module, args["query"], k,
                                  k if args.get("value") is None else args["value"], args.get("mask"))
        else:
            call = [args["query"]]
            if isinstance(module, (WStyle, LinearStyle)):
                k = args.get("key")
                k = args["query"] if k is None else k
                v = args.get("value")
                call += [k, k if v is None else v]
            kw = {}
            if args.get("mask") is not None and not isinstance(args["mask"], str):
                kw[{ProjStyle: "attn_mask"}.get(type(module), "mask")] = args["mask"]
            out = module(*call, **kw)
    return dict(name=name, module=module, args=args, want_mask=want_mask, want_model=want_model,
                stages=[("output", out), ("attn", module.attn)])


@case
def style_proj():
    torch.manual_seed(31)
    m = ProjStyle(6, 2)
    am = triu_bool(4, 4)
    return style_case("style q_proj/out_proj, num_heads, mask_convention='masked'", m,
                      dict(query=halves(2, 4, 6), mask=am, mask_convention="masked",
                           mask_fill="-inf"), want_mask="causal")


@case
def style_lucid():
    torch.manual_seed(32)
    m = LucidStyle(4, heads=2, dim_head=3)
    x = halves(2, 5, 4)
    keep = torch.tensor([[True] * 5, [True, True, True, False, False]])
    fwd = (lambda mod, q, k, v, mask: mod(q, mask=mask.view(q.shape[0], -1)))
    return style_case("style to_q/to_out Sequential, heads int, scale multiplier, forward=", m,
                      dict(query=x, mask=keep.view(2, 1, 5), forward=fwd),
                      want_mask={"key_padding": [5, 3]},
                      want_model={"d_model": 4, "n_heads": 2, "d_k": 3, "qkv_bias": False})


@case
def style_nanogpt():
    torch.manual_seed(33)
    m = NanoGPTStyle(6, 3)
    return style_case("style nanoGPT fused c_attn/c_proj, n_head, mask='causal'", m,
                      dict(query=halves(2, 5, 6), mask="causal", mask_fill="-inf"), want_mask="causal")


@case
def style_w_dk_dv_cross():
    torch.manual_seed(34)
    m = WStyle(4, 2, d_k=3, d_v=1)
    q, k, v = halves(2, 3, 4), halves(2, 5, 4), halves(2, 5, 4)
    mask = torch.tensor([[[1, 1, 1, 0, 1]], [[1, 0, 1, 1, 1]]])      # (B, 1, Lk), 0 = masked
    return style_case("style W_q/W_o, h, cross, d_k 3 / d_v 1, (B,1,Lk) non-suffix mask", m,
                      dict(query=q, key=k, value=v, mask=mask), want_mask=mask.tolist(),
                      want_model={"d_model": 4, "n_heads": 2, "d_k": 3, "d_v": 1})


@case
def style_linear_additive():
    torch.manual_seed(35)
    m = LinearStyle(4, 2)
    x = halves(1, 4, 4)
    add = torch.zeros(4, 4).masked_fill(triu_bool(4, 4), float("-inf"))
    return style_case("style linear_q/linear_out, n_heads=, mask_convention='additive'", m,
                      dict(query=x, mask=add, n_heads=2, mask_convention="additive"),
                      want_mask="causal", want_model={"mask_fill": "-inf"})


@case
def style_odd_names():
    torch.manual_seed(36)
    m = OddNames(4, 2)
    return style_case("style names={...} for unknown attribute names, mixed biases", m,
                      dict(query=halves(2, 3, 4), n_heads=2,
                           names={"q": "enc.a", "k": "enc.b", "v": "enc.c", "o": "mix"}),
                      want_model={"d_model": 4, "n_heads": 2, "out_bias": False})


# ----------------------------------------------------------------------------
# rejections: each must raise ValueError mentioning the given text
# ----------------------------------------------------------------------------

class NoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(4, 4), nn.Linear(4, 4)
        self.v_proj, self.out_proj = nn.Linear(4, 4), nn.Linear(4, 4)


class KdimModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads = 2
        self.q_proj, self.k_proj = nn.Linear(4, 4), nn.Linear(6, 4)
        self.v_proj, self.out_proj = nn.Linear(6, 4), nn.Linear(4, 4)


class NoLinears(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_heads = 2
        self.conv = nn.Conv1d(4, 4, 1)


REJECTIONS = [
    ("mha kdim != embed_dim", lambda: (nn.MultiheadAttention(4, 2, kdim=6, vdim=6), dict(
        query=torch.randn(1, 3, 4), key=torch.randn(1, 3, 6), value=torch.randn(1, 3, 6))), "kdim"),
    ("mha add_bias_kv", lambda: (nn.MultiheadAttention(4, 2, add_bias_kv=True),
                                 dict(query=torch.randn(3, 1, 4))), "add_bias_kv"),
    ("mha add_zero_attn", lambda: (nn.MultiheadAttention(4, 2, add_zero_attn=True),
                                   dict(query=torch.randn(3, 1, 4))), "add_zero_attn"),
    ("mha float mask with -1e4", lambda: (nn.MultiheadAttention(4, 2), dict(
        query=torch.randn(3, 1, 4), mask=torch.tensor([[0., -1e4, 0.], [0., 0., 0.], [0., 0., 0.]]))),
     "only 0 (attend) and -inf"),
    ("mha float mask with a bias (ALiBi-like)", lambda: (nn.MultiheadAttention(4, 2), dict(
        query=torch.randn(3, 1, 4), mask=-torch.arange(9.).view(3, 3))), "-inf"),
    ("mha 3-D mask differing per head", lambda: (nn.MultiheadAttention(4, 2), dict(
        query=torch.randn(3, 1, 4),
        mask=torch.stack([triu_bool(3, 3), torch.zeros(3, 3, dtype=torch.bool)]))),
     "differs between heads"),
    ("mha wrong attn_mask shape", lambda: (nn.MultiheadAttention(4, 2), dict(
        query=torch.randn(3, 1, 4), mask=triu_bool(4, 4))), "attn_mask: shape"),
    ("custom without a head count", lambda: (NoHeads(), dict(query=torch.randn(1, 3, 4))),
     "number of heads"),
    ("custom with kdim != d_model", lambda: (KdimModule(), dict(
        query=torch.randn(1, 3, 4), key=torch.randn(1, 3, 6), check=False)), "kdim = vdim = d_model"),
    ("custom without linears", lambda: (NoLinears(), dict(query=torch.randn(1, 3, 4))), "nn.Linear"),
    ("custom n_heads not dividing", lambda: (ProjStyle(6, 2), dict(query=torch.randn(1, 3, 6),
                                                                   n_heads=4)), "does not divide"),
    ("custom keep-mask that is not 0/1", lambda: (tm.MultiHeadAttention(4, 2), dict(
        query=torch.randn(1, 3, 4), mask=torch.full((3, 3), 0.5))), "must be 0/1"),
    ("custom module the lesson cannot reproduce (no mask given to a causal module)",
     lambda: (NanoGPTStyle(4, 2), dict(query=torch.randn(1, 4, 4))), "does not reproduce"),
]


# ----------------------------------------------------------------------------

def run_case(c, binary, work, keep):
    problems = []
    lesson = ft.lesson_from_module(c["module"], **c["args"])
    path = os.path.join(work, "lesson.json")
    ft.save_lesson(lesson, path)
    want_mask = c.get("want_mask")
    if lesson.get("mask") != want_mask:
        problems.append("lesson mask %r, want %r" % (lesson.get("mask"), want_mask))
    for key, val in (c.get("want_model") or {}).items():
        if lesson["model"].get(key) != val:
            problems.append("model.%s = %r, want %r" % (key, lesson["model"].get(key), val))
    for key, val in (c.get("want_keys") or {}).items():
        if lesson.get(key) != val:
            problems.append("%s = %r, want %r" % (key, lesson.get(key), val))
    got, err = cr.run_binary(binary, path, 20)
    if err:
        problems.append(err)
    else:
        names = [n for n, _ in c["stages"]]
        if "output" not in names or "attn" not in names:
            problems.append("no torch output/attn to compare with (test bug)")
        for name, t in c["stages"]:
            if t.dim() == 2 and got.get(name) and len(got[name]["shape"]) == 3:
                t = t.unsqueeze(0)
            msg = cr.compare_stage(name, t.detach(), got.get(name))
            if msg:
                problems.append(msg)
    if problems and keep:
        os.makedirs(keep, exist_ok=True)
        kept = os.path.join(keep, "%03d.json" % (CASES.index(c["fn"]) if "fn" in c else 0))
        ft.save_lesson(lesson, kept)
        problems.append("lesson kept: " + kept)
    return problems


def main():
    ap = argparse.ArgumentParser(description="lessons/from_torch.py vs PyTorch via attnviz --dump")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "attnviz"))
    ap.add_argument("--keep", help="keep the lessons of failing cases in this directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        print("binary not found or not executable: %s (run make, or pass --binary)" % args.binary)
        sys.exit(2)
    torch.set_num_threads(1)
    work = tempfile.mkdtemp(prefix="attnviz-from-torch-")
    passed = failed = 0
    for fn in CASES:
        name = fn.__name__
        try:
            c = fn()
            c["fn"] = fn
            name = c["name"]
            problems = run_case(c, args.binary, work, args.keep)
        except Exception as e:
            problems = ["%s: %s" % (type(e).__name__, e)]
            if args.verbose:
                traceback.print_exc()
        if problems:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            passed += 1
            if args.verbose:
                print("ok   %s" % name)
    for name, make, text in REJECTIONS:
        try:
            module, kw = make()
            q = kw.pop("query")
            ft.lesson_from_module(module, q, **kw)
            msg = "accepted, want a ValueError mentioning %r" % text
        except ValueError as e:
            msg = None if text in str(e) else "message %r does not mention %r" % (str(e), text)
            if msg is None and args.verbose:
                print("ok   rejects %s: %s" % (name, e))
        except Exception as e:
            msg = "%s instead of ValueError: %s" % (type(e).__name__, e)
        if msg:
            failed += 1
            print("FAIL rejects %s: %s" % (name, msg))
        else:
            passed += 1
    # the demo command line
    out = os.path.join(work, "demo.json")
    for kind in ("mha", "custom"):
        with contextlib.redirect_stdout(io.StringIO()):
            rc = ft.main(["--demo", out, "--kind", kind])
        got, err = cr.run_binary(args.binary, out, 20) if rc == 0 else (None, "exit %d" % rc)
        if err:
            failed += 1
            print("FAIL demo --kind %s: %s" % (kind, err))
        else:
            passed += 1
    for f in os.listdir(work):
        os.remove(os.path.join(work, f))
    os.rmdir(work)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
