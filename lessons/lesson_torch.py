"""lesson_torch.py: the lesson format, interpreted in PyTorch: read a lesson, build its torch
modules, run them stage by stage.

    stages = run_lesson(lesson)        # [(stage name, tensor)], in attnviz's order and names
    dict(stages)["output"]             # (B, Lq, d_model); a language model's "logits", "probs"

resolve_lesson(lesson) reads a lesson dict (the model, input, mask, weights or {"init":
{"seed"}}, a vocab with text or ids) into a configuration, tensors and per-layer weights, and
raises LessonError where it cannot; lesson_module(resolved, per_head) builds its modules
(MultiHeadAttention or PerHeadMultiHeadAttention, AttentionBlock, BlockStack of n_layers, and a
language model's embedding and head: lm_weights, lm_tail), written as tutorial PyTorch code
(nn.Linear, view + transpose, masked_fill, softmax; RoPE, ALiBi, FlashAttention tiles, KV-cache
decoding, sinks, RMSNorm, SwiGLU). The modules record every stage (stages()).

The one Python reading of the format: tests/gen_reference.py writes its references with it
(and builds its variants from its modules), tests/check_random.py compares attnviz with it,
lessons/from_torch.py checks every lesson it builds with it, and the training scripts
(lessons/trained.py) run their lessons from their own JSON with it. The C program is the
other reading (src/core/attn_json.c, lesson.c).
"""

import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

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


def tensor_json(t):
    """Nested arrays holding exactly the float32 values of t."""
    return t.detach().to(torch.float32).cpu().tolist()


def mask_json(t):
    return (t != 0).to(torch.int64).cpu().tolist()


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
    # a float32, as attnviz reads it: '%.9g' writes finfo(float32).min as -3.40282347e+38, a
    # little past -FLT_MAX as a double (masked_fill would refuse it), which rounds to -FLT_MAX
    fill = float("-inf") if fill == "-inf" else float(np.float32(fill))
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
