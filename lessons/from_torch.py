#!/usr/bin/python3
"""from_torch.py: turn a PyTorch attention module and an input into an attnviz lesson.

    import sys, torch
    sys.path.insert(0, "lessons")
    from from_torch import lesson_from_module, save_lesson

    mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    x = torch.randn(1, 5, 4)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)   # True = masked
    save_lesson(lesson_from_module(mha, x, mask=causal, title="My attention"), "mine.json")

Supported modules:
  * torch.nn.MultiheadAttention (batch_first or not, with or without bias;
    kdim = vdim = embed_dim only; no add_bias_kv, no add_zero_attn);
  * torch.nn.TransformerEncoderLayer (post-norm or norm_first, relu / gelu / gelu tanh)
    (lesson_from_encoder_layer), and an nn.TransformerEncoder of 1 to 8 such layers of one
    configuration, without a final norm (lesson_from_encoder): model.n_layers and
    weights.layers, each layer reading the one before's output;
  * any module with separate q/k/v/out nn.Linear layers, found by name
    (q_proj/k_proj/v_proj/out_proj, w_q/w_k/w_v/w_o, query/key/value/out, W_q..., linear_q...,
    to_q/to_k/to_v/to_out, ...), or with one fused q|k|v nn.Linear (qkv, to_qkv, c_attn, ...),
    or with an nn.ModuleList of single-head modules (heads, attention_heads, ...), each with
    its own q/k/v layers; other names with names={"q": ..., "k": ..., "v": ..., "o": ...}.
    Separate k/v layers with fewer outputs than the q layer are grouped K/V heads (GQA / MQA,
    Hugging Face's repeat_kv): n_kv_heads = k outputs / d_k. RoPE and ALiBi are not detected.

The lesson is checked before it is returned: it is run by lessons/lesson_torch.py (the
Python interpreter of the lesson format) and compared with the module itself (output, and for
nn.MultiheadAttention also the per-head attention weights), atol 1e-5 + rtol 1e-4.

Command line:  lessons/from_torch.py --demo OUT.json [--kind mha|custom]
Documentation: lessons/README.md, section "From PyTorch: from_torch.py".
"""

import argparse
import inspect
import json
import math
import os
import sys

import torch
import torch.nn as nn

__all__ = ["lesson_from_module", "lesson_from_encoder_layer", "lesson_from_encoder", "lesson_from_llama_layer",
           "save_lesson", "lesson_text", "lesson_forward", "block_lesson_forward", "demo_lesson"]

ATOL, RTOL = 1e-5, 1e-4

# attribute names looked up on custom modules, in this order
Q_NAMES = ("q_proj", "w_q", "query", "W_q", "Wq", "wq", "W_Q", "linear_q", "q_linear", "to_q",
           "query_proj", "q_lin", "lin_q", "proj_q", "q_net", "q")
K_NAMES = ("k_proj", "w_k", "key", "W_k", "Wk", "wk", "W_K", "linear_k", "k_linear", "to_k",
           "key_proj", "k_lin", "lin_k", "proj_k", "k_net", "k")
V_NAMES = ("v_proj", "w_v", "value", "W_v", "Wv", "wv", "W_V", "linear_v", "v_linear", "to_v",
           "value_proj", "v_lin", "lin_v", "proj_v", "v_net", "v")
O_NAMES = ("out_proj", "w_o", "out", "W_o", "Wo", "wo", "W_O", "linear_out", "linear_o", "o_linear",
           "to_out", "o_proj", "output_proj", "proj", "c_proj", "fc_out", "out_linear", "o_lin",
           "lin_o", "proj_o", "dense", "o", "output")
QKV_NAMES = ("qkv", "to_qkv", "c_attn", "qkv_proj", "in_proj", "Wqkv", "wqkv", "W_qkv", "qkv_linear")
HEAD_LIST_NAMES = ("heads", "attention_heads", "attn_heads", "head_list", "head_modules")
N_HEAD_ATTRS = ("num_heads", "n_heads", "h", "heads", "n_head", "nhead", "num_attention_heads",
                "head_num", "nheads")
SCALE_ATTRS = ("scale", "scaling", "softmax_scale", "temperature", "sqrt_d_k", "norm_factor")
FILL_ATTRS = ("mask_fill", "mask_value", "fill_value", "masked_fill_value", "mask_fill_value",
              "neg_inf")
MASK_PARAMS = ("mask", "attn_mask", "attention_mask", "src_mask", "tgt_mask")

DEFAULT_FILL = -1e9


# the lessons' JSON text, the loader's limits and the atomic write: lessons/lesson_file.py
if os.path.dirname(os.path.abspath(__file__)) not in [os.path.abspath(p) for p in sys.path]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lesson_torch  # noqa: E402  (the lesson format's interpreter, for the checks)
from lesson_file import check_lesson, check_target, compact_json, lesson_text, save_lesson, to_json  # noqa: E402,F401


def _values(t):
    """Nested lists holding exactly the float32 values of t."""
    return t.detach().to("cpu", torch.float32).tolist()


# ----------------------------------------------------------------------------
# finding the parts of a module
# ----------------------------------------------------------------------------

def _as_linear(obj):
    """An nn.Linear, or the nn.Linear at the start of nn.Sequential(Linear, Dropout...)."""
    if isinstance(obj, nn.Linear):
        return obj
    if isinstance(obj, nn.Sequential) and len(obj) >= 1 and isinstance(obj[0], nn.Linear) and \
            all(isinstance(m, (nn.Dropout, nn.Identity)) for m in list(obj)[1:]):
        return obj[0]
    return None


def _get(module, path):
    obj = module
    for part in path.split("."):
        if isinstance(obj, (nn.ModuleList, nn.Sequential)) and part.isdigit():
            obj = obj[int(part)]
        else:
            obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _find_linear(module, names, user=None, what=""):
    if user is not None:
        lin = _as_linear(_get(module, user))
        if lin is None:
            raise ValueError("names[%r] = %r: no nn.Linear there" % (what, user))
        return lin, user
    for n in names:
        lin = _as_linear(getattr(module, n, None)) if hasattr(module, n) else None
        if lin is not None:
            return lin, n
    return None, None


def _int_attr(module, names):
    for n in names:
        v = getattr(module, n, None)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v, n
    return None, None


def _num_attr(module, names):
    """First numeric attribute among names on module or any submodule."""
    for m in module.modules():
        for n in names:
            v = getattr(m, n, None)
            if isinstance(v, torch.Tensor) and v.numel() == 1 and not isinstance(v, nn.Parameter):
                v = float(v)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
    return None


def _bias(lin, n):
    return lin.bias.detach() if lin.bias is not None else torch.zeros(n)


def _describe(module):
    return type(module).__module__ + "." + type(module).__name__ \
        if not type(module).__module__.startswith("torch.nn") else "torch.nn." + type(module).__name__


def _parts_mha(m):
    """nn.MultiheadAttention -> parts dict."""
    E, H = m.embed_dim, m.num_heads
    if not m._qkv_same_embed_dim or getattr(m, "kdim", E) != E or getattr(m, "vdim", E) != E:
        raise ValueError("nn.MultiheadAttention with kdim=%s, vdim=%s != embed_dim=%d is not supported: "
                         "a lesson's key and value have d_model features like the query"
                         % (getattr(m, "kdim", None), getattr(m, "vdim", None), E))
    if m.bias_k is not None or m.bias_v is not None:
        raise ValueError("nn.MultiheadAttention(add_bias_kv=True) is not supported: it appends a "
                         "learned key/value position that a lesson cannot hold")
    if m.add_zero_attn:
        raise ValueError("nn.MultiheadAttention(add_zero_attn=True) is not supported: it appends a "
                         "zero key/value position that a lesson cannot hold")
    W = m.in_proj_weight.detach()
    b = m.in_proj_bias.detach() if m.in_proj_bias is not None else None
    w = {"w_q": W[:E], "w_k": W[E:2 * E], "w_v": W[2 * E:]}
    if b is not None:
        w.update({"b_q": b[:E], "b_k": b[E:2 * E], "b_v": b[2 * E:]})
    w["w_o"] = m.out_proj.weight.detach()
    if m.out_proj.bias is not None:
        w["b_o"] = m.out_proj.bias.detach()
    return dict(kind="mha", d_model=E, H=H, d_k=E // H, d_v=E // H, weights=w, per_head=False,
                qkv_bias=b is not None, out_bias=m.out_proj.bias is not None,
                what="torch.nn.MultiheadAttention(embed_dim=%d, num_heads=%d, bias=%s, batch_first=%s)"
                % (E, H, b is not None, bool(getattr(m, "batch_first", False))))


