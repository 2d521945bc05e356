"""torch_modules.py: the stages of the lesson format as PyTorch modules, written as tutorial
code (nn.Linear, view + transpose, masked_fill, softmax): MultiHeadAttention (GQA / MQA, RoPE
with its scalings, ALiBi, FlashAttention tiles, KV-cache decoding, sinks), the per-head form,
RMSNorm, AttentionBlock (residual, norms, feed-forward: ReLU, GELU, SwiGLU), BlockStack of
layers, LanguageModel (embeddings, positions, final norm, head), and the deterministic init
generator of {"init": {"seed"}} (the C program's). Every module records its stages (stages()).

lessons/lesson_torch.py reads a lesson into these modules and runs them; tests/gen_reference.py
builds its reference variants from them.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class LessonError(Exception):
    """What a lesson cannot be (raised while reading it: lessons/lesson_torch.py)."""

STAGES = ["attn_norm", "kv_latent", "kv_latent_norm", "k_pe", "q_latent", "q_latent_norm", "q_proj", "k_proj", "v_proj", "q_heads", "k_heads", "v_heads", "q_norm", "k_norm",
          "q_rope", "k_rope", "latent_cache", "position_bias", "scores", "q_absorbed", "absorbed_scores",
          "index_q", "index_k", "index_w", "index_scores", "topk_mask", "capped_scores", "window_mask", "masked_scores", "attn", "head_out",
          "flash_max", "flash_scale", "flash_p", "flash_sum", "flash_acc", "flash_out",
          "lin_q", "lin_k", "lin_beta", "lin_alpha", "lin_state", "lin_out", "lin_attn", "lin_u", "lin_parallel", "concat",
          "attn_gate", "gated", "output",
          "residual_sum", "residual_norm", "ffn_norm", "ffn_gate", "ffn_hidden", "ffn_sum", "ffn_out",
          "cache_k", "cache_v", "decode_scores", "decode_attn", "decode_output"]

# index order of the deterministic init generator
INIT_ORDER = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o",
              "ffn_w1", "ffn_b1", "ffn_w2", "ffn_b2",
              "norm_weight", "norm_bias", "ffn_norm_weight", "ffn_norm_bias",  # 1 and 0, never drawn
              "ffn_w_gate", "ffn_b_gate", "sinks",
              "q_norm", "k_norm",  # QK-norm's γ: 1, never drawn
              "w_gate", "b_gate",
              "w_dq", "q_latent_norm", "w_dkv", "kv_latent_norm", "w_kr",  # MLA (the norms' γ: 1, never drawn)
              "w_iq", "w_ik", "w_iw",  # DeepSeek sparse attention's indexer
              "w_beta", "w_alpha", "a_log", "dt_bias"]  # a linear layer's gates (torch_delta.py)
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


def alibi_bias(n_heads, lq, lk, dtype=torch.float32, form="relative"):
    """(1, H, Lq, Lk): -m_h·(i - j); form "key": m_h·j, as BLOOM's build_alibi_tensor
    (slopes[..., None] * arange over the keys), the same for every query row."""
    m = torch.tensor(alibi_slopes(n_heads), dtype=dtype).view(1, n_heads, 1, 1)
    if form == "key":
        return m * torch.arange(lk).to(dtype).view(1, 1, 1, lk).expand(1, n_heads, lq, lk)
    rel = (torch.arange(lq)[:, None] - torch.arange(lk)[None, :]).to(dtype)
    return -(m * rel)


def tile_scores(q, k, j0, j1, scale, bias, mask, fill):
    """A key block's scores, as the standard pass computes them: q·kᵀ / scale (+ bias), the fill."""
    B, _, Lq, _ = q.shape
    Lk = k.shape[2]
    s = torch.matmul(q, k[:, :, j0:j1].transpose(-2, -1)) / scale
    if bias is not None:
        s = s + bias[:, :, :, j0:j1]
    if mask is not None:
        mm = torch.as_tensor(mask)
        mm = mm.expand(B, 1, Lq, Lk) if mm.dim() == 4 else mm.expand(B, Lq, Lk).unsqueeze(1)
        s = s.masked_fill(mm[:, :, :, j0:j1] == 0, fill)
    return s


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
        s = tile_scores(q, k, j0, j1, scale, bias, mask, fill)
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


