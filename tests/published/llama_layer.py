"""A Llama-style decoder layer at toy size, for tests/from_torch_test.sh and
tests/from_torch_models.py: transformers' modeling_llama (LlamaRMSNorm, rotate_half /
apply_rotary_pos_emb, repeat_kv, an additive causal mask of finfo.min, LlamaMLP,
LlamaDecoderLayer.forward) written out here (transformers is not in Debian's archive), with
its names (self_attn.q_proj … o_proj, num_heads, num_key_value_heads, mlp.gate_proj / up_proj /
down_proj, input_layernorm, post_attention_layernorm, variance_epsilon)."""

import math

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight, self.variance_epsilon = nn.Parameter(torch.ones(d)), eps
    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))

class Attention(nn.Module):
    def __init__(self, C, H, Hkv, theta):
        super().__init__()
        self.num_heads, self.num_key_value_heads, self.head_dim, self.theta = H, Hkv, C // H, theta
        self.q_proj = nn.Linear(C, H * self.head_dim, bias=False)
        self.k_proj = nn.Linear(C, Hkv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(C, Hkv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(H * self.head_dim, C, bias=False)
    def forward(self, x):
        B, L, _ = x.shape
        d, H, Hkv = self.head_dim, self.num_heads, self.num_key_value_heads
        q = self.q_proj(x).view(B, L, H, d).transpose(1, 2)
        k = self.k_proj(x).view(B, L, Hkv, d).transpose(1, 2)
        v = self.v_proj(x).view(B, L, Hkv, d).transpose(1, 2)
        inv = 1.0 / (self.theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        emb = torch.cat([torch.outer(torch.arange(L).float(), inv)] * 2, -1)
        rot = lambda t: torch.cat((-t[..., d // 2:], t[..., : d // 2]), -1)
        q, k = q * emb.cos() + rot(q) * emb.sin(), k * emb.cos() + rot(k) * emb.sin()
        k, v = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
        s = q @ k.transpose(2, 3) / math.sqrt(d)
        s = s + torch.full((L, L), torch.finfo(torch.float32).min).triu(1)
        a = torch.softmax(s, -1, dtype=torch.float32)
        return self.o_proj((a @ v).transpose(1, 2).reshape(B, L, H * d))

class MLP(nn.Module):
    def __init__(self, C, I):
        super().__init__()
        self.gate_proj, self.up_proj = nn.Linear(C, I, bias=False), nn.Linear(C, I, bias=False)
        self.down_proj, self.act_fn = nn.Linear(I, C, bias=False), nn.SiLU()
    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))

class DecoderLayer(nn.Module):
    def __init__(self, C=16, H=4, Hkv=2, I=12, theta=500.0, eps=1e-6):
        super().__init__()
        self.self_attn, self.mlp = Attention(C, H, Hkv, theta), MLP(C, I)
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(C, eps), RMSNorm(C, eps)
    def forward(self, x):
        residual = x
        x = residual + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))
