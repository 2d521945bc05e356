"""DeepSeek's attention in PyTorch, for the lessons' references (lesson_torch.py, tests/gen_reference.py):
multi-head latent attention (MLA, DeepSeek-V2/V3) and DeepSeek-V3.2's sparse attention (the lightning
indexer). Written from the published definitions, not from attnviz's C:

- DeepSeek-AI, "DeepSeek-V2" (arXiv 2405.04434), §2.1.2-2.1.3, eqs. (9)-(19): c_KV = W_DKV·h, k_C =
  W_UK·c_KV, v_C = W_UV·c_KV, c_Q = W_DQ·h, q = [q_C; RoPE(q_R)], k = [k_C; RoPE(W_KR·h)] with k_R shared
  by every head; W_UK absorbed into the query ("W_UK can be absorbed into W_UQ").
- transformers' models/deepseek_v3/modeling_deepseek_v3.py, DeepseekV3Attention: the modules below
  keep its layout (q_a_proj → q_a_layernorm → q_b_proj; kv_a_proj_with_mqa split into compressed_kv and
  k_pe; kv_a_layernorm; kv_b_proj viewed as (B, L, H, d_nope + d_v) and split; query_states =
  cat(q_nope, q_pe), key_states = cat(k_nope, k_pe.expand(H)); no attention bias), so the lesson's
  separate W_DKV / W_KR and W_UK / W_UV are loaded into its fused kv_a_proj_with_mqa and kv_b_proj.
  The RoPE of q_pe and k_pe is the lessons' (apply_rope, "half" or "interleaved" pairs in place;
  transformers' rope_interleave variant de-interleaves the pairs first, which reorders q_pe and k_pe
  alike and leaves every score as it is).
- DeepSeek-V3's inference/model.py, MLA with attn_impl "absorb": q_nope times wkv_b's W_UK rows per
  head, then scores = (q_A·kv_cacheᵀ + q_pe·pe_cacheᵀ)·softmax_scale from the cache of c_KV and k_pe.
- DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse Attention"
  (2025), eq. (1): I_{t,s} = Σ_j w_{t,j}·ReLU(q_{t,j}·k_s), then each query attends to its top-k keys.
  The formula only (the released kernel's FP8, Hadamard rotation, LayerNorm and RoPE of the indexer
  key are not the lesson's); q_I, k_I and w read the attention's input.
"""
import torch
from torch import nn

from torch_modules import MultiHeadAttention, RMSNorm, apply_rope


class LightningIndexer(nn.Module):
    """DeepSeek-V3.2's indexer: H_I small heads score every key; each query keeps its top-k keys
    among those the mask allows (the new mask the attention's softmax reads)."""

    def __init__(self, d_model, n_heads, head_dim, topk):
        super().__init__()
        self.n_heads, self.head_dim, self.topk = n_heads, head_dim, topk
        self.w_iq = nn.Linear(d_model, n_heads * head_dim, bias=False)
        self.w_ik = nn.Linear(d_model, head_dim, bias=False)
        self.w_iw = nn.Linear(d_model, n_heads, bias=False)

    def forward(self, query, key, mask, tr):
        B, Lq, _ = query.shape
        Lk = key.size(1)
        q = tr["index_q"] = self.w_iq(query)                                   # (B, Lq, H_I·d_I)
        k = tr["index_k"] = self.w_ik(key)                                     # (B, Lk, d_I)
        w = tr["index_w"] = self.w_iw(query)                                   # (B, Lq, H_I)
        dots = torch.einsum("bihd,bjd->bihj", q.view(B, Lq, self.n_heads, self.head_dim), k)
        scores = (torch.relu(dots) * w[..., None]).sum(dim=2)                  # Σ_j w_j·ReLU(q_j·k)
        m = torch.as_tensor(mask)
        m = m.expand(B, 1, Lq, Lk)[:, 0] if m.dim() == 4 else m.expand(B, Lq, Lk)
        tr["index_scores"] = scores.masked_fill(m == 0, float("-inf"))    # (V3.2: index_score += mask)
        # the top k, ties to the earlier key (a stable sort; torch.topk leaves the order of ties open)
        top = torch.sort(scores.masked_fill(m == 0, float("-inf")), dim=-1, descending=True, stable=True).indices
        top = top[..., :self.topk]
        sel = torch.zeros(B, Lq, Lk).scatter_(-1, top, 1.0) * (m != 0)
        tr["topk_mask"] = sel
        return sel.unsqueeze(1)                                                # (B, 1, Lq, Lk)