def _parts_custom(module, n_heads, names):
    names = dict(names or {})
    unknown = set(names) - {"q", "k", "v", "o", "qkv", "heads"}
    if unknown:
        raise ValueError("names: unknown keys %s (use q, k, v, o, qkv, heads)" % sorted(unknown))
    o, o_name = _find_linear(module, O_NAMES, names.get("o"), "o")
    per_head = False
    Hkv = None        # K/V heads, when fewer than the query heads
    heads = None
    if "heads" in names:
        heads = _get(module, names["heads"])
        if not isinstance(heads, (nn.ModuleList, list, tuple)):
            raise ValueError("names['heads'] = %r: not an nn.ModuleList" % names["heads"])
    elif not any(k in names for k in ("q", "qkv")):
        for n in HEAD_LIST_NAMES:
            cand = getattr(module, n, None)
            if isinstance(cand, nn.ModuleList) and len(cand) and \
                    _find_linear(cand[0], Q_NAMES)[0] is not None:
                heads = cand
                break
    if heads is not None:
        per_head = True
        lin = {"q": [], "k": [], "v": []}
        for i, h in enumerate(heads):
            for key, nm in (("q", Q_NAMES), ("k", K_NAMES), ("v", V_NAMES)):
                l, _ = _find_linear(h, nm)
                if l is None:
                    raise ValueError("head %d (%s) has no %s nn.Linear (looked for %s)"
                                     % (i, type(h).__name__, key, ", ".join(nm[:6])))
                lin[key].append(l)
        if n_heads is not None and n_heads != len(heads):
            raise ValueError("n_heads=%d but the module has %d head modules" % (n_heads, len(heads)))
        H = len(heads)
        dks = {l.out_features for l in lin["q"] + lin["k"]}
        dvs = {l.out_features for l in lin["v"]}
        if len(dks) != 1 or len(dvs) != 1:
            raise ValueError("the head modules differ in size (query/key %s, value %s)"
                             % (sorted(dks), sorted(dvs)))
        d_k, d_v = dks.pop(), dvs.pop()
        d_model = lin["q"][0].in_features
        ins = {l.in_features for key in lin for l in lin[key]}
        if ins != {d_model}:
            raise ValueError("query/key/value layers read %s features; only kdim = vdim = d_model "
                             "is supported" % sorted(ins))
        any_b = any(l.bias is not None for key in lin for l in lin[key])
        w = {}
        for key in "qkv":
            w["w_" + key] = torch.stack([l.weight.detach() for l in lin[key]])          # (H, d, C)
            if any_b:
                w["b_" + key] = torch.stack([_bias(l, l.out_features) for l in lin[key]])  # (H, d)
        what = "%s with %d head modules" % (_describe(module), H)
    else:
        if "qkv" in names or ("q" not in names and _find_linear(module, Q_NAMES)[0] is None):
            qkv, qkv_name = _find_linear(module, QKV_NAMES, names.get("qkv"), "qkv")
        else:
            qkv = None
        if qkv is not None:
            if qkv.out_features % 3:
                raise ValueError("fused %s: %d output features are not 3 equal q|k|v parts"
                                 % (qkv_name, qkv.out_features))
            n = qkv.out_features // 3
            d_model = qkv.in_features
            W = qkv.weight.detach()
            b = qkv.bias.detach() if qkv.bias is not None else None
            w = {"w_q": W[:n], "w_k": W[n:2 * n], "w_v": W[2 * n:]}
            if b is not None:
                w.update({"b_q": b[:n], "b_k": b[n:2 * n], "b_v": b[2 * n:]})
            qo = n
            vo = n
            any_b = b is not None
            what = "%s (fused %s)" % (_describe(module), qkv_name)
        else:
            lin = {}
            for key, nm in (("q", Q_NAMES), ("k", K_NAMES), ("v", V_NAMES)):
                l, _ = _find_linear(module, nm, names.get(key), key)
                if l is None:
                    raise ValueError("%s: no %s nn.Linear found (looked for %s); pass names={'q': ..., "
                                     "'k': ..., 'v': ..., 'o': ...}"
                                     % (type(module).__name__, {"q": "query", "k": "key", "v": "value"}[key],
                                        ", ".join(nm)))
                lin[key] = l
            d_model = lin["q"].in_features
            if lin["k"].in_features != d_model or lin["v"].in_features != d_model:
                raise ValueError("key/value layers read %d/%d features but the query layer %d: only "
                                 "kdim = vdim = d_model is supported"
                                 % (lin["k"].in_features, lin["v"].in_features, d_model))
            # grouped K/V heads (GQA / MQA): fewer key and value outputs than query outputs
            grouped = lin["k"].out_features != lin["q"].out_features
            any_b = any(l.bias is not None for l in lin.values())
            w = {}
            for key in "qkv":
                w["w_" + key] = lin[key].weight.detach()
                if any_b:
                    w["b_" + key] = _bias(lin[key], lin[key].out_features)
            qo, vo = lin["q"].out_features, lin["v"].out_features
            what = _describe(module)
        if n_heads is None:
            n_heads, _ = _int_attr(module, N_HEAD_ATTRS)
        if n_heads is None:
            raise ValueError("%s: number of heads not found (no attribute %s); pass n_heads="
                             % (type(module).__name__, "/".join(N_HEAD_ATTRS)))
        H = int(n_heads)
        if not per_head and qkv is None and grouped:
            ko = lin["k"].out_features
            if qo % H or ko % (qo // H):
                raise ValueError("query and key layers have %d and %d outputs: with n_heads=%d the key "
                                 "outputs must be a whole number of heads of d_k %s"
                                 % (qo, ko, H, qo // H if qo % H == 0 else "?"))
            Hkv = ko // (qo // H)
            if Hkv == 0 or H % Hkv or vo % Hkv:
                raise ValueError("%d key/value heads (k %d, v %d outputs) do not divide n_heads=%d"
                                 % (Hkv, ko, vo, H))
            d_k, d_v = qo // H, vo // Hkv
        else:
            if qo % H or vo % H:
                raise ValueError("n_heads=%d does not divide the projection sizes (q/k %d, v %d)" % (H, qo, vo))
            d_k, d_v = qo // H, vo // H
    if o is None:
        raise ValueError("%s: no output nn.Linear found (looked for %s); pass names={'o': ...}"
                         % (type(module).__name__, ", ".join(O_NAMES)))
    if o.in_features != H * d_v or o.out_features != d_model:
        raise ValueError("output layer %s is nn.Linear(%d, %d); expected nn.Linear(%d, %d) "
                         "(H·d_v -> d_model)" % (o_name, o.in_features, o.out_features, H * d_v, d_model))
    w["w_o"] = o.weight.detach()
    if o.bias is not None:
        w["b_o"] = o.bias.detach()
    return dict(kind="custom", d_model=d_model, H=H, Hkv=Hkv or H, d_k=d_k, d_v=d_v, weights=w, per_head=per_head,
                qkv_bias=any_b, out_bias=o.bias is not None, what=what)


# ----------------------------------------------------------------------------
# masks
# ----------------------------------------------------------------------------

def _float_additive(t, what):
    """A float mask of 0 / -inf (additive): True where masked."""
    t = t.detach().cpu()
    ok = (t == 0) | torch.isneginf(t)
    if not bool(ok.all()):
        bad = t[~ok]
        raise ValueError("%s: a float mask must hold only 0 (attend) and -inf (masked) to become a "
                         "lesson mask; found %g (additive biases such as ALiBi or -1e4 cannot be "
                         "expressed)" % (what, float(bad.reshape(-1)[0])))
    return torch.isneginf(t)


def _simplify(keep, B, Lq, Lk):
    """keep (B, Lq, Lk) bool -> "causal", {"key_padding": [...]}, or None when neither."""
    tril = torch.tril(torch.ones(Lq, Lk, dtype=torch.bool))
    if bool((keep == tril).all()):
        return "causal"
    rows_same = bool((keep == keep[:, :1, :]).all())
    if rows_same:
        lens = []
        for b in range(B):
            row = keep[b, 0]
            n = int(row.sum())
            if not bool(row[:n].all()):
                return None
            lens.append(n)
        return {"key_padding": lens}
    return None


def _mask_json(t):
    return t.to(torch.int64).tolist()


def _mha_masks(mask, key_padding_mask, B, H, Lq, Lk, batched):
    """PyTorch's conventions -> (lesson mask json, keep (B, Lq, Lk) bool, attn_mask, kpm for the module)."""
    masked = torch.zeros(B, Lq, Lk, dtype=torch.bool)
    mod_attn, mod_kpm = mask, key_padding_mask
    attn_json = kp_json = None
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError("mask: the only string is 'causal'")
        mod_attn = torch.triu(torch.ones(Lq, Lk, dtype=torch.bool), diagonal=1)
        masked |= mod_attn
        attn_json = "causal"
    elif mask is not None:
        t = mask.detach().cpu()
        if t.dtype == torch.bool or t.dtype == torch.uint8:
            m = t != 0
        elif t.is_floating_point():
            m = _float_additive(t, "attn_mask")
        else:
            raise ValueError("attn_mask: dtype %s; PyTorch takes bool (True = masked) or float "
                             "(additive)" % t.dtype)
        if m.dim() == 2:
            if tuple(m.shape) != (Lq, Lk):
                raise ValueError("attn_mask: shape %s, want (%d, %d)" % (list(m.shape), Lq, Lk))
            masked |= m
            attn_json = _mask_json(~m)
        elif m.dim() == 3:
            if tuple(m.shape) != (B * H, Lq, Lk):
                raise ValueError("attn_mask: shape %s, want (%d, %d) or (B·num_heads=%d, %d, %d)"
                                 % (list(m.shape), Lq, Lk, B * H, Lq, Lk))
            m4 = m.view(B, H, Lq, Lk)
            if not bool((m4 == m4[:, :1]).all()):
                raise ValueError("attn_mask: a 3-D mask that differs between heads is not supported "
                                 "(a lesson's mask is the same for every head)")
            masked |= m4[:, 0]
            attn_json = _mask_json(~m4[:, 0])
        else:
            raise ValueError("attn_mask: rank %d; PyTorch takes (L, S) or (N·num_heads, L, S)" % m.dim())
    if key_padding_mask is not None:
        t = key_padding_mask.detach().cpu()
        if t.dtype == torch.bool or t.dtype == torch.uint8:
            p = t != 0
        elif t.is_floating_point():
            p = _float_additive(t, "key_padding_mask")
        else:
            raise ValueError("key_padding_mask: dtype %s; expected bool (True = padding)" % t.dtype)
        if not batched and p.dim() == 1:
            p = p.unsqueeze(0)
        if tuple(p.shape) != (B, Lk):
            raise ValueError("key_padding_mask: shape %s, want (%d, %d)" % (list(p.shape), B, Lk))
        masked |= p[:, None, :]
        keep_p = ~p
        lens = keep_p.sum(-1)
        suffix = all(bool(keep_p[b, :int(lens[b])].all()) for b in range(B))
        kp_json = {"key_padding": [int(x) for x in lens]} if suffix else _mask_json(keep_p[:, None, :])
    if mask is None and key_padding_mask is None:
        return None, None, None, None
    keep = ~masked
    if key_padding_mask is None:
        lesson = attn_json
        if not isinstance(lesson, str):
            simple = _simplify(keep, B, Lq, Lk)
            if simple == "causal":
                lesson = "causal"
    elif mask is None:
        lesson = kp_json
    else:
        lesson = _mask_json(keep)                        # (B, Lq, Lk): both masks at once
    return lesson, keep, mod_attn, mod_kpm


def _custom_masks(mask, convention, B, Lq, Lk):
    """A custom module's mask -> (lesson mask json, keep (B, Lq, Lk) bool, mask for the module)."""
    if mask is None:
        return None, None, None
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError("mask: the only string is 'causal'")
        tril = torch.tril(torch.ones(Lq, Lk))
        mod = tril if convention == "keep" else (tril == 0) if convention == "masked" else \
            torch.zeros(Lq, Lk).masked_fill(tril == 0, float("-inf"))
        return "causal", tril.bool().expand(B, Lq, Lk).clone(), mod
    t = mask.detach().cpu()
    if convention == "keep":
        if t.is_floating_point() and not bool(((t == 0) | (t == 1)).all()):
            raise ValueError("mask: a keep-mask (mask_convention='keep': nonzero/True = attend, as in "
                             "masked_fill(mask == 0, ...)) must be 0/1; for 0/-inf additive masks pass "
                             "mask_convention='additive'")
        keep_t = t != 0
    elif convention == "masked":
        keep_t = t == 0
    elif convention == "additive":
        if not t.is_floating_point():
            raise ValueError("mask: mask_convention='additive' needs a float mask of 0 / -inf")
        keep_t = ~_float_additive(t, "mask")
    else:
        raise ValueError("mask_convention: %r; use 'keep', 'masked' or 'additive'" % (convention,))
    shape = list(keep_t.shape)
    if keep_t.dim() == 4:
        if shape[1] != 1:
            if not bool((keep_t == keep_t[:, :1]).all()):
                raise ValueError("mask: shape %s differs between heads; a lesson's mask is the same "
                                 "for every head" % shape)
            keep_t = keep_t[:, :1]
        lesson_t = keep_t
        k3 = keep_t[:, 0]
    elif keep_t.dim() <= 3:
        lesson_t = keep_t
        k3 = keep_t
    else:
        raise ValueError("mask: rank %d is not supported" % keep_t.dim())
    try:
        keep = k3.expand(B, Lq, Lk).clone()
    except RuntimeError:
        raise ValueError("mask: shape %s does not broadcast to (B, Lq, Lk) = (%d, %d, %d)"
                         % (shape, B, Lq, Lk)) from None
    simple = _simplify(keep, B, Lq, Lk)
    if simple == "causal" or (isinstance(simple, dict) and (k3.dim() < 2 or k3.shape[-2] == 1)):
        return simple, keep, mask
    return _mask_json(lesson_t), keep, mask


# ----------------------------------------------------------------------------
# the checks: the lesson run by lessons/lesson_torch.py, compared with the module
# ----------------------------------------------------------------------------

def lesson_forward(lesson):
    """Runs a lesson dict in torch (lesson_torch.run_lesson, the one Python interpreter of the
    format): {stage name: tensor}, e.g. "attn" (B, H, Lq, Lk) and "output" (B, Lq, C)."""
    return dict(lesson_torch.run_lesson(lesson))


def block_lesson_forward(lesson):
    """A lesson of one or more layers (model.n_layers), run in torch: its last layer's last
    stage (ffn_sum pre-norm, ffn_out post-norm), as nn.TransformerEncoder's output."""
    return lesson_torch.run_lesson(lesson)[-1][1]


def _run_lesson(les, what):
    """The lesson, written and read back as JSON, run stage by stage: [(name, tensor)].
    ValueError (one line) when the interpreter cannot run it."""
    try:
        return lesson_torch.run_lesson(json.loads(lesson_text(les)))
    except (lesson_torch.LessonError, RuntimeError, KeyError, IndexError, TypeError) as e:
        raise ValueError("the lesson made from %s cannot be run (%s: %s)" % (what, type(e).__name__, e)) from None


def _mismatch(got, want):
    """None if got ~ want (NaN where NaN), else the largest difference as text."""
    got = got.detach().to("cpu", torch.float64)
    want = want.detach().to("cpu", torch.float64)
    if got.shape != want.shape:
        return "shape %s vs %s" % (list(got.shape), list(want.shape))
    gn, wn = torch.isnan(got), torch.isnan(want)
    if not torch.equal(gn, wn):
        return "NaN at different positions (%d vs %d NaNs)" % (int(gn.sum()), int(wn.sum()))
    fin = ~wn
    err = (got[fin] - want[fin]).abs()
    tol = ATOL + RTOL * want[fin].abs()
    if err.numel() and bool((err > tol).any()):
        return "max |difference| %.3g" % float(err.max())
    return None


# ----------------------------------------------------------------------------
# running the module
# ----------------------------------------------------------------------------

def _call_custom(module, query, key, value, mask_arg, has_mask):
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    mask_name = next((n for n in names if n in MASK_PARAMS), None)
    others = [n for n in names if n != mask_name]
    args = [query]
    if len(others) >= 3:
        args += [key, value]
    elif len(others) == 2:
        args += [key]
    kwargs = {}
    if has_mask and mask_name is not None:
        kwargs[mask_name] = mask_arg
    out = module(*args, **kwargs)
    if isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _run_module(parts, module, forward, q, k, v, mod_mask, mod_kpm, has_mask, batch_first):
    """The module's (output (B, Lq, C), attn (B, H, Lq, Lk) or None)."""
    was = module.training
    module.eval()
    try:
        with torch.no_grad():
            if forward is not None:
                out = forward(module, q, k, v, mod_mask)
                if isinstance(out, (tuple, list)):
                    out = out[0]
                attn = None
            elif parts["kind"] == "mha":
                kw = {"key_padding_mask": mod_kpm, "need_weights": True, "attn_mask": mod_mask}
                try:
                    out, attn = module(q, k, v, average_attn_weights=False, **kw)
                except TypeError:                      # torch < 1.11: averaged weights only
                    out, attn = module(q, k, v, **kw)
                    attn = None
                if q.dim() == 3 and not batch_first:
                    out = out.transpose(0, 1)
                if attn is not None and attn.dim() == 3:
                    attn = attn.unsqueeze(0)
            else:
                try:
                    out = _call_custom(module, q, k, v, mod_mask, has_mask)
                except Exception as e:
                    if q.dim() != 2:
                        raise
                    try:                               # a module that wants (B, L, C)
                        out = _call_custom(module, q[None], k[None], v[None], mod_mask, has_mask)[0]
                    except Exception:
                        raise e from None
                attn = None
    finally:
        module.train(was)
    if out.dim() == 2:
        out = out.unsqueeze(0)
    return out, attn


# ----------------------------------------------------------------------------
# the conversion
# ----------------------------------------------------------------------------

def _as_input(t, what, batch_first, d_model):
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    t = t.detach().to("cpu", torch.float32)
    if t.dim() == 3 and not batch_first:
        t = t.transpose(0, 1)
    if t.dim() not in (2, 3) or t.shape[-1] != d_model:
        raise ValueError("%s: shape %s; expected (B, L, %d) or (L, %d)%s"
                         % (what, list(t.shape), d_model, d_model,
                            "" if batch_first else " (sequence first: (L, B, %d))" % d_model))
    if t.numel() == 0:
        raise ValueError("%s: shape %s is empty; a lesson's input has at least one position of one batch"
                         % (what, list(t.shape)))
    if not bool(torch.isfinite(t).all()):
        raise ValueError("%s: holds non-finite values" % what)
    return t.contiguous()


def _assemble(title, description, model, inp, mask_json, weights, tokens, steps):
    """A lesson dict, its keys in the format's order (the optional ones only when given)."""
    les = {"title": title}
    if description is not None:
        les["description"] = description
    les["model"] = model
    les["input"] = inp
    if mask_json is not None:
        les["mask"] = mask_json
    les["weights"] = weights
    if tokens is not None:
        les["tokens"] = tokens
    if steps is not None:
        les["steps"] = steps
    return check_lesson(les)


def lesson_from_module(module, query, key=None, value=None, mask=None, key_padding_mask=None,
                       n_heads=None, title=None, mask_fill=None, scale=None, tokens=None,
                       steps=None, description=None, names=None, mask_convention="keep",
                       check=True, forward=None):
    """Builds an attnviz lesson (a dict) from an attention module and its input.

    module           nn.MultiheadAttention, or a module with q/k/v/out nn.Linear layers
                     (separate, fused q|k|v, or an nn.ModuleList of head modules)
    query            (B, Lq, C) or (Lq, C); for nn.MultiheadAttention with batch_first=False
                     (Lq, B, C) as the module takes it
    key, value       the same layouts (default: key = query, value = key)
    mask             nn.MultiheadAttention: its attn_mask, (Lq, Lk) or (B·H, Lq, Lk), bool
                     (True = masked) or float (0 / -inf); or the string "causal".
                     Custom modules: the mask as the module takes it, read with mask_convention:
                     "keep" (default; nonzero/True = attend, as in masked_fill(mask == 0, ...)),
                     "masked" (True = masked), "additive" (0 / -inf); or "causal"
    key_padding_mask nn.MultiheadAttention only: (B, Lk), True = padding
    n_heads          heads, when the module has no num_heads/n_heads/h/heads/n_head attribute
    mask_fill        the lesson's fill: a number or "-inf" (default: "-inf" for
                     nn.MultiheadAttention, else the module's mask_fill attribute or -1e9)
    scale            the divisor of Q·Kᵀ (default √d_k; a custom module's scale attribute is
                     tried both as divisor and as multiplier)
    title, tokens, steps, description   copied into the lesson
    names            {"q": "attr", "k": ..., "v": ..., "o": ..., "qkv": ..., "heads": ...}
    check            True: run the module and the lesson, and raise ValueError if they differ
    forward          callable(module, query, key, value, mask) -> output, to run a custom module
                     whose forward takes other arguments
    """
    if isinstance(getattr(getattr(module, "transformer", module), "wte", None), nn.Embedding): # a GPT-style model
        if key is not None or value is not None or mask is not None:
            raise ValueError("a GPT-style model reads token ids, causally: give query (the ids) only")
        return lesson_from_gpt(module, query, n_heads=n_heads, title=title, description=description, check=check)
    if isinstance(module, nn.TransformerEncoder):
        if key is not None or value is not None:
            raise ValueError("nn.TransformerEncoder attends to its own input: give query only")
        return lesson_from_encoder(module, query, mask=mask, src_key_padding_mask=key_padding_mask, title=title,
                                   tokens=tokens, steps=steps, description=description, check=check)
    if isinstance(module, nn.TransformerEncoderLayer):
        if key is not None or value is not None:
            raise ValueError("nn.TransformerEncoderLayer attends to its own input: give query only")
        return lesson_from_encoder_layer(module, query, mask=mask, src_key_padding_mask=key_padding_mask,
                                         title=title, tokens=tokens, steps=steps, description=description,
                                         check=check)
    if isinstance(module, nn.MultiheadAttention):
        parts = _parts_mha(module)
        batch_first = bool(getattr(module, "batch_first", False))
    else:
        parts = _parts_custom(module, n_heads, names)
        batch_first = True
    if n_heads is not None and int(n_heads) != parts["H"]:
        raise ValueError("n_heads=%d but the module has %d heads" % (n_heads, parts["H"]))
    C, H, d_k, d_v = parts["d_model"], parts["H"], parts["d_k"], parts["d_v"]

    raw_q = query
    raw_k = query if key is None else key
    raw_v = raw_k if value is None else value
    q = _as_input(raw_q, "query", batch_first, C)
    k = q if raw_k is raw_q else _as_input(raw_k, "key", batch_first, C)
    v = k if raw_v is raw_k else q if raw_v is raw_q else _as_input(raw_v, "value", batch_first, C)
    if not (q.dim() == k.dim() == v.dim()):
        raise ValueError("query, key and value must all be batched or all unbatched")
    if k.shape != v.shape:
        raise ValueError("key %s and value %s must have the same shape" % (list(k.shape), list(v.shape)))
    if q.dim() == 3 and q.shape[0] != k.shape[0]:
        raise ValueError("query and key batch sizes differ (%d, %d)" % (q.shape[0], k.shape[0]))
    batched = q.dim() == 3
    B = q.shape[0] if batched else 1
    Lq, Lk = q.shape[-2], k.shape[-2]

    if parts["kind"] == "mha":
        mask_json, keep, mod_mask, mod_kpm = _mha_masks(mask, key_padding_mask, B, H, Lq, Lk, batched)
    else:
        if key_padding_mask is not None:
            raise ValueError("key_padding_mask= is for nn.MultiheadAttention; give a custom module's "
                             "mask with mask=")
        mask_json, keep, mod_mask = _custom_masks(mask, mask_convention, B, Lq, Lk)
        mod_kpm = None
    has_mask = mask is not None

    # lesson: model
    model = {"d_model": C, "n_heads": H}
    if parts.get("Hkv", H) != H:
        model["n_kv_heads"] = parts["Hkv"]
    if C % H or d_k != C // H:
        model["d_k"] = d_k
    if d_v != d_k:
        model["d_v"] = d_v
    if not parts["qkv_bias"]:
        model["qkv_bias"] = False
    if not parts["out_bias"]:
        model["out_bias"] = False

    # the candidates for scale and mask_fill that the check chooses from
    if scale is not None:
        scales = [float(scale)]
    else:
        scales = [math.sqrt(d_k)]
        if parts["kind"] != "mha":
            a = _num_attr(module, SCALE_ATTRS)
            if a is not None and a > 0 and math.isfinite(a):
                scales += [a, 1.0 / a]
    if mask_fill is not None:
        fills = [mask_fill]
    elif parts["kind"] == "mha":
        fills = ["-inf"]
    else:
        a = _num_attr(module, FILL_ATTRS)
        if a is not None:
            fills = [a]
        elif mask_convention == "additive" and mask is not None:
            fills = ["-inf"]                                # adding -inf is masked_fill(-inf)
        else:
            fills = [DEFAULT_FILL, "-inf"]
    fills = ["-inf" if (isinstance(f, float) and math.isinf(f) and f < 0) else f for f in fills]
    for f in fills:
        if f != "-inf" and not (isinstance(f, (int, float)) and math.isfinite(f)):
            raise ValueError("mask_fill: %r; use a finite number or '-inf'" % (f,))

    # lesson: input
    inp = {"query": _values(q)}
    if k is not q:
        if torch.equal(k, q):
            pass                                            # same numbers: self-attention
        else:
            inp["key"] = _values(k)
    if v is k or torch.equal(v, k):
        pass
    elif torch.equal(v, q):
        inp["value"] = "query"
    else:
        inp["value"] = _values(v)

    weights = {}
    for n in ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"):
        if n in parts["weights"]:
            weights[n] = _values(parts["weights"][n])

    if title is None:
        short = parts["what"].split("(")[0].split(" ")[0].split(".")[-1]
        title = {"en": "From PyTorch: %s, d_model %d, %d heads" % (short, C, H),
                 "zh": "来自 PyTorch：%s，d_model %d，%d 个头" % (short, C, H)}
    if isinstance(title, dict) and "en" not in title:
        raise ValueError("title: a dict needs an 'en' text")
    if tokens is not None:
        if isinstance(tokens, dict):
            tq, tk = tokens.get("query"), tokens.get("key")
            if tq is not None and len(tq) != Lq or tk is not None and len(tk) != Lk:
                raise ValueError("tokens: need %d query and %d key tokens" % (Lq, Lk))
        elif len(tokens) != Lq or Lq != Lk:
            raise ValueError("tokens: a list needs %d tokens and self-attention lengths "
                             "(else give {'query': [...], 'key': [...]})" % Lq)

    def build(sc, fill):
        mod = dict(model)
        if sc != math.sqrt(d_k) and float(torch.tensor(sc, dtype=torch.float32)) != \
                float(torch.tensor(math.sqrt(d_k), dtype=torch.float32)):
            mod["scale"] = sc
        if fill != DEFAULT_FILL:
            mod["mask_fill"] = fill
        return _assemble(title, description, mod, inp, mask_json, weights, tokens, steps)

    candidates = [(s, f) for s in scales for f in fills]
    if not check:
        return build(*candidates[0])

    try:
        out, attn = _run_module(parts, module, forward, raw_q, raw_k, raw_v, mod_mask, mod_kpm,
                                has_mask, batch_first)
    except Exception as e:
        raise ValueError("could not run %s to check the lesson (%s: %s); pass forward=lambda m, q, k, "
                         "v, mask: ... to say how to call it, or check=False"
                         % (type(module).__name__, type(e).__name__, e)) from None
    problems = []
    for sc, fill in candidates:
        les = build(sc, fill)
        got = dict(_run_lesson(les, parts["what"]))
        p = _mismatch(got["output"], out)
        if p is None and attn is not None:
            p = _mismatch(got["attn"], attn)
            p = p and "attention weights: " + p
        if p is None:
            return les
        problems.append("scale %.6g, mask_fill %s: %s" % (sc, fill if isinstance(fill, str) else "%g" % fill, p))
    hint = ""
    if parts["kind"] != "mha":
        hint = (" The module may do something a lesson cannot hold (dropout in training, rotary or "
                "relative positions, its own mask: pass mask='causal'?), or use another scale or "
                "mask value: pass scale=, mask_fill=, mask_convention=.")
    raise ValueError("the lesson does not reproduce %s: %s.%s"
                     % (parts["what"], "; ".join(problems), hint))


# ----------------------------------------------------------------------------
# nn.TransformerEncoderLayer: attention, residual, LayerNorm and the feed-forward block
# ----------------------------------------------------------------------------

def _activation_name(act):
    """nn.TransformerEncoderLayer's activation (a function or a module) as a lesson's name."""
    F = torch.nn.functional
    if act is F.relu or isinstance(act, nn.ReLU) or act == "relu":
        return "relu"
    if act is F.gelu or act == "gelu" or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    if isinstance(act, nn.GELU) and act.approximate == "tanh":
        return "gelu_tanh"
    raise ValueError("activation %r: a lesson has relu, gelu and gelu_tanh (nn.GELU(approximate='tanh'))" % (act,))


def _encoder_layer_parts(layer):
    """nn.TransformerEncoderLayer -> (model dict, weights dict, batch_first)."""
    parts = _parts_mha(layer.self_attn)
    C, H = parts["d_model"], parts["H"]
    n1, n2 = layer.norm1, layer.norm2
    if not (isinstance(n1, nn.LayerNorm) and isinstance(n2, nn.LayerNorm)):
        raise ValueError("%s: norm1 and norm2 must be nn.LayerNorm" % _describe(layer))
    if n1.eps != n2.eps:
        raise ValueError("norm1 eps %g and norm2 eps %g differ; a lesson has one norm_eps" % (n1.eps, n2.eps))
    if n1.weight is None:
        raise ValueError("LayerNorm(elementwise_affine=False) is not supported")
    act = _activation_name(layer.activation)
    l1, l2 = layer.linear1, layer.linear2
    model = {"d_model": C, "n_heads": H}
    if not parts["qkv_bias"]:
        model["qkv_bias"] = False
    if not parts["out_bias"]:
        model["out_bias"] = False
    model.update({"mask_fill": "-inf", "residual_norm": True, "norm_eps": float(n1.eps), "ffn_hidden": l1.out_features})
    if act != "relu":
        model["activation"] = act
    if l1.bias is None:
        model["ffn_bias"] = False
    if getattr(layer, "norm_first", False):
        model["norm_first"] = True
    weights = {n: _values(t) for n, t in parts["weights"].items()}
    weights.update({"ffn_w1": _values(l1.weight), "ffn_w2": _values(l2.weight),
                    "norm_weight": _values(n1.weight), "ffn_norm_weight": _values(n2.weight)})
    if l1.bias is not None:
        weights.update({"ffn_b1": _values(l1.bias), "ffn_b2": _values(l2.bias)})
    if n1.bias is not None:
        weights.update({"norm_bias": _values(n1.bias), "ffn_norm_bias": _values(n2.bias)})
    return model, weights, bool(getattr(layer.self_attn, "batch_first", False))


def _encoder_lesson(module, layers, src, mask, src_key_padding_mask, title, tokens, steps, description, check):
    """The lesson of nn.TransformerEncoderLayer layers run one after another (one layer: the flat
    weights; several: model.n_layers and weights.layers), checked against module (the layer or
    the encoder), which is called as module(src, mask, src_key_padding_mask)."""
    N = len(layers)
    if N > 8:
        raise ValueError("nn.TransformerEncoder with %d layers: a lesson holds 1 to 8 (model.n_layers)" % N)
    configs = [_encoder_layer_parts(layer) for layer in layers]
    model, _, batch_first = configs[0]
    defaults = {"qkv_bias": True, "out_bias": True, "activation": "relu", "ffn_bias": True, "norm_first": False}
    for i, (m, _, bf) in enumerate(configs[1:], 1):
        first, this = dict(defaults, batch_first=batch_first, **model), dict(defaults, batch_first=bf, **m)
        diff = [k for k in first if first[k] != this[k]]
        if diff:
            raise ValueError("nn.TransformerEncoder: layer %d's %s is %s, layer 0's %s; the layers of a lesson "
                             "share one configuration" % (i, diff[0], this[diff[0]], first[diff[0]]))
    C, H = model["d_model"], model["n_heads"]
    x = _as_input(src, "src", batch_first, C)
    batched = x.dim() == 3
    B, L = (x.shape[0] if batched else 1), x.shape[-2]
    mask_json, keep, mod_mask, mod_kpm = _mha_masks(mask, src_key_padding_mask, B, H, L, L, batched)
    if N == 1:
        weights = configs[0][1]
    else:
        items = list(model.items())
        model = dict(items[:2] + [("n_layers", N)] + items[2:])        # after d_model, n_heads
        weights = {"layers": [w for _, w, _ in configs]}
    if N == 1 and module is layers[0]:
        what_en = what_zh = "nn.TransformerEncoderLayer"
    else:
        what_en = "nn.TransformerEncoder, %d layer%s" % (N, "s" if N > 1 else "")
        what_zh = "nn.TransformerEncoder，%d 层" % N
    les = {"title": title or {"en": "From PyTorch: %s, d_model %d, %d heads%s"
                              % (what_en, C, H, ", norm_first" if model.get("norm_first") else ""),
                              "zh": "来自 PyTorch：%s，d_model %d，%d 个头%s"
                              % (what_zh, C, H, "，norm_first" if model.get("norm_first") else "")}}
    les = _assemble(les["title"], description, model, {"query": _values(x)}, mask_json, weights, tokens, steps)
    if check:
        was = module.training
        module.eval()
        try:
            # with gradients on, as the layer's Python code reads: PyTorch's inference fast path
            # (eval, no grad) runs its own kernel, which in 1.13 takes any nn.GELU as exact GELU
            # (and nn.TransformerEncoder's would pack a padded batch into a nested tensor)
            with torch.enable_grad():
                raw = src if isinstance(src, torch.Tensor) else torch.as_tensor(src)
                out = module(raw.float(), mod_mask, mod_kpm).detach()
        finally:
            module.train(was)
        if out.dim() == 3 and not batch_first:
            out = out.transpose(0, 1)
        out = out.unsqueeze(0) if out.dim() == 2 else out
        p = _mismatch(_run_lesson(les, _describe(module))[-1][1], out)
        if p:
            raise ValueError("the lesson does not reproduce %s: %s" % (_describe(module), p))
    return les


def lesson_from_encoder_layer(layer, src, mask=None, src_key_padding_mask=None, title=None, tokens=None,
                              steps=None, description=None, check=True):
    """Builds a lesson from nn.TransformerEncoderLayer (post-norm or norm_first, relu or gelu)
    and its input src ((B, L, C) with batch_first, else (L, B, C); or (L, C)). mask and
    src_key_padding_mask as the layer takes them (bool True = masked, or float additive; or
    mask="causal"). Checked against the layer in eval mode (no dropout) unless check=False."""
    return _encoder_lesson(layer, [layer], src, mask, src_key_padding_mask, title, tokens, steps, description,
                           check)


def lesson_from_encoder(encoder, src, mask=None, src_key_padding_mask=None, title=None, tokens=None,
                        steps=None, description=None, check=True):
    """Builds a lesson from nn.TransformerEncoder: its layers (1 to 8, all of one configuration:
    d_model, heads, norm_first, activation, feed-forward size, eps, biases) become model.n_layers
    and weights.layers (one layer: a one-layer lesson, as lesson_from_encoder_layer), each layer
    reading the one before's output. src, mask and src_key_padding_mask as for
    lesson_from_encoder_layer. A final norm (nn.TransformerEncoder(norm=...)) is refused: a
    lesson has no stage after the last layer. Checked against the encoder unless check=False."""
    layers = list(encoder.layers)
    if encoder.norm is not None:
        raise ValueError("nn.TransformerEncoder(norm=%s): a final norm after the last layer is not in the "
                         "lesson format yet; convert an encoder without it (norm=None)" % type(encoder.norm).__name__)
    if not layers:
        raise ValueError("nn.TransformerEncoder with no layers")
    for i, layer in enumerate(layers):
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise ValueError("nn.TransformerEncoder: layer %d is %s, not nn.TransformerEncoderLayer" % (i, _describe(layer)))
    return _encoder_lesson(encoder, layers, src, mask, src_key_padding_mask, title, tokens, steps, description,
                           check)


# ----------------------------------------------------------------------------
# a GPT-style model: token and position embeddings, pre-norm blocks, final norm, lm_head
# ----------------------------------------------------------------------------

def _gpt_parts(model):
    """The parts of a GPT-style module, in nanoGPT's names (model.transformer.wte, .wpe, .h,
    .ln_f and model.lm_head; the same without .transformer), each block ln_1, attn.c_attn (q|k|v
    fused) and attn.c_proj, ln_2, mlp.c_fc and mlp.c_proj. None when the module has no wte."""
    t = getattr(model, "transformer", model)
    wte, wpe, h = (getattr(t, n, None) for n in ("wte", "wpe", "h"))
    ln_f, head = getattr(t, "ln_f", None), getattr(model, "lm_head", None)
    if not isinstance(wte, nn.Embedding):
        return None
    if not isinstance(wpe, nn.Embedding) or h is None or not isinstance(ln_f, nn.LayerNorm) or not isinstance(head, nn.Linear):
        raise ValueError("%s: a GPT-style model needs wte and wpe (nn.Embedding), h (its blocks), ln_f "
                         "(nn.LayerNorm) and lm_head (nn.Linear)" % _describe(model))
    return wte, wpe, list(h), ln_f, head


def _gpt_block(block, C, n_head, i):
    """One nanoGPT block -> (model keys, layer weights)."""
    need = ("ln_1", "attn", "ln_2", "mlp")
    if any(getattr(block, n, None) is None for n in need):
        raise ValueError("block %d: expected ln_1, attn (c_attn, c_proj), ln_2, mlp (c_fc, c_proj)" % i)
    ca, cp = getattr(block.attn, "c_attn", None), getattr(block.attn, "c_proj", None)
    fc, fp = getattr(block.mlp, "c_fc", None), getattr(block.mlp, "c_proj", None)
    if not all(isinstance(l, nn.Linear) for l in (ca, cp, fc, fp)) or ca.out_features != 3 * C:
        raise ValueError("block %d: expected nn.Linear attn.c_attn (%d -> %d), attn.c_proj, mlp.c_fc and mlp.c_proj"
                         % (i, C, 3 * C))
    acts = [m for m in block.mlp.modules() if isinstance(m, nn.GELU)]
    act = "gelu" if not acts or acts[0].approximate == "none" else "gelu_tanh"
    n1, n2 = block.ln_1, block.ln_2
    if not (isinstance(n1, nn.LayerNorm) and isinstance(n2, nn.LayerNorm)) or n1.eps != n2.eps:
        raise ValueError("block %d: ln_1 and ln_2 must be nn.LayerNorm with one eps" % i)
    wq, wk, wv = ca.weight.split(C, 0)
    w = {"w_q": _values(wq), "w_k": _values(wk), "w_v": _values(wv), "w_o": _values(cp.weight),
         "norm_weight": _values(n1.weight), "ffn_norm_weight": _values(n2.weight),
         "ffn_w1": _values(fc.weight), "ffn_w2": _values(fp.weight)}
    bias = ca.bias is not None
    if bias:
        bq, bk, bv = ca.bias.split(C, 0)
        w.update({"b_q": _values(bq), "b_k": _values(bk), "b_v": _values(bv), "b_o": _values(cp.bias),
                  "ffn_b1": _values(fc.bias), "ffn_b2": _values(fp.bias)})
    if n1.bias is not None:
        w.update({"norm_bias": _values(n1.bias), "ffn_norm_bias": _values(n2.bias)})
    model = {"n_heads": n_head, "qkv_bias": bias, "out_bias": bias, "ffn_bias": bias, "norm_eps": float(n1.eps),
             "ffn_hidden": fc.out_features, "activation": act}
    return model, w


def _gpt_ids(ids, V, P):
    """The token ids a GPT-style model reads, (B, L) int64, checked against its vocabulary and positions."""
    try:
        t = torch.as_tensor(ids)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ValueError("ids: not token ids (%s)" % e) from None
    t = t.unsqueeze(0) if t.dim() == 1 else t
    if t.dim() != 2 or t.numel() == 0:
        raise ValueError("ids: shape %s; expected (B, L) or (L) token ids, at least one" % list(t.shape))
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise ValueError("ids: dtype %s; expected whole numbers (token ids)" % t.dtype)
    bad = (t < 0) | (t >= V)
    if bool(bad.any()):
        b, i = (int(x) for x in bad.nonzero()[0])
        raise ValueError("ids[%d][%d]: %d is outside the vocabulary (0 to %d, wte's rows)" % (b, i, int(t[b, i]), V - 1))
    if t.shape[1] > P:
        raise ValueError("ids: %d tokens, more than the model's %d positions (wpe's rows)" % (t.shape[1], P))
    return t.to(torch.int64)


def lesson_from_gpt(model, ids, vocab=None, n_heads=None, title=None, description=None, check=True):
    """Builds a language-model lesson from a GPT-style module (nanoGPT's names: transformer.wte,
    .wpe, .h[i] with ln_1, attn.c_attn / c_proj, ln_2, mlp.c_fc / c_proj, transformer.ln_f,
    lm_head; lm_head tied to wte or not) and the token ids it reads ((B, L) or (L)): vocab
    (V strings; default "0", "1", …), learned positions, 1 to 8 pre-norm causal blocks, the
    final norm, the logits. Heads: n_heads, else the attention's n_head / n_heads / config.n_head.
    Checked against model(ids) (its logits: the output, or the output's first item) unless check=False."""
    wte, wpe, blocks, ln_f, head = _gpt_parts(model)
    V, C = wte.weight.shape
    if not 1 <= len(blocks) <= 8:
        raise ValueError("%d blocks: a lesson holds 1 to 8 (model.n_layers)" % len(blocks))
    ids = _gpt_ids(ids, V, wpe.weight.shape[0])
    H = n_heads or _int_attr(blocks[0].attn, ("n_head", "n_heads", "num_heads"))[0] \
        or getattr(getattr(model, "config", None), "n_head", None)
    if not H:
        raise ValueError("the number of heads: give n_heads (the attention has no n_head attribute)")
    if isinstance(H, bool) or not isinstance(H, int) or H < 1 or C % H:
        raise ValueError("n_heads=%r: expected a whole number of heads that divides d_model %d" % (H, C))
    configs = [_gpt_block(b, C, int(H), i) for i, b in enumerate(blocks)]
    for i, (mc, _) in enumerate(configs[1:], 1):
        diff = [k for k in mc if mc[k] != configs[0][0][k]]
        if diff:
            raise ValueError("block %d's %s differs from block 0's; the layers of a lesson share one configuration"
                             % (i, diff[0]))
    tied = head.weight is wte.weight or (head.weight.shape == wte.weight.shape and torch.equal(head.weight, wte.weight))
    if head.bias is not None:
        raise ValueError("lm_head has a bias; a lesson's logits have none")
    vocab = list(vocab) if vocab is not None else [str(i) for i in range(V)]
    if len(vocab) != V:
        raise ValueError("vocab has %d entries, wte %d rows" % (len(vocab), V))
    model_json = {"n_layers": len(blocks), "d_model": C}
    model_json.update(configs[0][0])
    model_json.update({"mask_fill": "-inf", "residual_norm": True, "norm_first": True, "positions": "learned",
                       "max_positions": wpe.weight.shape[0], "final_norm": True, "tie_embeddings": bool(tied)})
    if ln_f.eps != model_json["norm_eps"]:
        raise ValueError("ln_f's eps %g differs from the blocks' %g; a lesson has one norm_eps" % (ln_f.eps, model_json["norm_eps"]))
    weights = {"embed": _values(wte.weight), "pos_embed": _values(wpe.weight),
               "final_norm_weight": _values(ln_f.weight), "final_norm_bias": _values(ln_f.bias)}
    if not tied:
        weights["lm_head"] = _values(head.weight)
    if len(blocks) == 1:
        weights.update(configs[0][1])
    else:
        weights["layers"] = [w for _, w in configs]
    les = {"title": title or {"en": "From PyTorch: a GPT-style model, %d layer%s, d_model %d, %d heads"
                              % (len(blocks), "s" if len(blocks) > 1 else "", C, int(H)),
                              "zh": "来自 PyTorch：GPT 式模型，%d 层，d_model %d，%d 个头" % (len(blocks), C, int(H))}}
    if description:
        les["description"] = description
    les.update({"vocab": vocab, "model": model_json, "input": {"ids": ids.tolist()}, "mask": "causal", "weights": weights})
    check_lesson(les)
    if check:
        was = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = model(ids)
        except Exception as e:
            raise ValueError("could not run %s to check the lesson (%s: %s); pass check=False"
                             % (_describe(model), type(e).__name__, e)) from None
        finally:
            model.train(was)
        out = out[0] if isinstance(out, (tuple, list)) else out
        p = _mismatch(dict(_run_lesson(les, _describe(model)))["logits"], out.detach())
        if p:
            raise ValueError("the lesson does not reproduce %s: %s" % (_describe(model), p))
    return les


# ----------------------------------------------------------------------------
# a Llama-style decoder layer
# ----------------------------------------------------------------------------

def _norm_parts(norm, what):
    """(kind, weight, bias, eps) of an RMSNorm (LlamaRMSNorm, nn.RMSNorm) or nn.LayerNorm."""
    if norm is None:
        raise ValueError("%s: missing" % what)
    eps = _num_attr(norm, ["variance_epsilon", "eps", "epsilon"])
    if eps is None:
        raise ValueError("%s: no eps / variance_epsilon attribute" % what)
    w = getattr(norm, "weight", None)
    if w is None:
        raise ValueError("%s: no weight (elementwise_affine=False is not supported)" % what)
    if isinstance(norm, nn.LayerNorm):
        return "layer", w, norm.bias, float(eps)
    if getattr(norm, "bias", None) is not None:
        raise ValueError("%s: an RMSNorm with a bias" % what)
    return "rms", w, None, float(eps)


def lesson_from_llama_layer(layer, x, rope=None, title=None, tokens=None, description=None, n_heads=None,
                            n_kv_heads=None, check=True, forward=None):
    """Builds a lesson from a Llama-style decoder layer written as modules, as transformers'
    LlamaDecoderLayer: input_layernorm, self_attn with q_proj / k_proj / v_proj / o_proj,
    post_attention_layernorm, mlp with gate_proj / up_proj / down_proj (silu), pre-norm,
    causal self-attention. x: (B, L, C) or (L, C).

    rope     {"theta": 10000, "style": "half" | "interleaved", "scaling": {...}} (as the
             lesson's model.rope), or None for none; the layer itself does not say it
    n_heads, n_kv_heads   when the attention module has no num_heads / num_key_value_heads
    check    run the layer (forward(layer, x) if given, else layer(x); a tuple's first item)
             and raise ValueError unless the lesson gives its output
    """
    att, mlp = getattr(layer, "self_attn", None), getattr(layer, "mlp", None)
    if att is None or mlp is None:
        raise ValueError("%s: expected self_attn and mlp submodules (a Llama-style decoder layer)" % _describe(layer))
    lin = {}
    for owner, names in ((att, ("q_proj", "k_proj", "v_proj", "o_proj")), (mlp, ("gate_proj", "up_proj", "down_proj"))):
        for n in names:
            lin[n] = _as_linear(getattr(owner, n, None))
            if lin[n] is None:
                raise ValueError("%s: no %s nn.Linear" % (_describe(owner), n))
    cfg = getattr(att, "config", None)
    H = n_heads or _int_attr(att, ["num_heads", "n_heads"])[0] or getattr(cfg, "num_attention_heads", None)
    if not H:
        raise ValueError("%s: no num_heads attribute; pass n_heads=" % _describe(att))
    C = lin["q_proj"].in_features
    if isinstance(H, bool) or not isinstance(H, int) or H < 1 or lin["q_proj"].out_features % H:
        raise ValueError("n_heads=%r: expected a whole number of heads that divides q_proj's %d outputs"
                         % (H, lin["q_proj"].out_features))
    d = lin["q_proj"].out_features // H
    Hkv = n_kv_heads or _int_attr(att, ["num_key_value_heads", "n_kv_heads"])[0] or \
        getattr(cfg, "num_key_value_heads", None) or lin["k_proj"].out_features // d
    if isinstance(Hkv, bool) or not isinstance(Hkv, int) or Hkv < 1 or H % Hkv or \
            lin["k_proj"].out_features != Hkv * d or lin["v_proj"].out_features != Hkv * d:
        raise ValueError("n_kv_heads=%r: expected a divisor of n_heads %d with k_proj and v_proj of n_kv_heads x %d "
                         "outputs (they have %d and %d)" % (Hkv, H, d, lin["k_proj"].out_features,
                                                             lin["v_proj"].out_features))
    k1, g1, b1, e1 = _norm_parts(getattr(layer, "input_layernorm", None), "input_layernorm")
    k2, g2, b2, e2 = _norm_parts(getattr(layer, "post_attention_layernorm", None), "post_attention_layernorm")
    if k1 != k2 or e1 != e2:
        raise ValueError("the two norms differ (%s eps %g, %s eps %g); a lesson has one kind and one eps" % (k1, e1, k2, e2))
    x3 = x.detach().float()
    x3 = x3.unsqueeze(0) if x3.dim() == 2 else x3
    if x3.dim() != 3 or x3.shape[-1] != C:
        raise ValueError("x: expected (B, L, %d) or (L, %d), got %s" % (C, C, list(x.shape)))
    model = {"d_model": C, "n_heads": H}
    if Hkv != H:
        model["n_kv_heads"] = Hkv
    if C % H or d != C // H:
        model["d_k"] = d
    model["qkv_bias"] = lin["q_proj"].bias is not None
    model["out_bias"] = lin["o_proj"].bias is not None
    model["mask_fill"] = "-inf"
    if rope:
        model["rope"] = dict(rope)
    model.update({"residual_norm": True, "norm": k1, "norm_first": True, "norm_eps": e1,
                  "ffn_hidden": lin["up_proj"].out_features, "activation": "swiglu",
                  "ffn_bias": lin["up_proj"].bias is not None})
    weights = {"w_q": _values(lin["q_proj"].weight), "w_k": _values(lin["k_proj"].weight),
               "w_v": _values(lin["v_proj"].weight), "w_o": _values(lin["o_proj"].weight),
               "ffn_w_gate": _values(lin["gate_proj"].weight), "ffn_w1": _values(lin["up_proj"].weight),
               "ffn_w2": _values(lin["down_proj"].weight), "norm_weight": _values(g1), "ffn_norm_weight": _values(g2)}
    for n, wn in (("q_proj", "b_q"), ("k_proj", "b_k"), ("v_proj", "b_v"), ("o_proj", "b_o"),
                  ("gate_proj", "ffn_b_gate"), ("up_proj", "ffn_b1"), ("down_proj", "ffn_b2")):
        if lin[n].bias is not None:
            weights[wn] = _values(lin[n].bias)
    if b1 is not None:
        weights["norm_bias"], weights["ffn_norm_bias"] = _values(b1), _values(b2)
    les = {"title": title or {"en": "From PyTorch: a Llama-style layer, d_model %d, %d heads" % (C, H),
                              "zh": "来自 PyTorch：Llama 式层，d_model %d，%d 个头" % (C, H)}}
    if description is not None:
        les["description"] = description
    les.update({"model": model, "input": {"query": _values(x3)}, "mask": "causal", "weights": weights})
    if tokens is not None:
        les["tokens"] = tokens
    check_lesson(les)
    if check:
        try:
            with torch.no_grad():
                out = forward(layer, x3) if forward else layer(x3)
        except Exception as e:
            raise ValueError("could not run %s to check the lesson (%s: %s); pass forward= or check=False"
                             % (_describe(layer), type(e).__name__, e)) from None
        out = out[0] if isinstance(out, tuple) else out
        p = _mismatch(_run_lesson(les, _describe(layer))[-1][1], out)
        if p:
            raise ValueError("the lesson does not reproduce %s: %s (is rope= the layer's? is it causal?)"
                             % (_describe(layer), p))
    return les


# ----------------------------------------------------------------------------
# demo
# ----------------------------------------------------------------------------

class DemoAttention(nn.Module):
    """A typical hand-written multi-head attention (the 'custom module' kind)."""

    def __init__(self, d_model=4, n_heads=2):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, L, _ = x.shape
        q = self.q_proj(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2)
        k = self.k_proj(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2)
        v = self.v_proj(x).view(B, L, self.n_heads, self.d_k).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        y = torch.softmax(s, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, L, -1))


def demo_lesson(kind="mha", seed=0):
    """A small lesson from a freshly initialised module (torch.manual_seed(seed))."""
    torch.manual_seed(seed)
    tokens = ["we", "like", "small", "models"]
    x = torch.randint(-4, 5, (2, 4, 4)).float() / 2            # halves: exact in float32
    if kind == "mha":
        mha = nn.MultiheadAttention(4, 2, batch_first=True)
        pad = torch.tensor([[False, False, False, False], [False, False, True, True]])
        return lesson_from_module(
            mha, x, key_padding_mask=pad, tokens=tokens,
            title={"en": "From PyTorch: nn.MultiheadAttention(4, 2) with key padding",
                   "zh": "来自 PyTorch：带键填充掩码的 nn.MultiheadAttention(4, 2)"},
            description="lessons/from_torch.py --demo: nn.MultiheadAttention(4, 2, batch_first=True), "
                        "torch.manual_seed(%d), key_padding_mask [[F,F,F,F],[F,F,T,T]]" % seed)
    if kind == "custom":
        m = DemoAttention(4, 2)
        return lesson_from_module(
            m, x, mask="causal", tokens=tokens,
            title={"en": "From PyTorch: a hand-written attention module, causal",
                   "zh": "来自 PyTorch：手写的注意力模块，因果掩码"},
            description="lessons/from_torch.py --demo --kind custom: DemoAttention(4, 2), "
                        "torch.manual_seed(%d), causal mask" % seed)
    raise ValueError("--kind: mha or custom")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Turn a PyTorch attention module into an attnviz lesson. As a library: "
                    "from from_torch import lesson_from_module, save_lesson (see lessons/README.md). "
                    "It converts nn.MultiheadAttention, hand-written attention modules, "
                    "nn.TransformerEncoderLayer and an nn.TransformerEncoder of several layers "
                    "(1 to 8 of one configuration, no final norm: model.n_layers).")
    ap.add_argument("--demo", metavar="OUT.json", required=True,
                    help="build a demo module and write its lesson to OUT.json")
    ap.add_argument("--kind", choices=["mha", "custom"], default="mha",
                    help="mha: nn.MultiheadAttention with key padding (default); "
                         "custom: a hand-written module with a causal mask")
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed for the demo (default 0)")
    args = ap.parse_args(argv)
    try:
        lesson = demo_lesson(args.kind, args.seed)
        save_lesson(lesson, args.demo)
    except ValueError as e:
        print("from_torch.py: %s" % e, file=sys.stderr)
        return 1
    print("wrote %s (check it with: build/attnviz --check %s)" % (args.demo, args.demo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