def flash_attention_v1(q, k, v, scale, bias, mask, fill, block_k):
    """FlashAttention-1's forward, Algorithm 1 of Dao et al. 2022 ("FlashAttention: Fast and
    Memory-Efficient Exact Attention with IO-Awareness"), one key block j at a time:
        m~ = rowmax(S_j), P~ = exp(S_j − m~), l~ = rowsum(P~),
        m_new = max(m, m~), l_new = e^(m − m_new)·l + e^(m~ − m_new)·l~,
        O = diag(l_new)^−1 (diag(l)·e^(m − m_new)·O + e^(m~ − m_new)·P~·V_j)
    with O = 0, l = 0, m = −inf at the start. A max at −inf is taken as 0 in the exponentials
    (Check_inf) and a row that has seen no key yet (l_new = 0) keeps O = 0; at the end such a
    row's output is 0/0 = NaN, as the softmax's. Returns flash_attention's six tensors, with P~
    as the tiles' P and O after each block as acc."""
    B, H, Lq, dk = q.shape
    Lk = k.shape[2]
    if k.shape[1] != H:
        k = k.repeat_interleave(H // k.shape[1], dim=1)
        v = v.repeat_interleave(H // v.shape[1], dim=1)
    def finite(x):
        return torch.where(torch.isneginf(x), torch.zeros_like(x), x)
    m = torch.full((B, H, Lq, 1), float("-inf"))
    l = torch.zeros(B, H, Lq, 1)
    o = torch.zeros(B, H, Lq, v.shape[-1])
    ms, ls, alphas, ps, os_ = [], [], [], [], []
    for j0 in range(0, Lk, block_k):
        j1 = min(j0 + block_k, Lk)
        s = tile_scores(q, k, j0, j1, scale, bias, mask, fill)
        m_t = s.amax(dim=-1, keepdim=True)
        p_t = torch.exp(s - finite(m_t))
        l_t = p_t.sum(dim=-1, keepdim=True)
        m_new = torch.maximum(m, m_t)
        alpha = torch.exp(m - finite(m_new))
        beta = torch.exp(m_t - finite(m_new))
        l_new = alpha * l + beta * l_t
        o_new = (l * alpha * o + beta * torch.matmul(p_t, v[:, :, j0:j1])) / l_new
        o = torch.where(l_new > 0, o_new, torch.zeros_like(o_new))
        m, l = m_new, l_new
        ms.append(m)
        ls.append(l)
        alphas.append(alpha)
        ps.append(p_t)
        os_.append(o)
    out = torch.where(l > 0, o, o / l)
    return (torch.cat(ms, dim=-1), torch.cat(alphas, dim=-1), torch.cat(ps, dim=-1), torch.cat(ls, dim=-1),
            torch.cat(os_, dim=-1), out)


def window_mask(L, W, sinks=0, convention="inclusive"):
    """The sliding window of a lesson's model.window_convention: "inclusive" as
    sliding_window_mask below; "flash" as FlashAttention's window_size = (W, 0) (flash_attn's
    docstring: query i attends keys j in [i - window_size[0], i + window_size[1]]), W + 1 keys."""
    if convention != "flash":
        return sliding_window_mask(L, W, sinks)
    i = torch.arange(L)[:, None]
    j = torch.arange(L)[None, :]
    return ((j <= i) & ((j >= i - W) | (j < sinks))).to(torch.float32)


def zero_masked_rows(x, mask):
    """model.masked_rows "zero": the rows of x (B, H, Lq, ·) whose keys are all masked set to 0,
    as torch >= 2.5's _safe_softmax does for rows of -inf (FlashAttention: such a row's l is 0
    and its output 0)."""
    if mask is None:
        return x
    mm = torch.as_tensor(mask)
    B, H, Lq = x.shape[:3]
    mm = mm.expand(B, 1, Lq, mm.shape[-1]) if mm.dim() == 4 else mm.expand(B, Lq, mm.shape[-1]).unsqueeze(1)
    return x.masked_fill((mm == 0).all(dim=-1, keepdim=True), 0.0)


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
                 alibi=False, flash=None, decode=False, attn_sinks=False, qk_norm=False, norm_eps=1e-5,
                 softcap=0.0, attn_gate=False, window=0):
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
        # the attention of 2026's model cards: QK-norm (transformers' Qwen3Attention: q_norm and
        # k_norm, Qwen3RMSNorm(head_dim), on each head before RoPE), Gemma 2's soft-capping of the
        # scaled scores, Qwen3-Next's sigmoid gate on the heads' output (Qwen3NextAttention: the gate
        # half of q_proj, here its own w_gate), and a sliding-window layer of a local/global pattern
        self.q_norm = RMSNorm(self.d_k, norm_eps) if qk_norm else None
        self.k_norm = RMSNorm(self.d_k, norm_eps) if qk_norm else None
        self.softcap = softcap
        self.w_gate = nn.Linear(d_model, n_heads * self.d_v, bias=qkv_bias) if attn_gate else None
        self.window = window        # > 0: this layer's own mask, the causal one within the last W keys
        # the conventions (model.window_convention, masked_rows, alibi_form), their defaults
        self.window_conv, self.masked_rows, self.alibi_form, self.flash_acc = "inclusive", "softmax", "relative", "fa2"
        self.stream_pos = "text"
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

        if self.window:
            # Gemma 2's sliding layers: the causal mask and i − W < j (transformers' sliding_window_mask)
            m = torch.as_tensor(mask).expand(B, 1, Lq, Lk) if torch.as_tensor(mask).dim() == 4 \
                else torch.as_tensor(mask).expand(B, Lq, Lk).unsqueeze(1)
            mask = m * window_mask(Lq, self.window, 0, self.window_conv)
            tr["window_mask"] = mask[:, 0].to(torch.float32)
        q = self.w_q(query)
        k = self.w_k(key)
        v = self.w_v(value)
        tr["q_proj"], tr["k_proj"], tr["v_proj"] = q, k, v

        q = q.view(B, Lq, H, self.d_k).transpose(1, 2)     # (B, H, Lq, d_k)
        k = k.view(B, Lk, Hkv, self.d_k).transpose(1, 2)   # (B, Hkv, Lk, d_k)
        v = v.view(B, Lk, Hkv, self.d_v).transpose(1, 2)   # (B, Hkv, Lk, d_v)
        tr["q_heads"], tr["k_heads"], tr["v_heads"] = q, k, v
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
            tr["q_norm"], tr["k_norm"] = q, k

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
        return self.attend(query, key, q, k, v, mask)

    def attend(self, query, key, q, k, v, mask):
        """From the heads q, k (B, H, L, d_k) and v (B, H, L, d_v) on: the scores, the mask, the
        softmax, the weighted sum, the concat, [the gate], W_O (and the decoding loop)."""
        tr = self.trace
        B, Lq, _ = query.shape
        Lk, H = key.size(1), self.n_heads
        scores = torch.matmul(q, k.transpose(-2, -1)) / self.scale
        if self.alibi:
            bias = alibi_bias(H, Lq, Lk, scores.dtype, self.alibi_form)
            tr["position_bias"] = bias
            scores = scores + bias
        tr["scores"] = scores
        if self.softcap:
            # transformers' Gemma2 eager_attention_forward: / softcap, tanh, * softcap
            scores = torch.tanh(scores / self.softcap) * self.softcap
            tr["capped_scores"] = scores
        if getattr(self, "index", None) is not None:
            # DeepSeek sparse attention (torch_mla.py): each query keeps the indexer's top-k keys
            mask = self.index(query, key, mask, tr)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, self.mask_fill)
        tr["masked_scores"] = scores

        attn = self.softmax(scores)
        if self.masked_rows == "zero":
            attn = zero_masked_rows(attn, mask)
        tr["attn"] = attn
        x = torch.matmul(attn, v)                          # (B, H, Lq, d_v)
        tr["head_out"] = x
        if self.flash is not None:
            (tr["flash_max"], tr["flash_scale"], tr["flash_p"], tr["flash_sum"], tr["flash_acc"],
             tr["flash_out"]) = (flash_attention_v1 if self.flash_acc == "fa1" else flash_attention)(
                q, k, v, self.scale, tr.get("position_bias"), mask, self.mask_fill, self.flash[1])
            if self.masked_rows == "zero":
                tr["flash_out"] = zero_masked_rows(tr["flash_out"], mask)
        x = x.transpose(1, 2).contiguous().view(B, Lq, H * self.d_v)
        tr["concat"] = x
        if self.w_gate is not None:
            # Qwen3NextAttention.forward: attn_output = attn_output * torch.sigmoid(gate)
            g = tr["attn_gate"] = torch.sigmoid(self.w_gate(query))
            x = tr["gated"] = x * g
        out = self.w_o(x)
        tr["output"] = out
        if self.decode:
            (tr["cache_k"], tr["cache_v"], tr["decode_scores"], tr["decode_attn"],
             tr["decode_output"]) = (self.generate_pos_shift if self.stream_pos == "cache" and self.rope is not None
                                     else self.generate)(query, mask)
        return out

    def generate_pos_shift(self, x, mask):
        """Decoding with StreamingLLM's positions (Xiao et al. 2023; mit-han-lab/streaming-llm's
        pos_shift/modify_llama.py with kv_cache.py's StartRecentKVCache), written from that code:
        the cache holds each key as projected, before RoPE; at step t the cache keeps the keys the
        lesson's mask keeps (the start tokens, then the recent window), all of them are rotated to
        their index in the cache (its key_position_ids, arange of the cache's length) and the
        query to the index the new token takes (the position Hugging Face gives it: the length of
        the cache before it). Returns generate's five tensors, cache_k before RoPE."""
        B, L, _ = x.shape
        H, Hkv, dk, dv = self.n_heads, self.n_kv_heads, self.d_k, self.d_v
        theta, style = self.rope[:2]
        rot_d = self.rope[2] if len(self.rope) > 2 else None
        scaling = self.rope[3] if len(self.rope) > 3 else None
        q_all = self.w_q(x).view(B, L, H, dk).transpose(1, 2)               # (B, H, L, dk), no RoPE yet
        cache_k = self.w_k(x).view(B, L, Hkv, dk).transpose(1, 2)
        cache_v = self.w_v(x).view(B, L, Hkv, dv).transpose(1, 2)
        mm = None if mask is None else (torch.as_tensor(mask).expand(B, 1, L, L) if torch.as_tensor(mask).dim() == 4
                                        else torch.as_tensor(mask).expand(B, L, L).unsqueeze(1))
        step_s = torch.full((B, H, L, L), self.mask_fill)
        step_a = torch.zeros(B, H, L, L)
        outs = torch.zeros(B, L, H * dv)
        for b in range(B):
            for t in range(L):
                keep = [j for j in range(t + 1) if mm is None or mm[b, 0, t, j] != 0]
                n = len(keep)
                kk = apply_rope(cache_k[b:b + 1, :, keep], theta, style, rot_d, torch.arange(n).view(1, n), scaling)
                qq = apply_rope(q_all[b:b + 1, :, t:t + 1], theta, style, rot_d, torch.tensor([[n - 1]]), scaling)
                kk = kk.repeat_interleave(H // Hkv, dim=1)
                vv = cache_v[b:b + 1, :, keep].repeat_interleave(H // Hkv, dim=1)
                s = torch.matmul(qq, kk.transpose(-2, -1)) / self.scale         # (1, H, 1, n)
                a = self.softmax(s)
                step_s[b, :, t, :t + 1] = self.mask_fill
                step_s[b, :, t, keep] = s[0, :, 0]
                step_a[b, :, t, keep] = a[0, :, 0]
                outs[b, t] = torch.matmul(a, vv)[0, :, 0].reshape(H * dv)
        return cache_k, cache_v, step_s, step_a, self.w_o(outs)

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
            if self.q_norm is not None:
                self.q_norm.weight.copy_(w["q_norm"])
                self.k_norm.weight.copy_(w["k_norm"])
            if self.w_gate is not None:
                self.w_gate.weight.copy_(w["w_gate"])
                if self.w_gate.bias is not None:
                    self.w_gate.bias.copy_(w["b_gate"])
        self.load_index_weights(w)

    def load_index_weights(self, w):
        """DeepSeek sparse attention's indexer (torch_mla.LightningIndexer), when there is one."""
        if getattr(self, "index", None) is not None:
            with torch.no_grad():
                for name in ("w_iq", "w_ik", "w_iw"):
                    getattr(self.index, name).weight.copy_(w[name])

    def lesson_weights(self):
        out = {}
        for name in ["q", "k", "v", "o"]:
            lin = getattr(self, "w_" + name)
            out["w_" + name] = tensor_json(lin.weight)
            if lin.bias is not None:
                out["b_" + name] = tensor_json(lin.bias)
        if self.sinks is not None:
            out["sinks"] = tensor_json(self.sinks)
        if self.q_norm is not None:
            for name in ("q_norm", "k_norm"):
                if not torch.all(getattr(self, name).weight == 1):
                    out[name] = tensor_json(getattr(self, name).weight)
        if self.w_gate is not None:
            out["w_gate"] = tensor_json(self.w_gate.weight)
            if self.w_gate.bias is not None:
                out["b_gate"] = tensor_json(self.w_gate.bias)
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

    def _ffn_linears(self):
        """(layer, weight name, bias name) of the feed-forward's linear layers, in the lesson's order."""
        return [(lin, wn, bn) for lin, wn, bn in [(self.ffn_w1, "ffn_w1", "ffn_b1"), (self.ffn_w2, "ffn_w2", "ffn_b2"),
                                                  (self.ffn_gate, "ffn_w_gate", "ffn_b_gate")] if lin is not None]

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
                for lin, wn, bn in self._ffn_linears():
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
            for lin, wn, bn in self._ffn_linears():
                out[wn] = tensor_json(lin.weight)
                if lin.bias is not None:
                    out[bn] = tensor_json(lin.bias)
            norm(self.ffn_norm, "ffn_norm_weight", "ffn_norm_bias")
        return out


def make_block(d_model, n_heads, d_k=None, d_v=None, qkv_bias=True, out_bias=True,
               scale=None, mask_fill=-1e9, residual_norm=False, norm_eps=1e-5,
               ffn_hidden=0, per_head=False, n_kv_heads=None, rope=None, alibi=False, flash=None,
               decode=False, norm="layer", norm_first=False, activation="relu", ffn_bias=True, attn_sinks=False,
               qk_norm=False, softcap=0.0, attn_gate=False, window=0, q_lora_rank=0, kv_lora_rank=0,
               qk_rope_head_dim=0, index=None, window_conv="inclusive", masked_rows="softmax", alibi_form="relative",
               flash_acc="fa2", stream_pos="text", linear=None):
    if linear:                             # a "linear_attention" layer: (rule, form) (torch_delta.py)
        from torch_delta import LinearAttention
        return AttentionBlock(LinearAttention(d_model, n_heads, d_k, d_v, qkv_bias, out_bias, *linear), d_model,
                              residual_norm, norm_eps, ffn_hidden, norm, norm_first, activation, ffn_bias)
    conventions = (window_conv, masked_rows, alibi_form, flash_acc, stream_pos)
    modern = (n_kv_heads not in (None, n_heads)) or rope is not None or alibi or flash or decode or attn_sinks \
        or qk_norm or softcap or attn_gate or window or index \
        or conventions != ("inclusive", "softmax", "relative", "fa2", "text")
    if kv_lora_rank:                       # DeepSeek's multi-head latent attention (torch_mla.py)
        from torch_mla import MLAttention
        attn = MLAttention(d_model, n_heads, d_k, d_v, q_lora_rank, kv_lora_rank, qk_rope_head_dim, norm_eps,
                           out_bias=out_bias, scale=scale, mask_fill=mask_fill, rope=rope, flash=flash,
                           attn_sinks=attn_sinks, softcap=softcap, attn_gate=attn_gate)
    elif per_head and not modern:
        attn = PerHeadMultiHeadAttention(d_model, n_heads, d_k, d_v, qkv_bias, out_bias, scale, mask_fill)
    else:
        attn = MultiHeadAttention(d_model, n_heads, d_k, d_v, qkv_bias, out_bias, scale, mask_fill,
                                  n_kv_heads, rope, alibi, flash, decode, attn_sinks, qk_norm, norm_eps, softcap,
                                  attn_gate, window)
    if index:                              # DeepSeek sparse attention: (heads, head_dim, top-k)
        from torch_mla import LightningIndexer
        attn.index = LightningIndexer(d_model, *index)
    if not isinstance(attn, PerHeadMultiHeadAttention):
        attn.window_conv, attn.masked_rows, attn.alibi_form, attn.flash_acc, attn.stream_pos = conventions
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
    if a.w_gate is not None:
        lins.append(("w_gate", "b_gate", a.w_gate))
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
