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
After writing, every lesson file is read back, interpreted by resolve_lesson()
(an independent reading of the lesson format) and re-run; the result must be
bit-identical to the module that produced it, so the lesson really holds what
torch used.  --precision additionally re-runs every variant in float64 and
prints how far float32 is from it per stage (a hint for test tolerances).

check_random.py imports this file for the lesson interpreter and the modules.
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

STAGES = ["attn_norm", "q_proj", "k_proj", "v_proj", "q_heads", "k_heads", "v_heads",
          "q_rope", "k_rope", "position_bias", "scores", "masked_scores", "attn", "head_out",
          "flash_max", "flash_scale", "flash_p", "flash_sum", "flash_acc", "flash_out", "concat", "output",
          "residual_sum", "residual_norm", "ffn_norm", "ffn_gate", "ffn_hidden", "ffn_sum", "ffn_out",
          "cache_k", "cache_v", "decode_scores", "decode_attn", "decode_output"]

# index order of the deterministic init generator
INIT_ORDER = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o",
              "ffn_w1", "ffn_b1", "ffn_w2", "ffn_b2",
              "norm_weight", "norm_bias", "ffn_norm_weight", "ffn_norm_bias",  # 1 and 0, never drawn
              "ffn_w_gate", "ffn_b_gate", "sinks"]
NORM_NAMES = ["norm_weight", "norm_bias", "ffn_norm_weight", "ffn_norm_bias"]


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


def tensor_json(t):
    """Nested arrays holding exactly the float32 values of t."""
    return t.detach().to(torch.float32).cpu().tolist()


def mask_json(t):
    return (t != 0).to(torch.int64).cpu().tolist()


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
# the deterministic init generator (same as the C program's {"init": {"seed"}})
# ----------------------------------------------------------------------------

_M64 = (1 << 64) - 1
_G = 0x9E3779B97F4A7C15


def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def init_tensor(seed, index, shape, fan_in):
    # each tensor its own stream: a start hashed from the seed and the tensor's index
    s = _mix64((seed ^ _mix64((0xD1B54A32D192ED03 * (index + 1)) & _M64)) & _M64)
    n = int(np.prod(shape)) if len(shape) else 1
    out = np.empty(n, dtype=np.float32)
    inv = math.sqrt(fan_in)
    for i in range(n):
        z = _mix64((s + (i + 1) * _G) & _M64)
        u = (z >> 40) * 2.0 ** -24
        out[i] = np.float32((2.0 * u - 1.0) / inv)
    return torch.from_numpy(out.reshape(shape))


# ----------------------------------------------------------------------------
# the modules
# ----------------------------------------------------------------------------

# ---- positions and shared K/V heads, as the models write them -----------------

