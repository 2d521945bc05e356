"""Linear attention, DeltaNet and Gated DeltaNet in torch: a lesson's "linear_attention" layers
(model.layer_types), the reference attnviz's delta.c is checked against.

Written from the published recurrences, not from attnviz's C:
- Yang, Kautz & Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule" (ICLR 2025),
  eq. (10): S_t = S_{t-1}(alpha_t (I - beta_t k_t k_t^T)) + beta_t v_t k_t^T, o_t = S_t q_t, S (d_v, d_k);
- Yang et al., "Parallelizing Linear Transformers with the Delta Rule over Sequence Length"
  (NeurIPS 2024), the WY / UT form: T = (I + tril(diag(beta) K K^T, -1))^-1 diag(beta), U = T V,
  O = (Q K^T (.) M) U, here with the gate's decay Gamma_ij = exp(G_i - G_j) (G = cumsum(g)) in both
  products, as fla's chunk_gated_delta_rule does inside one chunk;
- transformers' models/qwen3_next/modeling_qwen3_next.py (Qwen3NextGatedDeltaNet): beta = b.sigmoid(),
  g = -A_log.exp() * softplus(a + dt_bias), l2norm(x) = x * rsqrt(sum(x^2) + 1e-6) of q and k,
  q * d_k^-0.5, the state (d_k, d_v) per head (the transpose of the paper's S).
Not built (attnviz refuses them by having no key for them): the short causal conv1d of q, k, v and
the RMSNormGated output. The recurrence below is the paper's, transposed and run token by token;
the matrix form is solved with torch.linalg.solve_triangular; gen_reference checks them equal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


def recurrent(q, k, v, beta, alpha, rule):
    """q, k (B, H, L, d_k) normalised and q scaled, v (B, H, L, d_v), beta, alpha (B, H, L) or None.
    Returns the state after each token (B, H, L, d_k * d_v) and the outputs (B, H, L, d_v)."""
    B, H, L, dk = k.shape
    dv = v.shape[-1]
    S = torch.zeros(B, H, dk, dv)
    states, outs = [], []
    for t in range(L):
        kt, vt = k[:, :, t], v[:, :, t]
        if alpha is not None:
            S = S * alpha[:, :, t, None, None]
        if rule == "linear":
            S = S + kt[..., :, None] * vt[..., None, :]
        else:   # the paper's S(I - beta k k^T) + beta v k^T, transposed: S + k (beta (v - k^T S))^T
            recall = (S * kt[..., :, None]).sum(dim=-2)
            S = S + kt[..., :, None] * ((vt - recall) * beta[:, :, t, None])[..., None, :]
        states.append(S.reshape(B, H, dk * dv))
        outs.append((S * q[:, :, t, :, None]).sum(dim=-2))
    return torch.stack(states, dim=2), torch.stack(outs, dim=2)


def matrix_form(q, k, v, beta, alpha, rule):
    """The same outputs from a masked (L, L) matrix: A = (q k^T) (.) Gamma, lower triangular, and the
    pseudo-values U = (I + tril(diag(beta)(K K^T (.) Gamma), -1))^-1 diag(beta) V. Returns A, U, A U."""
    B, H, L, dk = k.shape
    causal = torch.tril(torch.ones(L, L))
    if alpha is None:
        gamma = causal
    else:
        G = torch.cumsum(torch.log(alpha.double()), dim=-1)
        gamma = (torch.exp(G[..., :, None] - G[..., None, :]) * causal).float()
    A = (q @ k.transpose(-1, -2)) * gamma
    if rule == "linear":
        U = v
    else:
        strict = torch.tril(torch.ones(L, L), diagonal=-1)
        T = torch.eye(L) + beta[..., :, None] * (k @ k.transpose(-1, -2)) * gamma * strict
        U = torch.linalg.solve_triangular(T, beta[..., :, None] * v, upper=False, unitriangular=True)
    return A, U, A @ U


class LinearAttention(nn.Module):
    """A "linear_attention" layer: the projections and the head split as attention's, then the
    recurrent state in place of the scores and the softmax, then concat and W_O."""

    def __init__(self, d_model, n_heads, d_k=None, d_v=None, qkv_bias=True, out_bias=True, rule="gated_delta",
                 form="recurrent"):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_k or d_model // n_heads
        self.d_v = d_v or self.d_k
        self.rule, self.form = rule, form
        self.w_q = nn.Linear(d_model, n_heads * self.d_k, bias=qkv_bias)
        self.w_k = nn.Linear(d_model, n_heads * self.d_k, bias=qkv_bias)
        self.w_v = nn.Linear(d_model, n_heads * self.d_v, bias=qkv_bias)
        self.w_o = nn.Linear(n_heads * self.d_v, d_model, bias=out_bias)
        self.w_beta = nn.Linear(d_model, n_heads, bias=False) if rule != "linear" else None
        self.w_alpha = nn.Linear(d_model, n_heads, bias=False) if rule == "gated_delta" else None
        self.a_log = nn.Parameter(torch.zeros(n_heads)) if rule == "gated_delta" else None
        self.dt_bias = nn.Parameter(torch.zeros(n_heads)) if rule == "gated_delta" else None
        self.w_gate = self.sinks = self.q_norm = None   # (the full layers' own)
        self.position_ids = None
        self.trace = {}

    def forward(self, query, key, value, mask=None):
        tr = self.trace = {}
        B, L, _ = query.shape
        H, dk, dv = self.n_heads, self.d_k, self.d_v
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        tr["q_proj"], tr["k_proj"], tr["v_proj"] = q, k, v
        q = q.view(B, L, H, dk).transpose(1, 2)
        k = k.view(B, L, H, dk).transpose(1, 2)
        v = v.view(B, L, H, dv).transpose(1, 2)
        tr["q_heads"], tr["k_heads"], tr["v_heads"] = q, k, v
        q, k = l2norm(q), l2norm(k)
        tr["lin_q"], tr["lin_k"] = q, k
        beta = alpha = None
        if self.w_beta is not None:
            beta = tr["lin_beta"] = torch.sigmoid(self.w_beta(query))                  # (B, L, H)
        if self.w_alpha is not None:
            g = -self.a_log.exp() * F.softplus(self.w_alpha(query) + self.dt_bias)
            alpha = tr["lin_alpha"] = g.exp()
        bt = beta.transpose(1, 2) if beta is not None else None                          # (B, H, L)
        at = alpha.transpose(1, 2) if alpha is not None else None
        qs = q * dk ** -0.5
        tr["lin_state"], tr["lin_out"] = recurrent(qs, k, v, bt, at, self.rule)
        tr["lin_attn"], tr["lin_u"], tr["lin_parallel"] = matrix_form(qs, k, v, bt, at, self.rule)
        x = tr["lin_parallel"] if self.form == "parallel" else tr["lin_out"]
        x = tr["concat"] = x.transpose(1, 2).contiguous().view(B, L, H * dv)
        out = tr["output"] = self.w_o(x)
        return out

    def load_lesson_weights(self, w):
        with torch.no_grad():
            for name in ["q", "k", "v", "o"]:
                lin = getattr(self, "w_" + name)
                lin.weight.copy_(w["w_" + name])
                if lin.bias is not None:
                    lin.bias.copy_(w["b_" + name])
            for name in ("w_beta", "w_alpha"):
                if getattr(self, name) is not None:
                    getattr(self, name).weight.copy_(w[name])
            for name in ("a_log", "dt_bias"):
                if getattr(self, name) is not None:
                    getattr(self, name).copy_(w[name])

    def lesson_weights(self):
        from torch_modules import tensor_json
        out = {}
        for name in ["q", "k", "v", "o"]:
            lin = getattr(self, "w_" + name)
            out["w_" + name] = tensor_json(lin.weight)
            if lin.bias is not None:
                out["b_" + name] = tensor_json(lin.bias)
        for name in ("w_beta", "w_alpha"):
            if getattr(self, name) is not None:
                out[name] = tensor_json(getattr(self, name).weight)
        for name in ("a_log", "dt_bias"):
            if getattr(self, name) is not None:
                out[name] = tensor_json(getattr(self, name))
        return out
