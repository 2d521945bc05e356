"""from_torch_parts.py: what lessons/from_torch.py's conversions share: finding the q/k/v/out
layers, heads and attributes of a module; PyTorch's mask conventions as a lesson's mask; the
module's input as a lesson's; the check (the lesson, written and read back, run by
lessons/lesson_torch.py and compared with the module, atol 1e-5 + rtol 1e-4)."""

import inspect
import json

import torch
import torch.nn as nn

import lesson_torch  # the lesson format's interpreter, for the checks
from lesson_file import check_lesson, lesson_text

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


def _is_conv1d(obj):
    """Hugging Face's Conv1D (transformers.pytorch_utils, GPT-2's layers): a linear layer whose
    weight is stored transposed, (in, out), y = x·W + b. Told by its class name and nf (its
    output features), as transformers is not imported here."""
    w = getattr(obj, "weight", None)
    return type(obj).__name__ == "Conv1D" and isinstance(getattr(obj, "nf", None), int) and \
        isinstance(w, torch.Tensor) and w.dim() == 2 and w.shape[1] == obj.nf


def _linear_params(obj):
    """(weight, bias or None) of a linear layer, the weight in nn.Linear's (out, in) layout:
    nn.Linear, nn.Sequential(Linear, Dropout...) or Hugging Face's Conv1D (its weight
    transposed). None for anything else."""
    if _is_conv1d(obj):
        return obj.weight.detach().t(), (obj.bias.detach() if obj.bias is not None else None)
    lin = _as_linear(obj)
    if lin is None:
        return None
    return lin.weight.detach(), (lin.bias.detach() if lin.bias is not None else None)


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


def _masked_cells(mask, what, expected):
    """nn.MultiheadAttention's bool (or uint8) mask, or float additive one, as bool: True where masked."""
    t = mask.detach().cpu()
    if t.dtype == torch.bool or t.dtype == torch.uint8:
        return t != 0
    if t.is_floating_point():
        return _float_additive(t, what)
    raise ValueError("%s: dtype %s; %s" % (what, t.dtype, expected))


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
        m = _masked_cells(mask, "attn_mask", "PyTorch takes bool (True = masked) or float (additive)")
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
        p = _masked_cells(key_padding_mask, "key_padding_mask", "expected bool (True = padding)")
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