def rotate_half(x):
    """Hugging Face Llama: (x1, x2) -> (-x2, x1) over the two halves of the last dim."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    """GPT-J: each pair (x[2i], x[2i+1]) -> (-x[2i+1], x[2i])."""
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rope_inv_freq(dim, theta, scaling=None, seq_len=None):
    """RoPE's frequencies and attention factor, as transformers' modeling_rope_utils
    computes them (_compute_default / _linear_scaling / _dynamic_ntk / _yarn / _llama3
    _parameters, written again here from their definitions): scaling is a lesson's
    model.rope.scaling dict, seq_len the largest position + 1 (dynamic NTK)."""
    def default(base):
        return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if not scaling:
        return default(theta), 1.0
    kind, factor = scaling["type"], float(np.float32(scaling["factor"]))
    if kind == "linear":
        return default(theta) / factor, 1.0
    max_pos = int(scaling["original_max_position_embeddings"])
    if kind == "dynamic":
        seq_len = seq_len if seq_len is not None and seq_len > max_pos else max_pos
        base = theta * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
        return default(float(np.float32(base))), 1.0
    if kind == "llama3":
        inv_freq = default(theta)
        low, high = float(np.float32(scaling.get("low_freq_factor", 1))), float(np.float32(scaling.get("high_freq_factor", 4)))
        low_freq_wavelen, high_freq_wavelen = max_pos / low, max_pos / high
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth_factor = (max_pos / wavelen - low) / (high - low)
        smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        return torch.where(is_medium, smoothed, inv_freq_llama), 1.0
    if kind == "yarn":
        beta_fast = float(np.float32(scaling.get("beta_fast", 32)))
        beta_slow = float(np.float32(scaling.get("beta_slow", 1)))
        att = scaling.get("attention_factor")
        att = float(np.float32(att)) if att is not None else (0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0)

        def correction_dim(rot):
            return (dim * math.log(max_pos / (rot * 2 * math.pi))) / (2 * math.log(theta))
        lo = max(math.floor(correction_dim(beta_fast)), 0)
        hi = min(math.ceil(correction_dim(beta_slow)), dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo), 0, 1)
        pos_freqs = theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        extra_factor = 1 - ramp
        return inter * (1 - extra_factor) + extra * extra_factor, float(np.float32(att))
    raise LessonError("model.rope.scaling.type: %s" % kind)


def rope_cos_sin(seq_len, dim, theta, style, dtype=torch.float32, positions=None, scaling=None):
    """cos and sin (L, dim) of pos·theta^(-2i/dim): Llama repeats the frequencies over both
    halves (torch.cat((freqs, freqs))); GPT-J / Meta interleave them (repeat_interleave(2)).
    positions (B, L): Hugging Face's position_ids (cos[position_ids]): (B, L, dim).
    With rope_scaling, its frequencies, and cos and sin times its attention factor."""
    longest = seq_len if positions is None else int(positions.max()) + 1
    inv_freq, att = rope_inv_freq(dim, theta, scaling, longest)
    t = torch.arange(seq_len, dtype=torch.int64).float() if positions is None else positions.float()
    freqs = t[..., None] * inv_freq                     # torch.outer for one row of positions
    emb = torch.cat((freqs, freqs), dim=-1) if style == "half" else freqs.repeat_interleave(2, dim=-1)
    cos, sin = emb.cos(), emb.sin()
    if att != 1.0:
        cos, sin = cos * att, sin * att
    return cos.to(dtype), sin.to(dtype)


def apply_rope(x, theta, style, rotary_dim=None, positions=None, scaling=None):
    """x (B, H, L, d) at positions 0..L-1 (or positions (B, L)): x·cos + rotate(x)·sin on
    the first rotary_dim values, the rest passed through (partial rotary: GPT-NeoX's
    q_rot, q_pass = q[..., :rot], q[..., rot:] and GPT-J's rotary_dim)."""
    rot_d = x.shape[-1] if rotary_dim is None else rotary_dim
    xr, xp = x[..., :rot_d], x[..., rot_d:]
    cos, sin = rope_cos_sin(x.shape[-2], rot_d, theta, style, x.dtype, positions, scaling)
    if positions is not None:                           # (B, L, rot) -> (B, 1, L, rot): every head
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    rot = rotate_half(xr) if style == "half" else rotate_every_two(xr)
    return torch.cat(((xr * cos) + (rot * sin), xp), dim=-1)


def alibi_slopes(n):
    """The ALiBi paper's slopes (Press et al., github.com/ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][:n - closest]


def alibi_bias(n_heads, lq, lk, dtype=torch.float32):
    """(1, H, Lq, Lk): -m_h·(i - j)."""
    m = torch.tensor(alibi_slopes(n_heads), dtype=dtype).view(1, n_heads, 1, 1)
    rel = (torch.arange(lq)[:, None] - torch.arange(lk)[None, :]).to(dtype)
    return -(m * rel)


def flash_attention(q, k, v, scale, bias, mask, fill, block_k):
    """FlashAttention's online softmax over key blocks (Dao et al. 2022), written with
    torch ops: per block m = max(m_old, rowmax(S)), l = l_old·e^(m_old − m) + Σ e^(S − m),
    acc = acc·e^(m_old − m) + e^(S − m)·V; out = acc / l. A max still at −∞ is taken as
    0 for the exponentials (FlashAttention's Check_inf). Returns the running max, the
    rescale e^(m_old − m) and the running sum after each block, (B, H, Lq, n_blocks), every
    tile's p = e^(S − m) side by side (B, H, Lq, Lk), acc after each block (B, H, Lq,
    n_blocks·d_v) and out (B, H, Lq, d_v)."""
    B, H, Lq, dk = q.shape
    Lk = k.shape[2]
    if k.shape[1] != H:
        k = k.repeat_interleave(H // k.shape[1], dim=1)
        v = v.repeat_interleave(H // v.shape[1], dim=1)
    m = torch.full((B, H, Lq, 1), float("-inf"))
    l = torch.zeros(B, H, Lq, 1)
    acc = torch.zeros(B, H, Lq, v.shape[-1])
    ms, ls, alphas, ps, accs = [], [], [], [], []
    for j0 in range(0, Lk, block_k):
        j1 = min(j0 + block_k, Lk)
        s = torch.matmul(q, k[:, :, j0:j1].transpose(-2, -1)) / scale
        if bias is not None:
            s = s + bias[:, :, :, j0:j1]
        if mask is not None:
            mm = torch.as_tensor(mask)
            mm = mm.expand(B, 1, Lq, Lk) if mm.dim() == 4 else mm.expand(B, Lq, Lk).unsqueeze(1)
            s = s.masked_fill(mm[:, :, :, j0:j1] == 0, fill)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        ref = torch.where(torch.isneginf(m_new), torch.zeros_like(m_new), m_new)
        alpha = torch.exp(m - ref)
        p = torch.exp(s - ref)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + torch.matmul(p, v[:, :, j0:j1])
        m = m_new
        ms.append(m)
        ls.append(l)
        alphas.append(alpha)
        ps.append(p)
        accs.append(acc)
    return (torch.cat(ms, dim=-1), torch.cat(alphas, dim=-1), torch.cat(ps, dim=-1), torch.cat(ls, dim=-1),
            torch.cat(accs, dim=-1), acc / l)


def sliding_window_mask(L, W, sinks=0):
    """Mistral: query i sees keys j with i - W < j <= i; StreamingLLM (Xiao et al. 2023,
    "Efficient Streaming Language Models with Attention Sinks") also keeps the first `sinks`
    tokens: j < sinks, j <= i."""
    i = torch.arange(L)[:, None]
    j = torch.arange(L)[None, :]
    return ((j <= i) & ((j > i - W) | (j < sinks))).to(torch.float32)


class MultiHeadAttention(nn.Module):
    """The classic fused multi-head attention (Annotated-Transformer style), with the
    switches of today's decoders: n_kv_heads < n_heads shares each K/V head among a
    group of query heads (GQA; 1 = MQA) through repeat_interleave (Hugging Face's
    repeat_kv), RoPE on the split Q and K, and ALiBi's bias on the scaled scores."""

    def __init__(self, d_model, n_heads, d_k=None, d_v=None, qkv_bias=True,
                 out_bias=True, scale=None, mask_fill=-1e9, n_kv_heads=None, rope=None,
                 alibi=False, flash=None, decode=False, attn_sinks=False):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads or n_heads
        self.d_k = d_k or d_model // n_heads
        self.d_v = d_v or self.d_k
        self.scale = math.sqrt(self.d_k) if scale is None else scale
        self.mask_fill = mask_fill
        self.rope = rope            # None or (theta, "half" | "interleaved"[, rotary_dim])
        self.position_ids = None    # (B, L) RoPE positions (Hugging Face's position_ids), else 0..L-1
        self.alibi = alibi
        self.flash = flash          # None or (block_q, block_k)
        self.decode = decode
        self.w_q = nn.Linear(d_model, n_heads * self.d_k, bias=qkv_bias)
        self.w_k = nn.Linear(d_model, self.n_kv_heads * self.d_k, bias=qkv_bias)
        self.w_v = nn.Linear(d_model, self.n_kv_heads * self.d_v, bias=qkv_bias)
        self.w_o = nn.Linear(n_heads * self.d_v, d_model, bias=out_bias)
        # gpt-oss: a learned logit per head that joins the softmax and takes weight without a value
        self.sinks = nn.Parameter(torch.zeros(n_heads)) if attn_sinks else None
        self.trace = {}

    def softmax(self, s):
        """Softmax over the keys; with sinks as transformers' GptOss eager_attention_forward:
        cat([scores, sink]), minus the max, softmax, the sink's column dropped."""
        if self.sinks is None:
            return F.softmax(s, dim=-1)
        B, H, Lq, _ = s.shape
        sk = self.sinks.reshape(1, -1, 1, 1).expand(B, -1, Lq, -1)
        combined = torch.cat([s, sk], dim=-1)
        combined = combined - combined.max(dim=-1, keepdim=True).values
        return F.softmax(combined, dim=-1)[..., :-1]

    def forward(self, query, key, value, mask=None):
        # mask: broadcastable to (B, H, Lq, Lk), e.g. (B, 1, 1, Lk) or (Lq, Lk); 0 = masked
        tr = self.trace = {}
        B, Lq, _ = query.shape
        Lk = key.size(1)
        H, Hkv = self.n_heads, self.n_kv_heads

        q = self.w_q(query)
        k = self.w_k(key)
        v = self.w_v(value)
        tr["q_proj"], tr["k_proj"], tr["v_proj"] = q, k, v

        q = q.view(B, Lq, H, self.d_k).transpose(1, 2)     # (B, H, Lq, d_k)
        k = k.view(B, Lk, Hkv, self.d_k).transpose(1, 2)   # (B, Hkv, Lk, d_k)
        v = v.view(B, Lk, Hkv, self.d_v).transpose(1, 2)   # (B, Hkv, Lk, d_v)
        tr["q_heads"], tr["k_heads"], tr["v_heads"] = q, k, v

        if self.rope is not None:
            theta, style = self.rope[:2]
            rot_d = self.rope[2] if len(self.rope) > 2 else None
            scaling = self.rope[3] if len(self.rope) > 3 else None
            q = apply_rope(q, theta, style, rot_d, self.position_ids, scaling)
            k = apply_rope(k, theta, style, rot_d, self.position_ids, scaling)
            tr["q_rope"], tr["k_rope"] = q, k
        if Hkv != H:                                        # repeat_kv: head h reads K/V h // (H / Hkv)
            k = k.repeat_interleave(H // Hkv, dim=1)
            v = v.repeat_interleave(H // Hkv, dim=1)

        scores = torch.matmul(q, k.transpose(-2, -1)) / self.scale
        if self.alibi:
            bias = alibi_bias(H, Lq, Lk, scores.dtype)
            tr["position_bias"] = bias
            scores = scores + bias
        tr["scores"] = scores
        if mask is not None:
            scores = scores.masked_fill(mask == 0, self.mask_fill)
        tr["masked_scores"] = scores

        attn = self.softmax(scores)
        tr["attn"] = attn
        x = torch.matmul(attn, v)                          # (B, H, Lq, d_v)
        tr["head_out"] = x
        if self.flash is not None:
            (tr["flash_max"], tr["flash_scale"], tr["flash_p"], tr["flash_sum"], tr["flash_acc"],
             tr["flash_out"]) = flash_attention(
                q, k, v, self.scale, tr.get("position_bias"), mask, self.mask_fill, self.flash[1])
        x = x.transpose(1, 2).contiguous().view(B, Lq, H * self.d_v)
        tr["concat"] = x
        out = self.w_o(x)
        tr["output"] = out
        if self.decode:
            (tr["cache_k"], tr["cache_v"], tr["decode_scores"], tr["decode_attn"],
             tr["decode_output"]) = self.generate(query, mask)
        return out

    def generate(self, x, mask):
        """Token by token with a K/V cache, as a decoder generates (Hugging Face's
        past_key_values): step t projects x[:, t] alone, rotates its q and k to position t,
        appends k and v to the cache and attends over the t + 1 cached positions."""
        B, L, _ = x.shape
        H, Hkv, dk, dv = self.n_heads, self.n_kv_heads, self.d_k, self.d_v
        cache_k = torch.zeros(B, Hkv, 0, dk)
        cache_v = torch.zeros(B, Hkv, 0, dv)
        rows = []
        # each step's one row of scores and its softmax; the keys after t (not cached yet) as the
        # causal pass has them: the fill and 0
        step_s = torch.full((B, H, L, L), self.mask_fill)
        step_a = torch.zeros(B, H, L, L)
        for t in range(L):
            xt = x[:, t:t + 1]                                              # (B, 1, C)
            q = self.w_q(xt).view(B, 1, H, dk).transpose(1, 2)              # (B, H, 1, dk)
            k = self.w_k(xt).view(B, 1, Hkv, dk).transpose(1, 2)
            v = self.w_v(xt).view(B, 1, Hkv, dv).transpose(1, 2)
            if self.rope is not None:
                theta, style = self.rope[:2]
                rot_d = self.rope[2] if len(self.rope) > 2 else None
                scaling = self.rope[3] if len(self.rope) > 3 else None
                pos = None if self.position_ids is None else self.position_ids[:, t:t + 1]
                if pos is None:
                    pos = torch.full((B, 1), t)
                # dynamic NTK's length is the whole text's, as the full pass (the lesson's rule)
                longest = L if self.position_ids is None else int(self.position_ids.max()) + 1
                if scaling and scaling["type"] == "dynamic":
                    inv, _ = rope_inv_freq(rot_d or dk, theta, scaling, longest)
                    freqs = pos.float()[..., None] * inv
                    emb = torch.cat((freqs, freqs), dim=-1) if style == "half" else freqs.repeat_interleave(2, dim=-1)
                    cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)
                    rd = rot_d or dk
                    rot = rotate_half if style == "half" else rotate_every_two
                    q = torch.cat(((q[..., :rd] * cos) + (rot(q[..., :rd]) * sin), q[..., rd:]), dim=-1)
                    k = torch.cat(((k[..., :rd] * cos) + (rot(k[..., :rd]) * sin), k[..., rd:]), dim=-1)
                else:
                    q = apply_rope(q, theta, style, rot_d, pos, scaling)
                    k = apply_rope(k, theta, style, rot_d, pos, scaling)
            cache_k = torch.cat([cache_k, k], dim=2)                        # (B, Hkv, t+1, dk)
            cache_v = torch.cat([cache_v, v], dim=2)
            kk = cache_k.repeat_interleave(H // Hkv, dim=1)
            vv = cache_v.repeat_interleave(H // Hkv, dim=1)
            s = torch.matmul(q, kk.transpose(-2, -1)) / self.scale          # (B, H, 1, t+1)
            if self.alibi:
                s = s + alibi_bias(H, L, L)[:, :, t:t + 1, :t + 1]
            if mask is not None:
                m = torch.as_tensor(mask).expand(B, 1, L, L) if torch.as_tensor(mask).dim() == 4 \
                    else torch.as_tensor(mask).expand(B, L, L).unsqueeze(1)
                s = s.masked_fill(m[:, :, t:t + 1, :t + 1] == 0, self.mask_fill)
            a = self.softmax(s)
            step_s[:, :, t, :t + 1] = s[:, :, 0]
            step_a[:, :, t, :t + 1] = a[:, :, 0]
            o = torch.matmul(a, vv).transpose(1, 2).reshape(B, 1, H * dv)
            rows.append(self.w_o(o))
        return cache_k, cache_v, step_s, step_a, torch.cat(rows, dim=1)

    # lesson <-> module weights
    def load_lesson_weights(self, w):
        with torch.no_grad():
            for name in ["q", "k", "v", "o"]:
                lin = getattr(self, "w_" + name)
                lin.weight.copy_(w["w_" + name])
                if lin.bias is not None:
                    lin.bias.copy_(w["b_" + name])
            if self.sinks is not None:
                self.sinks.copy_(w["sinks"])

    def lesson_weights(self):
        out = {}
        for name in ["q", "k", "v", "o"]:
            lin = getattr(self, "w_" + name)
            out["w_" + name] = tensor_json(lin.weight)
            if lin.bias is not None:
                out["b_" + name] = tensor_json(lin.bias)
        if self.sinks is not None:
            out["sinks"] = tensor_json(self.sinks)
        return out


class Head(nn.Module):
    """One head of self-attention (nanoGPT / "let's build GPT" style)."""

    def __init__(self, d_model, d_k, d_v, bias, scale, mask_fill):
        super().__init__()
        self.query = nn.Linear(d_model, d_k, bias=bias)
        self.key = nn.Linear(d_model, d_k, bias=bias)
        self.value = nn.Linear(d_model, d_v, bias=bias)
        self.scale = scale
        self.mask_fill = mask_fill

    def forward(self, query, key, value, mask=None):
        # mask: broadcastable to (B, Lq, Lk), e.g. a tril (Lq, Lk) buffer
        q = self.query(query)                             # (B, Lq, d_k)
        k = self.key(key)                                 # (B, Lk, d_k)
        v = self.value(value)                             # (B, Lk, d_v)
        wei = q @ k.transpose(-2, -1) / self.scale        # (B, Lq, Lk)
        wei_m = wei if mask is None else wei.masked_fill(mask == 0, self.mask_fill)
        p = F.softmax(wei_m, dim=-1)
        out = p @ v                                       # (B, Lq, d_v)
        return out, (q, k, v, wei, wei_m, p)


class PerHeadMultiHeadAttention(nn.Module):
    """nn.ModuleList of separate heads, outputs concatenated, then a projection."""

    def __init__(self, d_model, n_heads, d_k=None, d_v=None, qkv_bias=False,
                 out_bias=True, scale=None, mask_fill=float("-inf")):
        super().__init__()
        self.n_heads = n_heads
        self.d_k = d_k or d_model // n_heads
        self.d_v = d_v or self.d_k
        scale = math.sqrt(self.d_k) if scale is None else scale
        self.heads = nn.ModuleList([Head(d_model, self.d_k, self.d_v, qkv_bias, scale, mask_fill)
                                    for _ in range(n_heads)])
        self.proj = nn.Linear(n_heads * self.d_v, d_model, bias=out_bias)
        self.trace = {}

    def forward(self, query, key, value, mask=None):
        if mask is not None and mask.dim() == 4:          # (B, 1, Lq|1, Lk) -> per-head form
            mask = mask.squeeze(1)
        results = [h(query, key, value, mask) for h in self.heads]
        outs = [r[0] for r in results]
        parts = list(zip(*[r[1] for r in results]))
        tr = self.trace = {}
        # the per-head code never builds fused q_proj/k_proj/v_proj; stacking its
        # per-head tensors gives the (B, H, L, d) stages
        for name, ts in zip(["q_heads", "k_heads", "v_heads", "scores", "masked_scores", "attn"], parts):
            tr[name] = torch.stack(ts, dim=1)
        tr["head_out"] = torch.stack(outs, dim=1)
        concat = torch.cat(outs, dim=-1)
        tr["concat"] = concat
        out = self.proj(concat)
        tr["output"] = out
        return out

    def load_lesson_weights(self, w):
        dk, dv = self.d_k, self.d_v
        with torch.no_grad():
            for h, head in enumerate(self.heads):
                for lin, wn, bn, d in [(head.query, "w_q", "b_q", dk), (head.key, "w_k", "b_k", dk),
                                       (head.value, "w_v", "b_v", dv)]:
                    lin.weight.copy_(w[wn][h * d:(h + 1) * d])
                    if lin.bias is not None:
                        lin.bias.copy_(w[bn][h * d:(h + 1) * d])
            self.proj.weight.copy_(w["w_o"])
            if self.proj.bias is not None:
                self.proj.bias.copy_(w["b_o"])

    def lesson_weights(self):
        """w_q/w_k/w_v in the per-head rank-3 (H, d, d_model) form."""
        out = {}
        for attr, wn, bn in [("query", "w_q", "b_q"), ("key", "w_k", "b_k"), ("value", "w_v", "b_v")]:
            lins = [getattr(h, attr) for h in self.heads]
            out[wn] = tensor_json(torch.stack([l.weight for l in lins]))
            if lins[0].bias is not None:
                out[bn] = tensor_json(torch.stack([l.bias for l in lins]))
        out["w_o"] = tensor_json(self.proj.weight)
        if self.proj.bias is not None:
            out["b_o"] = tensor_json(self.proj.bias)
        return out


class RMSNorm(nn.Module):
    """transformers' LlamaRMSNorm (Debian's torch 1.13 has no nn.RMSNorm):
    weight * (x * rsqrt(mean(x^2, -1) + eps))."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class AttentionBlock(nn.Module):
    """Attention, then the optional residual and norms, then the optional position-wise FFN.

    Post-norm (nn.TransformerEncoderLayer's default, "Attention Is All You Need"):
        z = norm(x + attn(x)); y = norm(z + ffn(z)).
    Pre-norm (norm_first: nn.TransformerEncoderLayer(norm_first=True), GPT-2, and
    transformers' LlamaDecoderLayer.forward):
        s = x + attn(input_layernorm(x)); y = s + mlp(post_attention_layernorm(s)).
    norm "rms": RMSNorm above (transformers' LlamaRMSNorm; PyTorch >= 2.4's nn.RMSNorm).
    activation: F.relu, F.gelu (approximate "none" / "tanh"), or "swiglu" as transformers'
    LlamaMLP: down_proj(silu(gate_proj(x)) * up_proj(x)) (ffn_w1 = up, ffn_w2 = down,
    ffn_w_gate = gate).
    """

    def __init__(self, attn, d_model, residual_norm=False, norm_eps=1e-5, ffn_hidden=0,
                 norm="layer", norm_first=False, activation="relu", ffn_bias=True):
        super().__init__()
        self.attn = attn
        self.norm_kind, self.norm_first, self.activation = norm, norm_first, activation

        def make_norm():
            if norm == "rms":
                return RMSNorm(d_model, norm_eps)
            return nn.LayerNorm(d_model, eps=norm_eps)

        self.norm = make_norm() if residual_norm else None
        self.ffn_hidden = ffn_hidden
        if ffn_hidden:
            self.ffn_w1 = nn.Linear(d_model, ffn_hidden, bias=ffn_bias)
            self.ffn_w2 = nn.Linear(ffn_hidden, d_model, bias=ffn_bias)
            self.ffn_gate = nn.Linear(d_model, ffn_hidden, bias=ffn_bias) if activation == "swiglu" else None
            self.ffn_norm = make_norm()
        self.trace = {}

    def ffn(self, x, tr):
        if self.activation == "swiglu":
            g = F.silu(self.ffn_gate(x))
            tr["ffn_gate"] = g
            h = self.ffn_w1(x) * g
        elif self.activation == "relu":
            h = F.relu(self.ffn_w1(x))
        else:
            h = F.gelu(self.ffn_w1(x), approximate="tanh" if self.activation == "gelu_tanh" else "none")
        tr["ffn_hidden"] = h
        return self.ffn_w2(h)

    def forward(self, query, key, value, mask=None):
        if self.norm_first:
            n1 = self.norm(query)
            out = self.attn(n1, n1, n1, mask)
            tr = self.trace = dict(self.attn.trace)
            tr["attn_norm"] = n1
            s = tr["residual_sum"] = query + out
            if not self.ffn_hidden:
                return s
            n2 = tr["ffn_norm"] = self.ffn_norm(s)
            y = tr["ffn_sum"] = s + self.ffn(n2, tr)
            return y
        out = self.attn(query, key, value, mask)
        tr = self.trace = dict(self.attn.trace)
        x = out
        if self.norm is not None:
            tr["residual_sum"] = out + query
            x = self.norm(tr["residual_sum"])
            tr["residual_norm"] = x
        if self.ffn_hidden:
            tr["ffn_sum"] = self.ffn(x, tr) + x
            y = self.ffn_norm(tr["ffn_sum"])
            tr["ffn_out"] = y
            return y
        return x

    def stages(self):
        return [(n, self.trace[n].detach().clone()) for n in STAGES if n in self.trace]

    def load_lesson_weights(self, w):
        self.attn.load_lesson_weights(w)
        with torch.no_grad():
            def norm(m, wn, bn):
                m.weight.copy_(w[wn])
                if self.norm_kind != "rms":
                    m.bias.copy_(w[bn])
            if self.norm is not None:
                norm(self.norm, "norm_weight", "norm_bias")
            if self.ffn_hidden:
                for lin, wn, bn in [(self.ffn_w1, "ffn_w1", "ffn_b1"), (self.ffn_w2, "ffn_w2", "ffn_b2"),
                                    (self.ffn_gate, "ffn_w_gate", "ffn_b_gate")]:
                    if lin is None:
                        continue
                    lin.weight.copy_(w[wn])
                    if lin.bias is not None:
                        lin.bias.copy_(w[bn])
                norm(self.ffn_norm, "ffn_norm_weight", "ffn_norm_bias")

    def lesson_weights(self):
        """Weights for a lesson; norm parameters only when not the default 1/0."""
        out = self.attn.lesson_weights()

        def norm(ln, wn, bn):
            if not torch.all(ln.weight == 1):
                out[wn] = tensor_json(ln.weight)
            if self.norm_kind != "rms" and not torch.all(ln.bias == 0):
                out[bn] = tensor_json(ln.bias)

        if self.norm is not None:
            norm(self.norm, "norm_weight", "norm_bias")
        if self.ffn_hidden:
            for lin, wn, bn in [(self.ffn_w1, "ffn_w1", "ffn_b1"), (self.ffn_w2, "ffn_w2", "ffn_b2"),
                                (self.ffn_gate, "ffn_w_gate", "ffn_b_gate")]:
                if lin is None:
                    continue
                out[wn] = tensor_json(lin.weight)
                if lin.bias is not None:
                    out[bn] = tensor_json(lin.bias)
            norm(self.ffn_norm, "ffn_norm_weight", "ffn_norm_bias")
        return out


def make_block(d_model, n_heads, d_k=None, d_v=None, qkv_bias=True, out_bias=True,
               scale=None, mask_fill=-1e9, residual_norm=False, norm_eps=1e-5,
               ffn_hidden=0, per_head=False, n_kv_heads=None, rope=None, alibi=False, flash=None,
               decode=False, norm="layer", norm_first=False, activation="relu", ffn_bias=True, attn_sinks=False):
    modern = (n_kv_heads not in (None, n_heads)) or rope is not None or alibi or flash or decode or attn_sinks
    if per_head and not modern:
        attn = PerHeadMultiHeadAttention(d_model, n_heads, d_k, d_v, qkv_bias, out_bias, scale, mask_fill)
    else:
        attn = MultiHeadAttention(d_model, n_heads, d_k, d_v, qkv_bias, out_bias, scale, mask_fill,
                                  n_kv_heads, rope, alibi, flash, decode, attn_sinks)
    return AttentionBlock(attn, d_model, residual_norm, norm_eps, ffn_hidden, norm, norm_first, activation,
                          ffn_bias)


def block_output(block):
    """The name of a block's last stage, its output and what the next layer reads: ffn_sum
    (pre-norm) or ffn_out (post-norm) with a feed-forward block, else residual_sum (pre-norm) or
    residual_norm (post-norm), else the attention's output."""
    if block.ffn_hidden:
        return "ffn_sum" if block.norm_first else "ffn_out"
    if block.norm_first:
        return "residual_sum"
    return "residual_norm" if block.norm is not None else "output"


class BlockStack(nn.Module):
    """Several blocks one after another, as nn.TransformerEncoder runs its layers (and GPT-2,
    Llama their decoder layers): layer 0 reads the input, layer l > 0 reads layer l − 1's
    output; every layer attends to its own input under the same mask. A lesson's
    model.n_layers; the stages of layer l are named "l<l>." + the one-layer names."""

    def __init__(self, blocks):
        super().__init__()
        self.layers = nn.ModuleList(blocks)

    @property
    def attn(self):
        return self.layers[0].attn

    def forward(self, query, key, value, mask=None):
        x = query
        for i, block in enumerate(self.layers):
            y = block(x, x, x, mask) if i else block(query, key, value, mask)
            x = block.trace[block_output(block)]
            assert y is x, "the block returns its last stage"
        return x

    def stages(self):
        return [("l%d.%s" % (i, n), t) for i, block in enumerate(self.layers) for n, t in block.stages()]

    def lesson_weights(self):
        return {"layers": [block.lesson_weights() for block in self.layers]}


def init_block(block, seed, layer=0):
    """Sets a block's linear layers (and sinks) from the init generator, as a lesson's
    {"init": {"seed": seed}} does, read from the module itself: layer l's tensor in slot i of
    INIT_ORDER is the generator's tensor i + 64·l, its fan-in the nn.Linear's in_features (1 for
    the sinks). Norms keep their 1 and 0."""
    a = block.attn
    lins = [("w_q", "b_q", a.w_q), ("w_k", "b_k", a.w_k), ("w_v", "b_v", a.w_v), ("w_o", "b_o", a.w_o)]
    if block.ffn_hidden:
        lins += [("ffn_w1", "ffn_b1", block.ffn_w1), ("ffn_w2", "ffn_b2", block.ffn_w2)]
        if block.ffn_gate is not None:
            lins.append(("ffn_w_gate", "ffn_b_gate", block.ffn_gate))
    seed &= _M64
    with torch.no_grad():
        for wn, bn, lin in lins:
            lin.weight.copy_(init_tensor(seed, INIT_ORDER.index(wn) + 64 * layer, tuple(lin.weight.shape),
                                         lin.in_features))
            if lin.bias is not None:
                lin.bias.copy_(init_tensor(seed, INIT_ORDER.index(bn) + 64 * layer, tuple(lin.bias.shape),
                                           lin.in_features))
        if a.sinks is not None:
            a.sinks.copy_(init_tensor(seed, INIT_ORDER.index("sinks") + 64 * layer, tuple(a.sinks.shape), 1))
    return block


class PositionalEncoding(nn.Module):
    """The Annotated Transformer's sinusoidal positions, added to the token embeddings
    (its dropout left out): a buffer pe (1, max_len, d_model)."""

    def __init__(self, d_model, max_len):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, : x.size(1)]


class LanguageModel(nn.Module):
    """A decoder-only language model around a block (or a BlockStack), as nanoGPT writes one:
    token ids -> nn.Embedding (+ learned positions, an nn.Embedding over 0..L-1, or the
    sinusoidal ones) -> the layers -> a final norm (GPT-2's ln_f, Llama's norm) -> lm_head, an
    nn.Linear without bias (or the token embedding's matrix: tied, GPT-2's wte) -> logits,
    softmax(logits / temperature). The stages: token_embed, pos_embed, embedding, the layers',
    final_norm, logits, probs."""

    def __init__(self, body, vocab_size, d_model, positions="none", max_positions=None, seq_len=None,
                 final_norm=True, norm="layer", norm_eps=1e-5, tie=False, temperature=1.0):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.positions = positions
        self.pos = nn.Embedding(max_positions, d_model) if positions == "learned" else \
            PositionalEncoding(d_model, seq_len) if positions == "sinusoidal" else None
        self.body = body
        self.norm_kind = norm
        self.final_norm = (RMSNorm(d_model, norm_eps) if norm == "rms" else nn.LayerNorm(d_model, eps=norm_eps)) \
            if final_norm else None
        self.lm_head = None if tie else nn.Linear(d_model, vocab_size, bias=False)
        self.temperature = temperature
        self.trace = {}

    def forward(self, ids, mask=None):
        tr = self.trace = {}
        B, L = ids.shape
        x = tr["token_embed"] = self.tok(ids)
        if self.pos is not None:
            p = self.pos(torch.arange(L)).unsqueeze(0) if self.positions == "learned" else self.pos(x)
            tr["pos_embed"] = p.expand(B, L, -1)
            x = tr["embedding"] = x + p
        x = self.body(x, x, x, mask)
        if self.final_norm is not None:
            x = tr["final_norm"] = self.final_norm(x)
        logits = tr["logits"] = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.tok.weight)
        tr["probs"] = F.softmax(logits / self.temperature, dim=-1)
        return logits

    def stages(self):
        def own(names):
            return [(n, self.trace[n].detach().clone()) for n in names if n in self.trace]
        return own(["token_embed", "pos_embed", "embedding"]) + self.body.stages() + \
            own(["final_norm", "logits", "probs"])


def init_lm(lm, seed):
    """The language model's own tensors from the init generator, as a lesson's {"init": {"seed"}}:
    the token embedding tensor 1000 and learned positions 1001 (fan-in 1), lm_head 1002 (fan-in
    d_model); the final norm keeps its 1 and 0."""
    seed &= _M64
    with torch.no_grad():
        lm.tok.weight.copy_(init_tensor(seed, 1000, tuple(lm.tok.weight.shape), 1))
        if lm.positions == "learned":
            lm.pos.weight.copy_(init_tensor(seed, 1001, tuple(lm.pos.weight.shape), 1))
        if lm.lm_head is not None:
            lm.lm_head.weight.copy_(init_tensor(seed, 1002, tuple(lm.lm_head.weight.shape),
                                                lm.lm_head.in_features))
    return lm


# ----------------------------------------------------------------------------
# lesson interpreter (independent of the modules above)
# ----------------------------------------------------------------------------

class LessonError(Exception):
    pass


def parse_tensor(v, what):
    if isinstance(v, dict):
        shape = [int(s) for s in v["shape"]]
        if "data" in v:
            arr = np.asarray(v["data"], dtype=np.float64)
        elif "arange" in v:
            a = v["arange"]
            step = a[2] if len(a) > 2 else 1
            arr = np.arange(a[0], a[1], step, dtype=np.float64)
        else:
            raise LessonError("%s: tensor object needs data or arange" % what)
        if arr.size != int(np.prod(shape)):
            raise LessonError("%s: %d values for shape %s" % (what, arr.size, shape))
        arr = arr.reshape(shape)
    else:
        arr = np.asarray(v, dtype=np.float64)
    return torch.from_numpy(arr.astype(np.float32))


# ---- language-model lessons: a vocab, token ids in, logits and probabilities out ----------

LM_MODEL_KEYS = ["positions", "max_positions", "final_norm", "tie_embeddings", "temperature"]
LM_WEIGHTS = ["embed", "pos_embed", "final_norm_weight", "final_norm_bias", "lm_head"]
LM_INIT_INDEX = {"embed": 1000, "pos_embed": 1001, "lm_head": 1002}   # the generator's tensor index


def tokenize(text, vocab, tokenizer, what):
    """A text's token ids. "char": each Unicode character (each code point, as Python iterates a
    str: a JSON surrogate pair is one character, a combining accent its own) is one token; "word":
    the text split on the space character alone, text.split(" ") with the empty pieces of repeated,
    leading or trailing spaces dropped (a tab or newline stays inside its word). Every piece must
    be a vocab entry."""
    if not isinstance(text, str):
        raise LessonError("%s: a string" % what)
    pieces = list(text) if tokenizer == "char" else [w for w in text.split(" ") if w != ""]
    index = {s: i for i, s in enumerate(vocab)}
    for piece in pieces:
        if piece not in index:
            raise LessonError("%s: %s is not in the vocab" % (what, json.dumps(piece, ensure_ascii=False)))
    return [index[piece] for piece in pieces]


def resolve_lm_input(lesson, d_model):
    """The vocab, the token ids (B, L) from input.text or input.ids, and model's language-model keys."""
    vocab = lesson["vocab"]
    if not isinstance(vocab, list) or not 1 <= len(vocab) <= 1024 or \
            not all(isinstance(s, str) and s != "" for s in vocab):
        raise LessonError("vocab: 1 to 1024 non-empty strings")
    if len(set(vocab)) != len(vocab):
        raise LessonError("vocab: the strings must be distinct")
    tokenizer = lesson.get("tokenizer", "char")
    if tokenizer not in ("char", "word"):
        raise LessonError("tokenizer: char or word")
    if "tokens" in lesson:
        raise LessonError("tokens: a language-model lesson's labels are its vocab strings")
    inp = lesson["input"]
    for key in inp:
        if key not in ("text", "ids", "position_ids"):
            raise LessonError("input.%s: with a vocab the input is text or ids" % key)
    if ("text" in inp) == ("ids" in inp):
        raise LessonError("input: text or ids, one of them")
    if "text" in inp:
        texts = inp["text"] if isinstance(inp["text"], list) else [inp["text"]]
        rows = [tokenize(t, vocab, tokenizer, "input.text[%d]" % i if isinstance(inp["text"], list) else "input.text")
                for i, t in enumerate(texts)]
    else:
        rows = inp["ids"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise LessonError("input.ids: (B, L) whole numbers")
        for r in rows:
            for i in r:
                if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(vocab):
                    raise LessonError("input.ids: whole numbers 0..%d" % (len(vocab) - 1))
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise LessonError("input: every text the same number of tokens, at least one")
    ids = torch.tensor(rows, dtype=torch.int64)
    m = lesson["model"]
    positions = m.get("positions", "none")
    if positions not in ("none", "learned", "sinusoidal"):
        raise LessonError("model.positions: none, learned or sinusoidal")
    L = ids.shape[1]
    max_pos = int(m.get("max_positions", L))
    if positions == "learned" and max_pos < L:
        raise LessonError("model.max_positions: %d is fewer than the %d tokens" % (max_pos, L))
    if positions == "sinusoidal" and d_model % 2:
        raise LessonError("model.positions sinusoidal: d_model must be even")
    temperature = float(np.float32(m.get("temperature", 1)))
    if not temperature > 0:
        raise LessonError("model.temperature: above 0")
    return dict(vocab=vocab, ids=ids, positions=positions, max_positions=max_pos,
                final_norm=bool(m.get("final_norm", True)), tie=bool(m.get("tie_embeddings", False)),
                temperature=temperature)


def sinusoidal_positions(L, C):
    """The Annotated Transformer's PositionalEncoding, (L, C), in float32:
    pe[pos, 2i] = sin(pos·div_i), pe[pos, 2i+1] = cos(pos·div_i), div = exp(2i·(−ln 10000 / C))."""
    pe = torch.zeros(L, C)
    position = torch.arange(0, L).unsqueeze(1).to(torch.float32)
    div = torch.exp(torch.arange(0, C, 2, dtype=torch.float32) * (-math.log(10000.0) / C))
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)
    return pe


def lm_weights(lm, lesson, wj, seed, d_model, norm, eps):
    """Reads the language model's own tensors (weights.embed, pos_embed, final_norm_weight,
    final_norm_bias, lm_head: given, else seeded as tensors 1000, 1001, 1002, the norm's 1 and 0)
    and makes the stages before the layers: token_embed, and with positions pos_embed and
    embedding (B, L, C)."""
    V, C = len(lm["vocab"]), d_model
    P = lm["max_positions"]
    shapes = {"embed": (V, C), "pos_embed": (P, C), "final_norm_weight": (C,), "final_norm_bias": (C,),
              "lm_head": (V, C)}
    used = ["embed"] + (["pos_embed"] if lm["positions"] == "learned" else []) + \
        (["final_norm_weight"] + (["final_norm_bias"] if norm != "rms" else []) if lm["final_norm"] else []) + \
        ([] if lm["tie"] else ["lm_head"])
    w = {}
    for name in LM_WEIGHTS:
        if name in wj:
            if name not in used:
                raise LessonError("weights.%s: this model has no such tensor" % name)
            w[name] = parse_tensor(wj[name], "weights." + name)
        elif name in LM_INIT_INDEX and name in used:
            if seed is None:
                raise LessonError("weights.%s missing" % name)
            w[name] = init_tensor(seed, LM_INIT_INDEX[name], shapes[name], C if name == "lm_head" else 1)
        elif name in used:
            w[name] = (torch.ones if name.endswith("weight") else torch.zeros)(C)
        if name in w and tuple(w[name].shape) != shapes[name]:
            raise LessonError("weights.%s: shape %s, want %s" % (name, list(w[name].shape), list(shapes[name])))
    ids = lm["ids"]
    B, L = ids.shape
    x = w["embed"][ids]                                         # (B, L, C)
    stages = [("token_embed", x)]
    if lm["positions"] != "none":
        pe = w["pos_embed"][:L] if lm["positions"] == "learned" else sinusoidal_positions(L, C)
        pe = pe.unsqueeze(0).expand(B, L, C)
        stages += [("pos_embed", pe), ("embedding", x + pe)]
    lm.update(stages=stages, weights=w, norm=norm, norm_eps=eps,
              w_u=w["embed"] if lm["tie"] else w["lm_head"])


def lm_tail(lm, x):
    """The stages after the last layer's output x: final_norm (LayerNorm or RMSNorm with the
    model's eps), logits = x·W_Uᵀ (lm_head, or embed when tied; no bias) and
    probs = softmax(logits / temperature) over the vocab (a true division by the float32
    temperature, not a product with its reciprocal)."""
    out = []
    if lm["final_norm"]:
        w = lm["weights"]
        if lm["norm"] == "rms":
            x = w["final_norm_weight"] * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + lm["norm_eps"]))
        else:
            x = F.layer_norm(x, x.shape[-1:], w["final_norm_weight"], w["final_norm_bias"], lm["norm_eps"])
        out.append(("final_norm", x))
    logits = torch.matmul(x, lm["w_u"].t())
    out += [("logits", logits), ("probs", F.softmax(logits / lm["temperature"], dim=-1))]
    return out


def resolve_lesson(lesson):
    """Lesson dict -> dict(cfg=..., query, key, value, mask, weights, layers, n_layers, per_head_form):
    layers holds one weights dict a layer (model.n_layers), weights is layer 0's."""
    m = lesson["model"]
    d_model = int(m["d_model"])
    H = int(m["n_heads"])
    d_k = int(m.get("d_k", d_model // H))
    d_v = int(m.get("d_v", d_k))
    qkv_bias = bool(m.get("qkv_bias", True))
    out_bias = bool(m.get("out_bias", True))
    scale = m.get("scale")
    scale = math.sqrt(d_k) if scale is None else float(scale)
    fill = m.get("mask_fill", -1e9)
    fill = float("-inf") if fill == "-inf" else float(fill)
    residual_norm = bool(m.get("residual_norm", False))
    eps = float(m.get("norm_eps", 1e-5))
    ffn = int(m.get("ffn_hidden", 0) or 0)
    norm = m.get("norm", "layer")
    norm_first = bool(m.get("norm_first", False))
    activation = m.get("activation", "relu")
    ffn_bias = bool(m.get("ffn_bias", True))
    attn_sinks = bool(m.get("attn_sinks", False))
    Hkv = int(m.get("n_kv_heads", H))
    if H % Hkv:
        raise LessonError("model.n_kv_heads does not divide n_heads")
    rope = m.get("rope")
    if rope is not None:
        rope = (float(np.float32(rope.get("theta", 10000))), rope.get("style", "half"),
                int(rope.get("rotary_dim", d_k)), rope.get("scaling"))
    alibi = bool(m.get("alibi", False))
    decode = bool(m.get("decode", False))
    flash = m.get("flash")
    if flash is not None:
        flash = (int(flash["block_q"]), int(flash["block_k"]))
    n_layers = m.get("n_layers", 1)
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, float)) or n_layers != int(n_layers) \
            or not 1 <= n_layers <= 8:
        raise LessonError("model.n_layers: a whole number 1..8")
    n_layers = int(n_layers)

    def as3(t, what):
        if t.dim() == 2:
            t = t.unsqueeze(0)
        if t.dim() != 3 or t.shape[-1] != d_model:
            raise LessonError("%s: bad shape %s" % (what, list(t.shape)))
        return t

    inp = lesson["input"]
    lm = resolve_lm_input(lesson, d_model) if "vocab" in lesson else None
    if lm is not None:
        # a language model: the layers read the embedding, made below once the weights are known
        q = k = v = None
        kref = vref = "query"
        B, Lq = lm["ids"].shape
        Lk = Lq
    else:
        for key in LM_MODEL_KEYS:
            if key in m:
                raise LessonError("model.%s: only with a vocab (a language-model lesson)" % key)
        q = as3(parse_tensor(inp["query"], "input.query"), "input.query")
        kref = inp.get("key", "query")
        k = q if kref == "query" else as3(parse_tensor(kref, "input.key"), "input.key")
        vref = inp.get("value", "key")
        v = {"query": q, "key": k}.get(vref) if isinstance(vref, str) else \
            as3(parse_tensor(vref, "input.value"), "input.value")
        B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
    if n_layers > 1 and (not isinstance(kref, str) or not isinstance(vref, str)):
        raise LessonError("model.n_layers > 1: self-attention only (a layer reads the one before), "
                          "no input.key / input.value tensors")

    mj = lesson.get("mask")
    if mj is None:
        mask = None
    elif mj == "causal":
        mask = torch.tril(torch.ones(Lq, Lk))
    elif isinstance(mj, dict) and "causal" in mj:
        # "top_left": torch.tril, as SDPA's is_causal; "bottom_right": FlashAttention >= 2.1's
        # alignment for Lq != Lk (flash_attn_func(causal=True)): query i sees keys j <= i + Lk - Lq
        if mj["causal"] not in ("top_left", "bottom_right"):
            raise LessonError("mask.causal: expected top_left or bottom_right")
        mask = torch.tril(torch.ones(Lq, Lk), diagonal=Lk - Lq if mj["causal"] == "bottom_right" else 0)
    elif isinstance(mj, dict) and "sliding_window" in mj:
        mask = sliding_window_mask(Lq, int(mj["sliding_window"]), int(mj.get("sink_tokens", 0)))
    elif isinstance(mj, dict) and "key_padding" in mj:
        lens = torch.tensor([int(x) for x in mj["key_padding"]])
        if lens.numel() != B:
            raise LessonError("mask.key_padding: need %d lengths" % B)
        mask = (torch.arange(Lk)[None, :] < lens[:, None]).view(B, 1, 1, Lk)
    else:
        mt = parse_tensor(mj, "mask")
        if mt.dim() == 4:
            if mt.shape[1] != 1:
                raise LessonError("mask: rank-4 mask needs dim 1 == 1")
            mask = mt.expand(B, 1, Lq, Lk)
        else:
            mask = mt.expand(B, Lq, Lk).unsqueeze(1)

    shapes = {"w_q": (H * d_k, d_model), "b_q": (H * d_k,), "w_k": (Hkv * d_k, d_model),
              "b_k": (Hkv * d_k,), "w_v": (Hkv * d_v, d_model), "b_v": (Hkv * d_v,),
              "w_o": (d_model, H * d_v), "b_o": (d_model,), "ffn_w1": (ffn, d_model),
              "ffn_b1": (ffn,), "ffn_w2": (d_model, ffn), "ffn_b2": (d_model,),
              "ffn_w_gate": (ffn, d_model), "ffn_b_gate": (ffn,), "sinks": (H,)}
    fan_in = {n: d_model for n in ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "ffn_w1", "ffn_b1",
                                   "ffn_w_gate", "ffn_b_gate"]}
    fan_in.update({"w_o": H * d_v, "b_o": H * d_v, "ffn_w2": ffn, "ffn_b2": ffn, "sinks": 1})
    needed = ["w_q", "w_k", "w_v", "w_o"]
    if qkv_bias:
        needed += ["b_q", "b_k", "b_v"]
    if out_bias:
        needed += ["b_o"]
    if attn_sinks:
        needed += ["sinks"]
    if ffn:
        needed += ["ffn_w1", "ffn_w2"] + (["ffn_w_gate"] if activation == "swiglu" else [])
        if ffn_bias:
            needed += ["ffn_b1", "ffn_b2"] + (["ffn_b_gate"] if activation == "swiglu" else [])

    # weights: one flat object, or with several layers {"init"} alone or {"layers": [one object a
    # layer], "init"}; layer l's seeded tensor in slot i is the generator's tensor i + 64·l
    wj = lesson["weights"]
    seed = int(wj["init"]["seed"]) & _M64 if "init" in wj else None
    flat = [name for name in wj if name not in ("init", "layers") and name not in LM_WEIGHTS]
    if lm is None:
        for name in LM_WEIGHTS:
            if name in wj:
                raise LessonError("weights.%s: only with a vocab (a language-model lesson)" % name)
    if "layers" in wj:
        objs = wj["layers"]
        if not isinstance(objs, list) or len(objs) != n_layers:
            raise LessonError("weights.layers: need %d layer objects (model.n_layers)" % n_layers)
        if flat:
            raise LessonError("weights.%s: with weights.layers each tensor goes in its layer's object" % flat[0])
        where = ["weights.layers[%d]." % l for l in range(n_layers)]
    else:
        if n_layers > 1 and flat:
            raise LessonError("weights.%s: with model.n_layers > 1 give weights.layers (or init alone)" % flat[0])
        objs = [{name: wj[name] for name in flat}] * n_layers
        where = ["weights."] * n_layers
    per_head_form = False
    layers = []
    for l, obj in enumerate(objs):
        if not isinstance(obj, dict) or "init" in obj:
            raise LessonError("%s: a layer's object holds tensors only (init stands beside layers)" % where[l][:-1])
        for name in LM_WEIGHTS:
            if name in obj:
                raise LessonError("%s%s: the model's own tensors stand beside weights.layers" % (where[l], name))
        w = {}
        if seed is not None:
            for t, name in enumerate(INIT_ORDER):
                if name in needed:
                    w[name] = init_tensor(seed, t + 64 * l, shapes[name], fan_in[name])
        for name, val in obj.items():
            t = parse_tensor(val, where[l] + name)
            if name in ("w_q", "w_k", "w_v") and t.dim() == 3:
                per_head_form = True
                t = t.reshape(-1, t.shape[-1])
            elif name in ("b_q", "b_k", "b_v") and t.dim() == 2:
                t = t.reshape(-1)
            w[name] = t
        for name in needed:
            if name not in w:
                raise LessonError("%s%s missing" % (where[l], name))
            if tuple(w[name].shape) != shapes[name]:
                raise LessonError("%s%s: shape %s, want %s" % (where[l], name, list(w[name].shape), shapes[name]))
        for name in NORM_NAMES:
            if name not in w:
                w[name] = (torch.ones if name.endswith("weight") else torch.zeros)(d_model)
        layers.append(w)

    cfg = dict(d_model=d_model, n_heads=H, d_k=d_k, d_v=d_v, qkv_bias=qkv_bias,
               out_bias=out_bias, scale=scale, mask_fill=fill, residual_norm=residual_norm,
               norm_eps=eps, ffn_hidden=ffn, n_kv_heads=Hkv, rope=rope, alibi=alibi, flash=flash,
               decode=decode, norm=norm, norm_first=norm_first, activation=activation, ffn_bias=ffn_bias,
               attn_sinks=attn_sinks)
    pos = inp.get("position_ids")
    if pos is not None:
        pos = torch.tensor(pos, dtype=torch.int64)
        pos = pos.expand(B, Lq) if pos.dim() == 1 else pos
    if lm is not None:
        lm_weights(lm, lesson, wj, seed, d_model, norm, eps)
        q = k = v = lm["stages"][-1][1]         # the embedding, or token_embed without positions
    return dict(cfg=cfg, query=q, key=k, value=v, mask=mask, weights=layers[0], layers=layers,
                n_layers=n_layers, per_head_form=per_head_form, position_ids=pos, lm=lm)


def lesson_module(r, per_head):
    """The block of a resolved lesson with its weights, or with model.n_layers > 1 a BlockStack
    of one block a layer."""
    blocks = []
    for w in r["layers"]:
        block = make_block(per_head=per_head, **r["cfg"])
        block.load_lesson_weights(w)
        if r["position_ids"] is not None:
            block.attn.position_ids = r["position_ids"]
        blocks.append(block)
    return blocks[0] if r["n_layers"] == 1 else BlockStack(blocks)


def run_lesson(lesson, per_head=None):
    """Interpret a lesson dict and run it in torch; returns [(stage, tensor)]. A language-model
    lesson (a vocab) runs its embedding and head around the layers, as resolve_lesson and
    lm_tail read them."""
    r = resolve_lesson(lesson)
    if per_head is None:
        per_head = r["per_head_form"]
    module = lesson_module(r, per_head)
    with torch.no_grad():
        y = module(r["query"], r["key"], r["value"], r["mask"])
    if r["lm"] is None:
        return module.stages()
    # a language model: the embedding's stages, the layers, then final_norm, logits, probs
    return r["lm"]["stages"] + module.stages() + lm_tail(r["lm"], y)


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


def variants():
    out = []

    # 1. the classic arange example, weights from the init generator
    les = json.loads(ARANGE_LESSON_TEXT)
    r = resolve_lesson(les)
    block = make_block(4, 2)
    block.load_lesson_weights(r["weights"])
    x = torch.arange(0, 32, dtype=torch.float32).view(2, 4, 4)
    out.append(Variant("arange-2x4x4", les["title"], les["model"], block, x,
                       lesson_text=ARANGE_LESSON_TEXT))

    # 2. classic fused MHA, padding-style (B, 1, 1, Lk) 0/1 mask
    torch.manual_seed(2)
    block = make_block(8, 2, mask_fill=-1e9)
    x = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).view(2, 1, 1, 5)
    out.append(Variant("fused-padding-mask",
                       "Fused multi-head attention with a (B,1,1,Lk) padding mask",
                       {"d_model": 8, "n_heads": 2, "mask_fill": -1e9}, block, x,
                       mask=mask, mask_lesson=mask_json(mask)))

    # 3. cross-attention, separate key and value, key_padding lengths
    torch.manual_seed(3)
    block = make_block(8, 2, mask_fill=-1e10)
    q = torch.randn(2, 3, 8)
    k = torch.randn(2, 5, 8)
    v = torch.randn(2, 5, 8)
    lens = torch.tensor([5, 3])
    mask = (torch.arange(5)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)   # (B,1,1,Lk)
    out.append(Variant("cross-key-padding",
                       {"en": "Cross-attention: 3 queries, 5 keys, key padding",
                        "zh": "交叉注意力：3 个查询、5 个键，键填充掩码"},
                       {"d_model": 8, "n_heads": 2, "mask_fill": -1e10}, block, q, k, v,
                       mask=mask, mask_lesson={"key_padding": [5, 3]}))

    # 3c. RoPE details: a partial rotary dimension (GPT-NeoX's rotate_half on the first
    # rotary_dim values, GPT-J's interleaved rotary_dim), odd head counts, and position_ids:
    # decoding after a prompt of P tokens (P, P+1, ...) and left padding (Hugging Face's
    # position_ids = attention_mask.cumsum(-1) - 1, the pads at 1 as its masked_fill(…, 1))
    torch.manual_seed(32)
    block = make_block(18, 3, rope=(10000.0, "half", 4))
    x = torch.randn(2, 5, 18)
    out.append(Variant("rope-partial-half", "RoPE, rotate_half on 4 of d_k = 6 (partial rotary), 3 heads",
                       {"d_model": 18, "n_heads": 3, "rope": {"style": "half", "rotary_dim": 4}}, block, x))
    torch.manual_seed(33)
    block = make_block(10, 1, d_k=10, d_v=4, rope=(500.0, "interleaved", 6), mask_fill=float("-inf"))
    x = torch.randn(1, 7, 10)
    block.attn.position_ids = torch.arange(7).view(1, 7) + 12         # after a prompt of 12 tokens
    out.append(Variant("rope-interleaved-offset", "RoPE interleaved, rotary_dim 6 of 10, positions 12..18, causal",
                       {"d_model": 10, "n_heads": 1, "d_k": 10, "d_v": 4, "mask_fill": "-inf",
                        "rope": {"theta": 500, "style": "interleaved", "rotary_dim": 6}}, block, x,
                       mask=torch.tril(torch.ones(7, 7)), mask_lesson="causal"))
    torch.manual_seed(34)
    block = make_block(8, 2, n_kv_heads=1, rope=(10000.0, "half"), decode=True)
    x = torch.randn(2, 6, 8)
    am = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]])       # row 1 left-padded by 2
    block.attn.position_ids = (am.cumsum(-1) - 1).masked_fill(am == 0, 1)
    out.append(Variant("rope-left-padding-decode", "RoPE with left padding's position_ids, MQA, KV-cache decoding",
                       {"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "rope": {"style": "half"}, "decode": True},
                       block, x, mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal"))

    # 3d. rope_scaling, Hugging Face's four types, each where it changes the numbers:
    # positions past original_max_position_embeddings (dynamic NTK grows the base there)
    for i, (kind, sc) in enumerate([
            ("linear", {"type": "linear", "factor": 4.0}),
            ("dynamic", {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4}),
            ("yarn", {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 16}),
            ("llama3", {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 16,
                        "low_freq_factor": 1.0, "high_freq_factor": 4.0})]):
        torch.manual_seed(40 + i)
        block = make_block(16, 2, rope=(100.0, "half", 8, sc), mask_fill=float("-inf"))
        x = torch.randn(1, 6, 16)
        block.attn.position_ids = torch.arange(6).view(1, 6) + 3
        out.append(Variant("rope-scaling-" + kind, "RoPE scaling: %s, positions 3..8" % kind,
                           {"d_model": 16, "n_heads": 2, "mask_fill": "-inf",
                            "rope": {"theta": 100, "style": "half", "scaling": sc}}, block, x,
                           mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal"))

    # 3b. causal aligned bottom-right: 3 new tokens after a prompt of 2 attend to all 5
    # positions; FlashAttention >= 2.1 (flash_attn_func(causal=True), its README's example
    # for seqlen_q = 2, seqlen_k = 5) lets query i see keys j <= i + Lk - Lq
    torch.manual_seed(31)
    block = make_block(8, 2)
    x = torch.randn(2, 5, 8)
    q = x[:, 2:].clone()
    mask = torch.tril(torch.ones(3, 5), diagonal=5 - 3)
    out.append(Variant("causal-bottom-right",
                       {"en": "Causal aligned bottom-right: 3 queries after a prompt of 2, 5 keys",
                        "zh": "右下角对齐的因果掩码：提示 2 个词元之后的 3 个查询，5 个键"},
                       {"d_model": 8, "n_heads": 2}, block, q, x, x,
                       mask=mask, mask_lesson={"causal": "bottom_right"}))

    # 4. causal decoder self-attention
    torch.manual_seed(4)
    block = make_block(8, 2, mask_fill=-1e10)
    x = torch.randn(2, 6, 8)
    mask = torch.tril(torch.ones(6, 6))
    out.append(Variant("causal-decoder", "Causal (decoder) self-attention",
                       {"d_model": 8, "n_heads": 2, "mask_fill": -1e10}, block, x,
                       mask=mask, mask_lesson="causal"))

    # 5. per-head modules (ModuleList of heads), causal with -inf
    torch.manual_seed(5)
    block = make_block(6, 3, qkv_bias=False, mask_fill=float("-inf"), per_head=True)
    x = torch.randn(2, 5, 6)
    mask = torch.tril(torch.ones(5, 5))
    out.append(Variant("per-head-causal-neginf",
                       {"en": "Separate head modules (nn.ModuleList), causal mask with -inf",
                        "zh": "每个头一个模块（nn.ModuleList），-inf 因果掩码"},
                       {"d_model": 6, "n_heads": 3, "qkv_bias": False, "mask_fill": "-inf"},
                       block, x, mask=mask, mask_lesson="causal"))

    # 6. d_k != d_v, no attention biases, residual + LayerNorm, FFN
    torch.manual_seed(6)
    block = make_block(6, 2, d_k=2, d_v=4, qkv_bias=False, out_bias=False,
                       residual_norm=True, norm_eps=1e-6, ffn_hidden=12)
    with torch.no_grad():
        for ln in (block.norm, block.ffn_norm):
            ln.weight.copy_(1 + 0.25 * torch.randn(6))
            ln.bias.copy_(0.1 * torch.randn(6))
    x = torch.randn(2, 4, 6)
    out.append(Variant("dk-dv-ffn-norm",
                       "d_k=2 but d_v=4, no biases, residual + LayerNorm, feed-forward",
                       {"d_model": 6, "n_heads": 2, "d_k": 2, "d_v": 4, "qkv_bias": False,
                        "out_bias": False, "residual_norm": True, "norm_eps": 1e-6,
                        "ffn_hidden": 12}, block, x))

    # 6c. StreamingLLM: a sliding window of 3 with the first 2 tokens kept as attention sinks,
    # GQA with RoPE, decoded token by token (the cache's rows 0, 1 and the last 3 are read)
    torch.manual_seed(64)
    block = make_block(8, 2, n_kv_heads=1, rope=(10000.0, "half"), decode=True, mask_fill=float("-inf"))
    x = torch.randn(2, 9, 8)
    out.append(Variant("streaming-sinks-decode", "StreamingLLM: a window of 3 and 2 attention-sink tokens, MQA, RoPE, decoding",
                       {"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "mask_fill": "-inf", "rope": {"style": "half"},
                        "decode": True}, block, x, mask=sliding_window_mask(9, 3, 2),
                       mask_lesson={"sliding_window": 3, "sink_tokens": 2}))

    # 6d. gpt-oss's attention sinks (transformers' GptOssAttention, eager_attention_forward): a
    # learned logit per head joins each softmax and takes weight without a value, so rows sum to
    # less than 1; GQA with RoPE and a sliding window of 3 as gpt-oss's alternate layers, -inf,
    # decoded token by token too. The sinks are set apart (one large, one very negative).
    torch.manual_seed(65)
    block = make_block(8, 4, n_kv_heads=2, rope=(10000.0, "half"), decode=True, mask_fill=float("-inf"),
                       attn_sinks=True)
    with torch.no_grad():
        block.attn.sinks.copy_(torch.tensor([1.5, -0.5, 0.25, -4.0]))
    x = torch.randn(2, 6, 8)
    out.append(Variant("gpt-oss-sinks-decode", "gpt-oss's sink logits: GQA 4/2, RoPE, a window of 3, decoding",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "mask_fill": "-inf", "rope": {"style": "half"},
                        "attn_sinks": True, "decode": True}, block, x, mask=sliding_window_mask(6, 3),
                       mask_lesson={"sliding_window": 3}))
    # ... and in a plain fully masked row (-inf): the sink takes all, the row is 0, not NaN
    torch.manual_seed(66)
    block = make_block(4, 2, mask_fill=float("-inf"), attn_sinks=True)
    with torch.no_grad():
        block.attn.sinks.copy_(torch.tensor([0.0, 2.0]))
    x = torch.randn(1, 3, 4)
    m = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    out.append(Variant("gpt-oss-sinks-masked-row", "gpt-oss's sink logits with a fully masked row (-inf)",
                       {"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "attn_sinks": True}, block, x, mask=m,
                       mask_lesson=[[1, 1, 0], [0, 0, 0], [1, 1, 1]]))

    # 6b. today's blocks. A Llama-style decoder layer (transformers' LlamaDecoderLayer: pre-norm
    # with RMSNorm, GQA with RoPE, no biases, SwiGLU's LlamaMLP), decoded token by token too;
    # pre-norm with LayerNorm and exact GELU, checked against nn.TransformerEncoderLayer(
    # norm_first=True, activation="gelu") with the same weights; post-norm with RMSNorm and
    # GELU's tanh form, odd sizes, key padding.
    def random_norms(block, d):
        with torch.no_grad():
            for ln in (block.norm, block.ffn_norm):
                ln.weight.copy_(1 + 0.25 * torch.randn(d))
                if getattr(ln, "bias", None) is not None:
                    ln.bias.copy_(0.1 * torch.randn(d))

    torch.manual_seed(61)
    block = make_block(8, 4, n_kv_heads=2, qkv_bias=False, out_bias=False, rope=(10000.0, "half"),
                       residual_norm=True, norm_eps=1e-6, ffn_hidden=12, norm="rms", norm_first=True,
                       activation="swiglu", ffn_bias=False, decode=True, mask_fill=float("-inf"))
    random_norms(block, 8)
    x = torch.randn(2, 5, 8)
    out.append(Variant("llama-block-decode",
                       "A Llama-style block: RMSNorm, GQA with RoPE, SwiGLU, pre-norm; KV-cache decoding",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                        "mask_fill": "-inf", "rope": {"style": "half"}, "residual_norm": True, "norm_eps": 1e-6,
                        "norm": "rms", "norm_first": True, "ffn_hidden": 12, "activation": "swiglu",
                        "ffn_bias": False, "decode": True}, block, x,
                       mask=torch.tril(torch.ones(5, 5)), mask_lesson="causal"))

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
    out.append(Variant("prenorm-gelu-layernorm",
                       "Pre-norm with LayerNorm and GELU (nn.TransformerEncoderLayer(norm_first=True, activation=\"gelu\"))",
                       {"d_model": 6, "n_heads": 2, "residual_norm": True, "ffn_hidden": 10, "norm_first": True,
                        "activation": "gelu"}, block, x))

    torch.manual_seed(63)
    block = make_block(6, 3, residual_norm=True, ffn_hidden=10, norm="rms", activation="gelu_tanh",
                       norm_eps=1e-5)
    random_norms(block, 6)
    x = torch.randn(2, 5, 6)
    lens = torch.tensor([5, 3])
    mask = (torch.arange(5)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)
    out.append(Variant("postnorm-rms-gelu-tanh", "Post-norm with RMSNorm and GELU (tanh), 3 heads, key padding",
                       {"d_model": 6, "n_heads": 3, "residual_norm": True, "ffn_hidden": 10, "norm": "rms",
                        "activation": "gelu_tanh"}, block, x, mask=mask, mask_lesson={"key_padding": [5, 3]}))

    # 7. a fully masked query row, once with -1e9 (uniform row), once with -inf (NaN row)
    mask = torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]])
    for name, fill, fill_json, what in [("masked-row-1e9", -1e9, -1e9, "-1e9 gives a uniform row"),
                                         ("masked-row-neginf", float("-inf"), "-inf",
                                          "-inf gives a NaN row")]:
        torch.manual_seed(7)
        block = make_block(4, 2, mask_fill=fill)
        x = torch.randn(2, 4, 4)
        out.append(Variant(name, "A fully masked query row: " + what,
                           {"d_model": 4, "n_heads": 2, "mask_fill": fill_json}, block, x,
                           mask=mask, mask_lesson=mask_json(mask)))

    # 8. no sqrt(d_k) scaling, and a custom divisor
    for name, scale, title in [("no-scale", 1, "No scaling: scores = QKᵀ (scale 1)"),
                               ("scale-3", 3, "Custom scale: scores = QKᵀ / 3")]:
        torch.manual_seed(8)
        block = make_block(4, 2, scale=scale)
        x = torch.randn(2, 3, 4)
        out.append(Variant(name, title, {"d_model": 4, "n_heads": 2, "scale": scale}, block, x))

    # 9. qkv bias but no output bias; 2-D query (B = 1); value separate from key
    torch.manual_seed(9)
    block = make_block(6, 2, qkv_bias=True, out_bias=False)
    x = torch.randn(4, 6)
    v = torch.randn(4, 6)
    out.append(Variant("no-out-bias-2d",
                       "Unbatched input (Lq, d_model), separate value, no output bias",
                       {"d_model": 6, "n_heads": 2, "qkv_bias": True, "out_bias": False},
                       block, x, x, v, query_2d=True, key_ref="query",
                       tokens={"query": ["the", "cat", "sat", "down"]}))

    # 10. FFN without residual_norm, default mask_fill, key padding
    torch.manual_seed(10)
    block = make_block(8, 4, ffn_hidden=16)
    x = torch.randn(2, 5, 8)
    lens = torch.tensor([3, 5])
    mask = (torch.arange(5)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)
    out.append(Variant("ffn-key-padding",
                       "Feed-forward after attention (no residual norm), key padding",
                       {"d_model": 8, "n_heads": 4, "ffn_hidden": 16}, block, x,
                       mask=mask, mask_lesson={"key_padding": [3, 5]}))

    # 11. a bigger one
    torch.manual_seed(11)
    block = make_block(12, 3, mask_fill=-1e9, residual_norm=True)
    x = torch.randn(3, 7, 12)
    mask = torch.tril(torch.ones(7, 7))
    out.append(Variant("big-causal", "Bigger: 3 sequences of 7, d_model 12, 3 heads, causal",
                       {"d_model": 12, "n_heads": 3, "mask_fill": -1e9, "residual_norm": True},
                       block, x, mask=mask, mask_lesson="causal"))

    # 12. Llama-style: GQA (4 query heads, 2 K/V heads), RoPE rotate_half, causal, no biases
    torch.manual_seed(12)
    block = make_block(16, 4, qkv_bias=False, out_bias=False, mask_fill=float("-inf"),
                       n_kv_heads=2, rope=(10000.0, "half"))
    x = torch.randn(2, 6, 16)
    mask = torch.tril(torch.ones(6, 6))
    out.append(Variant("gqa-rope-causal", "Llama-style: GQA 4/2 heads, RoPE (rotate_half), causal",
                       {"d_model": 16, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False,
                        "out_bias": False, "mask_fill": "-inf",
                        "rope": {"theta": 10000, "style": "half"}},
                       block, x, mask=mask, mask_lesson="causal"))

    # 13. multi-query attention, RoPE interleaved (GPT-J / Meta pairs), theta 500, no mask
    torch.manual_seed(13)
    block = make_block(12, 3, d_k=4, d_v=2, n_kv_heads=1, rope=(500.0, "interleaved"))
    x = torch.randn(1, 9, 12)
    out.append(Variant("mqa-rope-interleaved", "MQA (3 query heads, 1 K/V head), d_k 4, d_v 2, RoPE interleaved",
                       {"d_model": 12, "n_heads": 3, "d_k": 4, "d_v": 2, "n_kv_heads": 1,
                        "rope": {"theta": 500, "style": "interleaved"}}, block, x))

    # 14. Mistral-style: GQA + RoPE + sliding window 3 over 8 tokens
    torch.manual_seed(14)
    block = make_block(8, 4, qkv_bias=False, out_bias=False, mask_fill=float("-inf"),
                       n_kv_heads=2, rope=(10000.0, "half"))
    x = torch.randn(2, 8, 8)
    mask = sliding_window_mask(8, 3)
    out.append(Variant("sliding-window-gqa", "Mistral-style: sliding window 3, GQA 4/2, RoPE",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False,
                        "out_bias": False, "mask_fill": "-inf", "rope": {"style": "half"}},
                       block, x, mask=mask, mask_lesson={"sliding_window": 3}))

    # 15. ALiBi, 4 heads (a power of two), causal with -1e9
    torch.manual_seed(15)
    block = make_block(8, 4, alibi=True)
    x = torch.randn(2, 6, 8)
    mask = torch.tril(torch.ones(6, 6))
    out.append(Variant("alibi-causal", "ALiBi, 4 heads, causal",
                       {"d_model": 8, "n_heads": 4, "alibi": True}, block, x,
                       mask=mask, mask_lesson="causal"))

    # 16. ALiBi with 6 heads (not a power of two: the paper's interleaved slopes), no mask,
    # sliding window 1 is a separate case below
    torch.manual_seed(16)
    block = make_block(12, 6, alibi=True, n_kv_heads=3, residual_norm=True)
    x = torch.randn(1, 5, 12)
    out.append(Variant("alibi-6-heads-gqa", "ALiBi with 6 heads (not a power of two), GQA 6/3, residual + LayerNorm",
                       {"d_model": 12, "n_heads": 6, "n_kv_heads": 3, "alibi": True,
                        "residual_norm": True}, block, x))

    # 17. GQA in cross-attention with key padding, biases, d_k != d_v; sliding window 1
    torch.manual_seed(17)
    block = make_block(8, 4, d_k=2, d_v=3, n_kv_heads=2, mask_fill=-1e10)
    q = torch.randn(2, 3, 8)
    k = torch.randn(2, 5, 8)
    lens = torch.tensor([4, 2])
    mask = (torch.arange(5)[None, :] < lens[:, None]).unsqueeze(1).unsqueeze(2)
    out.append(Variant("gqa-cross-padding", "GQA 4/2 in cross-attention, key padding, d_k 2, d_v 3",
                       {"d_model": 8, "n_heads": 4, "d_k": 2, "d_v": 3, "n_kv_heads": 2,
                        "mask_fill": -1e10}, block, q, k,
                       mask=mask, mask_lesson={"key_padding": [4, 2]}))
    torch.manual_seed(18)
    block = make_block(4, 2)
    x = torch.randn(1, 4, 4)
    mask = sliding_window_mask(4, 1)
    out.append(Variant("sliding-window-1", "Sliding window 1: each token sees only itself",
                       {"d_model": 4, "n_heads": 2}, block, x,
                       mask=mask, mask_lesson={"sliding_window": 1}))

    # 19. FlashAttention tiles: causal, key blocks of 3 over 7 keys (a short last block)
    torch.manual_seed(19)
    block = make_block(8, 2, flash=(2, 3))
    x = torch.randn(2, 7, 8)
    mask = torch.tril(torch.ones(7, 7))
    out.append(Variant("flash-causal", "FlashAttention tiles 2×3, causal",
                       {"d_model": 8, "n_heads": 2, "flash": {"block_q": 2, "block_k": 3}}, block, x,
                       mask=mask, mask_lesson="causal"))

    # 20. tiles over a sliding window with -inf: whole blocks masked (the running max stays
    # -inf: Check_inf), GQA and RoPE
    torch.manual_seed(20)
    block = make_block(8, 4, n_kv_heads=2, rope=(10000.0, "half"), mask_fill=float("-inf"),
                       flash=(4, 2))
    x = torch.randn(1, 8, 8)
    mask = sliding_window_mask(8, 2)
    out.append(Variant("flash-window-neginf", "FlashAttention tiles 4×2 over a sliding window 2 with -inf, GQA, RoPE",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "mask_fill": "-inf",
                        "rope": {"style": "half"}, "flash": {"block_q": 4, "block_k": 2}}, block, x,
                       mask=mask, mask_lesson={"sliding_window": 2}))

    # 21. tiles with a fully masked row (-inf: NaN, as the standard pass) and ALiBi
    torch.manual_seed(21)
    block = make_block(4, 2, mask_fill=float("-inf"), alibi=True, flash=(1, 4))
    x = torch.randn(1, 5, 4)
    mask = torch.tensor([[1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    out.append(Variant("flash-masked-row-alibi", "FlashAttention tiles 1×4, ALiBi, a fully masked row with -inf",
                       {"d_model": 4, "n_heads": 2, "mask_fill": "-inf", "alibi": True,
                        "flash": {"block_q": 1, "block_k": 4}}, block, x,
                       mask=mask, mask_lesson=mask_json(mask)))

    # 22. KV-cache decoding, Llama-style: GQA + RoPE + causal
    torch.manual_seed(22)
    block = make_block(8, 4, qkv_bias=False, out_bias=False, mask_fill=float("-inf"),
                       n_kv_heads=2, rope=(10000.0, "half"), decode=True)
    x = torch.randn(2, 6, 8)
    mask = torch.tril(torch.ones(6, 6))
    out.append(Variant("decode-gqa-rope", "KV-cache decoding: GQA 4/2, RoPE, causal",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "qkv_bias": False, "out_bias": False,
                        "mask_fill": "-inf", "rope": {"style": "half"}, "decode": True}, block, x,
                       mask=mask, mask_lesson="causal"))

    # 23. decoding with ALiBi over a sliding window, biases, d_k != d_v, residual + LayerNorm,
    # interleaved-free; and MQA with interleaved RoPE
    torch.manual_seed(23)
    block = make_block(6, 3, d_k=2, d_v=3, alibi=True, decode=True, residual_norm=True)
    x = torch.randn(2, 5, 6)
    mask = sliding_window_mask(5, 3)
    out.append(Variant("decode-alibi-window", "KV-cache decoding: ALiBi, sliding window 3, d_k 2, d_v 3",
                       {"d_model": 6, "n_heads": 3, "d_k": 2, "d_v": 3, "alibi": True, "decode": True,
                        "residual_norm": True}, block, x,
                       mask=mask, mask_lesson={"sliding_window": 3}))
    torch.manual_seed(24)
    block = make_block(8, 2, n_kv_heads=1, rope=(100.0, "interleaved"), decode=True, flash=(2, 2))
    x = torch.randn(1, 5, 8)
    mask = torch.tril(torch.ones(5, 5))
    out.append(Variant("decode-mqa-flash", "KV-cache decoding and FlashAttention tiles: MQA, interleaved RoPE (theta 100)",
                       {"d_model": 8, "n_heads": 2, "n_kv_heads": 1, "rope": {"theta": 100, "style": "interleaved"},
                        "decode": True, "flash": {"block_q": 2, "block_k": 2}}, block, x,
                       mask=mask, mask_lesson="causal"))

    # 25. several layers (model.n_layers, issue 25): layer 0 reads the input, layer l > 0 the
    # output of layer l − 1 (its last stage), each layer with its own weights (a seed gives layer
    # l the generator's tensors i + 64·l) and the same mask; the stages are named l0.…, l1.….
    # Post-norm with ReLU over the classic arange input, causal, checked against
    # nn.TransformerEncoder with the same two layers
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
    out.append(Variant("stack-2-post", "Two layers, post-norm with ReLU: arange(0,32) as 2×4×4, causal",
                       {"d_model": 4, "n_heads": 2, "n_layers": 2, "residual_norm": True, "ffn_hidden": 8},
                       stack, x, mask=mask, mask_lesson="causal", weights={"init": {"seed": 42}}))

    # ... three Llama-style layers (pre-norm, RMSNorm, SwiGLU, GQA with RoPE), each decoded token
    # by token on its own input
    torch.manual_seed(71)
    stack = BlockStack([init_block(make_block(8, 4, n_kv_heads=2, rope=(10000.0, "half"), residual_norm=True,
                                              ffn_hidden=12, norm="rms", norm_first=True, activation="swiglu",
                                              ffn_bias=False, decode=True), 7, l) for l in range(3)])
    x = torch.randn(1, 6, 8)
    out.append(Variant("stack-3-prenorm-rope-gqa-decode",
                       "Three pre-norm layers: RMSNorm, SwiGLU, GQA 4/2 with RoPE, causal, KV-cache decoding",
                       {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "n_layers": 3, "rope": {"style": "half"},
                        "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 12,
                        "activation": "swiglu", "ffn_bias": False, "decode": True}, stack, x,
                       mask=torch.tril(torch.ones(6, 6)), mask_lesson="causal", weights={"init": {"seed": 7}}))

    # ... two pre-norm layers with LayerNorm and GELU, ALiBi, FlashAttention tiles 2×2, key padding;
    # weights.layers: layer 0 gives its own w_q, layer 1 its own norm_weight, the rest is seeded
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
    out.append(Variant("stack-2-flash-alibi-layers",
                       "Two pre-norm layers, LayerNorm and GELU, ALiBi, FlashAttention tiles 2×2, key padding; "
                       "weights per layer",
                       {"d_model": 6, "n_heads": 2, "n_layers": 2, "alibi": True, "flash": {"block_q": 2, "block_k": 2},
                        "residual_norm": True, "norm_first": True, "ffn_hidden": 10, "activation": "gelu"},
                       BlockStack(blocks), x, mask=mask, mask_lesson={"key_padding": [5, 3]},
                       weights={"layers": [{"w_q": tensor_json(w_q)}, {"norm_weight": tensor_json(g)}],
                                "init": {"seed": 9}}))

    # 26. language models (a vocab): token ids -> embedding (+ positions) -> the layers -> final
    # norm -> logits -> probs. Each is also checked against plain torch: nn.Embedding,
    # nn.TransformerEncoder's layers (or the layers written out by hand), the norm, a linear head.
    # Characters, learned positions, two pre-norm GELU layers, a final LayerNorm, an untied head;
    # weights.layers gives layer 0 its norm_weight and layer 1 its ffn_norm_bias, the final norm
    # stands beside them, the rest is seeded
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
    out.append(LMVariant("lm-char-2-layer",
                         "A character language model: learned positions, two pre-norm GELU layers, final LayerNorm, "
                         "causal",
                         {"d_model": 8, "n_heads": 2, "n_layers": 2, "residual_norm": True, "norm_first": True,
                          "ffn_hidden": 16, "activation": "gelu", "positions": "learned", "max_positions": 12},
                         lm, vocab, ids, text=text, mask=torch.tril(torch.ones(L, L)), mask_lesson="causal",
                         weights={"init": {"seed": 81},
                                  "layers": [{"norm_weight": tensor_json(g0)}, {"ffn_norm_bias": tensor_json(b1)}],
                                  "final_norm_weight": tensor_json(fg), "final_norm_bias": tensor_json(fb)}))

    # ... words (split on spaces: the double space and the leading one give no token), a batch of
    # two texts, sinusoidal positions, one post-norm ReLU layer and no final norm (final_norm
    # false: a post-norm layer already ends in a norm), the head tied to a given embedding,
    # temperature 0.7
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
    out.append(LMVariant("lm-word-sinusoidal-tied",
                         "A word language model: two texts, sinusoidal positions, one post-norm layer, tied "
                         "embeddings, temperature 0.7",
                         {"d_model": 6, "n_heads": 2, "residual_norm": True, "ffn_hidden": 12,
                          "positions": "sinusoidal", "final_norm": False, "tie_embeddings": True, "temperature": 0.7},
                         lm, vocab, ids, text=texts, tokenizer="word", mask=torch.tril(torch.ones(L, L)),
                         mask_lesson="causal", weights={"init": {"seed": 82}, "embed": tensor_json(E)}))

    # ... token ids in, no positions but RoPE, two pre-norm attention-only layers (RMSNorm, GQA
    # 4/2), each decoded token by token, a final RMSNorm, every tensor seeded
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
    out.append(LMVariant("lm-rope-attn-only",
                         "A language model on token ids: RoPE, two pre-norm attention-only layers, GQA 4/2, "
                         "final RMSNorm, KV-cache decoding",
                         {"d_model": 8, "n_heads": 4, "n_kv_heads": 2, "n_layers": 2, "rope": {"style": "half"},
                          "residual_norm": True, "norm": "rms", "norm_first": True, "ffn_hidden": 0, "decode": True},
                         lm, vocab, ids, mask=torch.tril(torch.ones(L, L)), mask_lesson="causal",
                         weights={"init": {"seed": 83}}))
    return out


# ----------------------------------------------------------------------------
# the lesson library: lessons/*.json -> ref/lessons/NAME.expected.json
# ----------------------------------------------------------------------------

LESSONS_DIR = os.path.join(os.path.dirname(HERE), "lessons")


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
    sys.path.insert(0, LESSONS_DIR)
    no_cache, sys.dont_write_bytecode = sys.dont_write_bytecode, True   # no lessons/__pycache__
    try:
        import from_torch
    finally:
        sys.path.remove(LESSONS_DIR)
        sys.dont_write_bytecode = no_cache
    return from_torch


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
        if int(var.model_json.get("n_layers", 1)) > 1:
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