class MLAttention(MultiHeadAttention):
    """Multi-head latent attention: the score, mask, softmax, value and output path is
    MultiHeadAttention's (attend), the projections are DeepseekV3Attention's."""

    def __init__(self, d_model, n_heads, d_k, d_v, q_lora_rank, kv_lora_rank, qk_rope_head_dim, norm_eps=1e-5,
                 **kw):
        super().__init__(d_model, n_heads, d_k, d_v, qkv_bias=False, norm_eps=norm_eps, **kw)
        H, dk, dv, r, dr = n_heads, self.d_k, self.d_v, kv_lora_rank, qk_rope_head_dim
        self.rank, self.d_rope, self.d_nope = r, dr, dk - dr
        if q_lora_rank:
            self.q_a_proj = nn.Linear(d_model, q_lora_rank, bias=False)
            self.q_a_layernorm = RMSNorm(q_lora_rank, norm_eps)
            self.w_q = nn.Linear(q_lora_rank, H * dk, bias=False)            # q_b_proj
        else:
            self.q_a_proj = None
        self.kv_a_proj_with_mqa = nn.Linear(d_model, r + dr, bias=False)
        self.kv_a_layernorm = RMSNorm(r, norm_eps)
        self.kv_b_proj = nn.Linear(r, H * (self.d_nope + dv), bias=False)
        self.w_k = self.w_v = None

    def forward(self, query, key, value, mask=None):
        tr = self.trace = {}
        B, L, _ = query.shape
        H, dn, dr, dv, r = self.n_heads, self.d_nope, self.d_rope, self.d_v, self.rank
        theta, style = self.rope[:2]
        scaling = self.rope[3] if len(self.rope) > 3 else None
        if self.q_a_proj is not None:
            cq = tr["q_latent"] = self.q_a_proj(query)
            cq = tr["q_latent_norm"] = self.q_a_layernorm(cq)
        else:
            cq = query
        q = tr["q_proj"] = self.w_q(cq)
        q = tr["q_heads"] = q.view(B, L, H, dn + dr).transpose(1, 2)
        q_nope, q_pe = torch.split(q, [dn, dr], dim=-1)
        kv_a = self.kv_a_proj_with_mqa(query)
        ckv, k_pe = torch.split(kv_a, [r, dr], dim=-1)
        tr["kv_latent"], tr["k_pe"] = ckv, k_pe
        ckv = tr["kv_latent_norm"] = self.kv_a_layernorm(ckv)
        kv = self.kv_b_proj(ckv).view(B, L, H, dn + dv)
        k_nope, v = torch.split(kv, [dn, dv], dim=-1)
        tr["k_proj"], tr["v_proj"] = k_nope.reshape(B, L, H * dn), v.reshape(B, L, H * dv)
        k_nope, v = k_nope.transpose(1, 2), v.transpose(1, 2)
        k_pe = k_pe.view(B, 1, L, dr)
        tr["k_heads"] = torch.cat((k_nope, k_pe.expand(B, H, L, dr)), dim=-1)
        tr["v_heads"] = v
        q_pe = apply_rope(q_pe, theta, style, None, self.position_ids, scaling)
        k_pe = apply_rope(k_pe, theta, style, None, self.position_ids, scaling)
        q = tr["q_rope"] = torch.cat((q_nope, q_pe), dim=-1)
        k = tr["k_rope"] = torch.cat((k_nope, k_pe.expand(B, H, L, dr)), dim=-1)
        cache = tr["latent_cache"] = torch.cat((ckv, k_pe[:, 0]), dim=-1)    # what MLA caches per token
        # the absorbed form: W_UK's rows of head h folded into its query, scores from the cache alone
        w_uk = self.kv_b_proj.weight.view(H, dn + dv, r)[:, :dn]              # (H, d_nope, r)
        q_a = tr["q_absorbed"] = torch.einsum("bhld,hdc->bhlc", q_nope, w_uk)
        tr["absorbed_scores"] = (torch.einsum("bhic,bjc->bhij", q_a, cache[..., :r]) +
                                 torch.einsum("bhir,bjr->bhij", q_pe, cache[..., r:])) / self.scale
        return self.attend(query, query, q, k, v, mask)

    def load_lesson_weights(self, w):
        H, dn, dv = self.n_heads, self.d_nope, self.d_v
        with torch.no_grad():
            self.w_q.weight.copy_(w["w_q"])
            if self.q_a_proj is not None:
                self.q_a_proj.weight.copy_(w["w_dq"])
                self.q_a_layernorm.weight.copy_(w["q_latent_norm"])
            self.kv_a_proj_with_mqa.weight.copy_(torch.cat((w["w_dkv"], w["w_kr"]), dim=0))
            self.kv_a_layernorm.weight.copy_(w["kv_latent_norm"])
            # kv_b_proj: head h's rows are its W_UK rows, then its W_UV rows
            self.kv_b_proj.weight.copy_(torch.cat((w["w_k"].view(H, dn, -1), w["w_v"].view(H, dv, -1)), dim=1)
                                        .reshape(H * (dn + dv), -1))
            self.w_o.weight.copy_(w["w_o"])
            if self.w_o.bias is not None:
                self.w_o.bias.copy_(w["b_o"])
            if self.sinks is not None:
                self.sinks.copy_(w["sinks"])
            if self.w_gate is not None:
                self.w_gate.weight.copy_(w["w_gate"])
        self.load_index_weights(w)
