"""from_torch_blocks.py: lessons/from_torch.py's conversions of whole layers and models:
nn.TransformerEncoderLayer and nn.TransformerEncoder (lesson_from_encoder_layer,
lesson_from_encoder), a GPT-style model in nanoGPT's names (lesson_from_gpt) and a Llama-style
decoder layer (lesson_from_llama_layer). Import them from from_torch (see its docstring and
lessons/README.md, "From PyTorch")."""

import inspect
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from lesson_file import check_lesson
from from_torch_parts import (_as_input, _as_linear, _assemble, _describe, _int_attr, _linear_params, _mha_masks,
                              _mismatch, _num_attr, _parts_mha, _run_lesson, _values)


# ----------------------------------------------------------------------------
# nn.TransformerEncoderLayer: attention, residual, LayerNorm and the feed-forward block
# ----------------------------------------------------------------------------

# transformers' activation modules (activations.py's ACT2FN): GPT-2's "gelu_new" is NewGELUActivation,
# 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), PyTorch's tanh GELU written out
ACTIVATION_CLASSES = {"NewGELUActivation": "gelu_tanh", "GELUTanh": "gelu_tanh", "PytorchGELUTanh": "gelu_tanh",
                      "FastGELUActivation": "gelu_tanh", "GELUActivation": "gelu", "ReLUActivation": "relu"}


def _activation_name(act):
    """nn.TransformerEncoderLayer's activation (a function or a module) as a lesson's name."""
    F = torch.nn.functional
    if act is F.relu or isinstance(act, nn.ReLU) or act == "relu":
        return "relu"
    if act is F.gelu or act == "gelu" or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    if isinstance(act, nn.GELU) and act.approximate == "tanh":
        return "gelu_tanh"
    if isinstance(act, nn.Module) and type(act).__name__ in ACTIVATION_CLASSES:    # transformers' ACT2FN
        return ACTIVATION_CLASSES[type(act).__name__]
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
# a language model: token (and position) embeddings, blocks, final norm, head
# ----------------------------------------------------------------------------

FLOAT32_MIN = float(torch.finfo(torch.float32).min)
# the names a language model's parts are looked for under (the last part of the module's path),
# in this order; without one of them the only candidate of its kind is taken
TOKEN_EMBED_NAMES = ("wte", "tok_emb", "token_embedding", "tok_embeddings", "embed_tokens", "token_emb",
                     "tok_embedding", "token_embeddings", "word_embeddings", "embedding", "embed", "emb")
POS_EMBED_NAMES = ("wpe", "pos_emb", "position_embedding", "pos_embedding", "position_embeddings", "pos_embed",
                   "pos_embeddings", "positional_embedding")
HEAD_NAMES = ("lm_head", "head", "output", "out", "fc_out", "unembed", "logits", "decoder", "proj")


def _block_kind(b):
    """"encoder" (nn.TransformerEncoderLayer), "gpt" (ln_1, attn, ln_2, mlp: nanoGPT's Block,
    transformers' GPT2Block) or None."""
    if isinstance(b, nn.TransformerEncoderLayer):
        return "encoder"
    if all(isinstance(getattr(b, n, None), nn.Module) for n in ("ln_1", "attn", "ln_2", "mlp")):
        return "gpt"
    return None


def _is_norm(m):
    """nn.LayerNorm, or a module of its own whose class is named …Norm (nanoGPT's LayerNorm,
    LlamaRMSNorm, nn.RMSNorm) with a weight."""
    return isinstance(m, nn.LayerNorm) or \
        (type(m).__name__.endswith("Norm") and isinstance(getattr(m, "weight", None), torch.Tensor))


def _pick(cands, names):
    """The (path, module) among cands whose last path part comes first in names, or None."""
    for n in names:
        for c in cands:
            if c[0].split(".")[-1] == n:
                return c
    return None


def _lm_parts(model):
    """A language model's parts, found by type (and by name where several fit): the blocks (the
    first nn.ModuleList, nn.Sequential or nn.TransformerEncoder whose items are all blocks of one
    kind), outside them the token and position nn.Embedding, the final norm and the head (a linear
    layer d_model -> vocab; none: the logits come from the token embedding). Anything else with
    parameters is refused, as the lesson would have no place for it."""
    what = _describe(model)
    blocks = bpath = None
    for path, m in model.named_modules():
        if isinstance(m, nn.TransformerEncoder):
            items, bp = list(m.layers), path + ".layers" if path else "layers"
        elif isinstance(m, (nn.ModuleList, nn.Sequential)):
            items, bp = list(m), path
        else:
            continue
        if items and all(_block_kind(b) for b in items):
            blocks, bpath = items, bp
            break
    if blocks is None:
        raise ValueError("%s: no blocks found; expected an nn.ModuleList (or nn.Sequential, nn.TransformerEncoder) of "
                         "nn.TransformerEncoderLayer, or of GPT blocks (ln_1, attn with c_attn and c_proj, ln_2, mlp "
                         "with c_fc and c_proj)" % what)
    kinds = [_block_kind(b) for b in blocks]
    if len(set(kinds)) > 1:
        i = next(j for j, k in enumerate(kinds) if k != kinds[0])
        kind = {"gpt": "a GPT block (ln_1, attn, ln_2, mlp)", "encoder": "an nn.TransformerEncoderLayer"}
        raise ValueError("%s.%d is %s, %s.0 %s; the layers of a lesson share one configuration"
                         % (bpath, i, kind[kinds[i]], bpath, kind[kinds[0]]))
    embeds, norms, lins = [], [], []
    for path, m in model.named_modules():
        if not path or path == bpath or path.startswith(bpath + "."):
            continue
        if isinstance(m, nn.Embedding):
            embeds.append((path, m))
        elif _linear_params(m) is not None and not isinstance(m, nn.Sequential):
            lins.append((path, m))
        elif _is_norm(m):
            norms.append((path, m))
        elif next(m.parameters(recurse=False), None) is not None:
            raise ValueError("%s (%s): a module with weights the lesson has no place for; a language model here is a "
                             "token nn.Embedding, learned positions (nn.Embedding), the blocks, a final norm and the head"
                             % (path, _describe(m)))
    if not embeds:
        raise ValueError("%s: no nn.Embedding outside %s; a language model here reads its token ids with one"
                         % (what, bpath))
    tok = _pick(embeds, TOKEN_EMBED_NAMES) or embeds[0]
    rest = [e for e in embeds if e is not tok]
    pos = _pick(rest, POS_EMBED_NAMES) or (rest[0] if len(rest) == 1 else None)
    extra = [e[0] for e in rest if e is not pos]
    if extra:
        raise ValueError("%s: nn.Embedding %s besides the tokens' (%s) and the positions' (%s); a lesson has no other "
                         "embedding" % (what, ", ".join(extra), tok[0], pos[0] if pos else "none"))
    V, C = tok[1].weight.shape
    if pos is not None and pos[1].weight.shape[1] != C:
        raise ValueError("%s: nn.Embedding(%d, %d), expected d_model %d columns as %s" %
                         ((pos[0],) + tuple(pos[1].weight.shape) + (C, tok[0])))
    heads = [c for c in lins if tuple(_linear_params(c[1])[0].shape) == (V, C)]
    head = _pick(heads, HEAD_NAMES) or (heads[0] if len(heads) == 1 else None)
    extra = [c[0] for c in lins if c is not head]
    if extra:
        raise ValueError("%s: linear layer %s besides the head (%s); a lesson's head is one linear layer d_model %d -> "
                         "vocabulary %d" % (what, ", ".join(extra), head[0] if head else "none", C, V))
    if len(norms) > 1:
        raise ValueError("%s: norms %s outside the blocks; a lesson has one norm after the last block"
                         % (what, ", ".join(c[0] for c in norms)))
    norm = norms[0] if norms else None
    return dict(what=what, blocks=blocks, bpath=bpath, kind=kinds[0], tok=tok, pos=pos, head=head, norm=norm, V=V, C=C)


def _mlp_activation(mlp, path):
    """A GPT block's MLP activation as a lesson's name: its activation module (nn.GELU, nn.ReLU,
    transformers' NewGELUActivation...) or function attribute (act, activation, act_fn); "gelu"
    when it has neither (F.gelu called in its forward; the check confirms it)."""
    for n, m in mlp.named_children():
        if _linear_params(m) is None and not isinstance(m, (nn.Dropout, nn.Identity)):
            try:
                return _activation_name(m)
            except ValueError:
                raise ValueError("%s.mlp.%s: %s is not an activation a lesson has (relu, gelu, gelu_tanh)"
                                 % (path, n, type(m).__name__)) from None
    for n in ("act", "activation", "act_fn"):
        f = getattr(mlp, n, None)
        if callable(f):
            try:
                return _activation_name(f)
            except ValueError:
                raise ValueError("%s.mlp.%s: %r is not an activation a lesson has (relu, gelu, gelu_tanh)"
                                 % (path, n, f)) from None
    return "gelu"


def _mask_fill_of(att):
    """The number an attention module writes over masked scores, read from its class's source:
    float32's lowest when it says torch.finfo(…).min and nothing of -inf (transformers' GPT-2),
    else "-inf" (nanoGPT, nn.MultiheadAttention). A causal model's output is the same either way
    (no row is fully masked); the masked cells of the lesson's scores show the module's number."""
    try:
        src = inspect.getsource(type(att))
    except (OSError, TypeError):
        return "-inf"
    return FLOAT32_MIN if "finfo" in src and "-inf" not in src else "-inf"


def _gpt_block(block, C, n_head, path, i):
    """One GPT block (nanoGPT's Block: nn.Linear and its own LayerNorm with an optional bias;
    transformers' GPT2Block: Conv1D, nn.LayerNorm, NewGELUActivation) -> (model keys, layer weights)."""
    att, mlp = block.attn, block.mlp
    lin = {n: _linear_params(getattr(o, n.split(".")[1], None))
           for n, o in (("attn.c_attn", att), ("attn.c_proj", att), ("mlp.c_fc", mlp), ("mlp.c_proj", mlp))}
    for n, l in lin.items():
        if l is None:
            raise ValueError("%s.%s: expected a linear layer (nn.Linear, or transformers' Conv1D)" % (path, n))
    (wa, ba), (wp, bp), (w1, b1), (w2, b2) = (lin[n] for n in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"))
    if tuple(wa.shape) != (3 * C, C) or tuple(wp.shape) != (C, C) or w1.shape[1] != C or tuple(w2.shape) != (C, w1.shape[0]):
        raise ValueError("%s: expected attn.c_attn %d -> %d (q|k|v), attn.c_proj %d -> %d, mlp.c_fc %d -> F and mlp.c_proj "
                         "F -> %d; they are %s" % (path, C, 3 * C, C, C, C, C, ", ".join(
                             "%d -> %d" % (w.shape[1], w.shape[0]) for w in (wa, wp, w1, w2))))
    if (b1 is None) != (b2 is None) or (ba is None) != (bp is None):
        raise ValueError("%s: biases on some linear layers and not on others; a lesson has them on q, k, v and out, "
                         "and on both feed-forward layers, or not" % path)
    k1, g1, n1b, e1 = _norm_parts(block.ln_1, path + ".ln_1", 1e-5)
    k2, g2, n2b, e2 = _norm_parts(block.ln_2, path + ".ln_2", 1e-5)
    if k1 != k2 or e1 != e2:
        raise ValueError("%s: ln_1 (%s, eps %g) and ln_2 (%s, eps %g) differ; a lesson has one norm and one eps"
                         % (path, k1, e1, k2, e2))
    wq, wk, wv = wa.split(C, 0)
    w = {"w_q": _values(wq), "w_k": _values(wk), "w_v": _values(wv), "w_o": _values(wp),
         "norm_weight": _values(g1), "ffn_norm_weight": _values(g2), "ffn_w1": _values(w1), "ffn_w2": _values(w2)}
    if ba is not None:
        bq, bk, bv = ba.split(C, 0)
        w.update({"b_q": _values(bq), "b_k": _values(bk), "b_v": _values(bv), "b_o": _values(bp)})
    if b1 is not None:
        w.update({"ffn_b1": _values(b1), "ffn_b2": _values(b2)})
    if n1b is not None:
        w.update({"norm_bias": _values(n1b), "ffn_norm_bias": _values(n2b)})
    model = {"n_heads": n_head, "qkv_bias": ba is not None, "out_bias": bp is not None, "ffn_bias": b1 is not None}
    if k1 == "rms":
        model["norm"] = "rms"
    model.update({"norm_eps": e1, "ffn_hidden": w1.shape[0], "activation": _mlp_activation(mlp, path)})
    # transformers' GPT2Attention: scale_attn_weights (÷√d_k or not), scale_attn_by_inverse_layer_idx (÷ layer + 1)
    d = C // n_head
    scale = math.sqrt(d) if getattr(att, "scale_attn_weights", True) else 1.0
    if getattr(att, "scale_attn_by_inverse_layer_idx", False):
        scale *= float((getattr(att, "layer_idx", None) or i) + 1)
    if scale != math.sqrt(d):
        model["scale"] = scale
    model["mask_fill"] = _mask_fill_of(att)
    return model, w


def _gpt_ids(ids, V, P):
    """The token ids a language model reads, (B, L) int64, checked against its vocabulary and positions."""
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
        raise ValueError("ids[%d][%d]: %d is outside the vocabulary (0 to %d, the token embedding's rows)"
                         % (b, i, int(t[b, i]), V - 1))
    if P is not None and t.shape[1] > P:
        raise ValueError("ids: %d tokens, more than the model's %d positions (the position embedding's rows)" % (t.shape[1], P))
    return t.to(torch.int64)


def _lm_blocks(p, n_heads):
    """The blocks of a language model -> (model keys they share, [layer weights], batch_first)."""
    C, bpath, blocks = p["C"], p["bpath"], p["blocks"]
    if p["kind"] == "encoder":
        configs = []
        for i, b in enumerate(blocks):
            m, w, bf = _encoder_layer_parts(b)
            m = {k: v for k, v in m.items() if k != "d_model"}
            m.setdefault("norm_first", False)
            configs.append((dict(m, batch_first=bf), w))
        if n_heads is not None and n_heads != configs[0][0]["n_heads"]:
            raise ValueError("n_heads=%r but %s.0.self_attn has %d heads" % (n_heads, bpath, configs[0][0]["n_heads"]))
    else:
        att = blocks[0].attn
        H = n_heads or _int_attr(att, ("n_head", "n_heads", "num_heads"))[0] or \
            _int_attr(getattr(att, "config", None) or att, ("n_head", "num_attention_heads"))[0]
        if not H:
            raise ValueError("%s.0.attn: the number of heads not found (no n_head / n_heads / num_heads); give n_heads="
                             % bpath)
        if isinstance(H, bool) or not isinstance(H, int) or H < 1 or C % H:
            raise ValueError("n_heads=%r: expected a whole number of heads that divides d_model %d" % (H, C))
        configs = [_gpt_block(b, C, H, "%s.%d" % (bpath, i), i) for i, b in enumerate(blocks)]
    first = configs[0][0]
    for i, (mc, _) in enumerate(configs[1:], 1):
        diff = [k for k in list(first) + list(mc) if mc.get(k) != first.get(k)]
        if diff:
            key, scale = diff[0], math.sqrt(C // first["n_heads"])   # a scale a block does not write is √d_k
            show = lambda m: "%g" % m.get(key, scale) if key == "scale" else repr(m.get(key))
            raise ValueError("%s.%d's %s is %s, %s.0's %s; the layers of a lesson share one configuration"
                             % (bpath, i, key, show(mc), bpath, show(first)))
    cfg = dict(configs[0][0])
    return cfg, [w for _, w in configs], cfg.pop("batch_first", True)


def _lm_logits(out, V, call):
    """(logits, loss or None) from what a language model returns: the logits, a tuple (nanoGPT's
    (logits, loss); transformers' (loss, logits, …) with return_dict=False) or an output with
    .logits and .loss (transformers' CausalLMOutputWithCrossAttentions)."""
    if isinstance(out, torch.Tensor):
        return out, None
    logits, loss = getattr(out, "logits", None), getattr(out, "loss", None)
    if logits is None and isinstance(out, dict):
        logits, loss = out.get("logits"), out.get("loss")
    if logits is None and isinstance(out, (tuple, list)):
        ts = [t for t in out if isinstance(t, torch.Tensor)]
        logits = next((t for t in ts if t.dim() == 3 and t.shape[-1] == V), None)
        loss = next((t for t in ts if t.dim() == 0), None)
    if not isinstance(logits, torch.Tensor):
        raise ValueError("%s returned %s; expected the logits (B, L, %d), a tuple holding them, or an output with "
                         ".logits" % (call, type(out).__name__, V))
    return logits, loss


def _lm_check(model, les, ids, p, batch_first):
    """Runs the model and the lesson and raises ValueError unless they agree: each block's output
    (every position, caught by a forward hook; unless the forward calls none of them), the logits model(ids) returns (all positions, or
    the last only, as nanoGPT's inference shortcut), and when its forward takes targets (nanoGPT)
    or labels (transformers) the logits and the loss of that call too."""
    what, V, N = p["what"], p["V"], len(p["blocks"])
    st = dict(_run_lesson(les, what))
    B, L = ids.shape
    targets = torch.full_like(ids, -1)
    targets[:, :-1] = ids[:, 1:]                       # the next token; the last position none
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    calls = [("model(ids)", {})]
    if "targets" in params:
        calls.append(("model(ids, targets)", {"targets": targets}))
    elif "labels" in params:
        calls.append(("model(ids, labels=ids)", {"labels": ids}))
    outs = {}

    def keep(k):                                       # a hook that returns nothing leaves the output as it is
        def hook(module, inputs, out):
            outs.setdefault(k, out[0] if isinstance(out, (tuple, list)) else out)
        return hook
    hooks = [b.register_forward_hook(keep(k)) for k, b in enumerate(p["blocks"])]
    was = model.training
    model.eval()
    results = []
    try:
        # with gradients on: nn.TransformerEncoderLayer's Python code, not its inference fast path
        with torch.enable_grad():
            for call, kw in calls:
                try:
                    out = model(ids, **kw)
                except Exception as e:
                    raise ValueError("could not run %s to check the lesson (%s: %s: %s); pass check=False"
                                     % (what, call, type(e).__name__, e)) from None
                results.append((call, kw) + _lm_logits(out, V, call))
    finally:
        for h in hooks:
            h.remove()
        model.train(was)
    for k in range(N):
        pre = "l%d." % k if N > 1 else ""
        got = st.get(pre + "ffn_out", st.get(pre + "ffn_sum"))
        if not outs:
            break                                      # a forward that runs the blocks' code inline: the logits tell
        if k not in outs:
            raise ValueError("the lesson does not reproduce %s: model(ids) did not call block %s.%d" % (what, p["bpath"], k))
        want = outs[k].detach()
        want = want.transpose(0, 1) if not batch_first and want.dim() == 3 else want
        bad = _mismatch(got, want)
        if bad:
            raise ValueError("the lesson does not reproduce %s: the output of block %s.%d: %s (is it causal? does its "
                             "forward do more than the lesson's layer?)" % (what, p["bpath"], k, bad))
    logits = st["logits"]
    for call, kw, got, loss in results:
        got = got.detach()
        last = got.dim() == 3 and got.shape[1] == 1 and L > 1
        bad = _mismatch(logits[:, -1:] if last else logits, got)
        if bad:
            raise ValueError("the lesson does not reproduce %s: the logits of %s%s: %s" % (
                what, call, " (the last position, all it returns)" if last else "", bad))
        if kw and loss is not None and L > 1:
            want = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1)
            bad = _mismatch(want, loss.detach())
            if bad:
                raise ValueError("the lesson does not reproduce %s: the loss of %s: %s" % (what, call, bad))


def lesson_from_gpt(model, ids, vocab=None, n_heads=None, title=None, description=None, check=True, mask_fill=None):
    """Builds a language-model lesson from a GPT-style module and the token ids it reads ((B, L)
    or (L)): a token nn.Embedding, learned positions (an nn.Embedding, or none), 1 to 8 blocks of
    one configuration, a final norm (or none) and the head (a linear layer d_model -> vocabulary
    without a bias; none or tied: the token embedding). The blocks: nanoGPT's (ln_1, attn.c_attn,
    attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj; nn.Linear, its own LayerNorm with an optional bias),
    transformers' GPT2Block (the same names, Conv1D layers, NewGELUActivation) or
    nn.TransformerEncoderLayer (pre- or post-norm; the model calls them with a causal mask). The
    parts are found by type, and by name (lessons/README.md) where several fit. vocab: V strings
    (default "0", "1", …). Heads: n_heads, else the attention's n_head / n_heads / num_heads.
    mask_fill: the masked scores' number, "-inf" or a finite number (default: the module's, see
    _mask_fill_of; the check still compares the outputs).
    Checked against the model unless check=False (_lm_check: each block's output, the logits and
    the loss the forward returns)."""
    p = _lm_parts(model)
    V, C, N = p["V"], p["C"], len(p["blocks"])
    if not 1 <= N <= 8:
        raise ValueError("%s: %d blocks; a lesson holds 1 to 8 (model.n_layers)" % (p["bpath"], N))
    pos = p["pos"][1] if p["pos"] else None
    ids = _gpt_ids(ids, V, pos.weight.shape[0] if pos is not None else None)
    cfg, layers, batch_first = _lm_blocks(p, n_heads)
    head = p["head"][1] if p["head"] else None
    wte = p["tok"][1].weight
    if head is not None and _linear_params(head)[1] is not None:
        raise ValueError("%s: the head has a bias; a lesson's logits have none (attnviz's core has no lm_head bias): "
                         "make it bias=False" % p["head"][0])
    tied = head is None or head.weight is wte or (_linear_params(head)[0].shape == wte.shape and
                                                   torch.equal(_linear_params(head)[0], wte.detach()))
    vocab = list(vocab) if vocab is not None else [str(i) for i in range(V)]
    if len(vocab) != V:
        raise ValueError("vocab has %d entries, the token embedding %s %d rows" % (len(vocab), p["tok"][0], V))
    fill = cfg.pop("mask_fill")
    if mask_fill is not None:
        if isinstance(mask_fill, float) and math.isinf(mask_fill) and mask_fill < 0:
            mask_fill = "-inf"
        if mask_fill != "-inf" and (isinstance(mask_fill, bool) or not isinstance(mask_fill, (int, float))
                                    or not math.isfinite(mask_fill)):
            raise ValueError("mask_fill: %r; use a finite number or '-inf'" % (mask_fill,))
        fill = mask_fill
    model_json = {"n_layers": N, "d_model": C}
    model_json.update(cfg)
    model_json.update({"mask_fill": fill, "residual_norm": True, "norm_first": cfg.get("norm_first", True)})
    if not model_json["norm_first"]:
        del model_json["norm_first"]
    model_json["positions"] = "learned" if pos is not None else "none"
    if pos is not None:
        model_json["max_positions"] = pos.weight.shape[0]
    weights = {"embed": _values(wte)}
    if pos is not None:
        weights["pos_embed"] = _values(pos.weight)
    model_json["final_norm"] = p["norm"] is not None
    if p["norm"] is not None:
        kind, g, b, eps = _norm_parts(p["norm"][1], p["norm"][0], 1e-5)
        if kind != cfg.get("norm", "layer") or eps != cfg["norm_eps"]:
            raise ValueError("%s (%s norm, eps %g) differs from the blocks' (%s, eps %g); a lesson has one norm and "
                             "one eps" % (p["norm"][0], kind, eps, cfg.get("norm", "layer"), cfg["norm_eps"]))
        weights["final_norm_weight"] = _values(g)
        if b is not None:
            weights["final_norm_bias"] = _values(b)
    model_json["tie_embeddings"] = bool(tied)
    if not tied:
        weights["lm_head"] = _values(_linear_params(head)[0])
    if N == 1:
        weights.update(layers[0])
    else:
        weights["layers"] = layers
    name = type(model).__name__
    les = {"title": title or {"en": "From PyTorch: %s, %d layer%s, d_model %d, %d heads"
                              % (name, N, "s" if N > 1 else "", C, cfg["n_heads"]),
                              "zh": "来自 PyTorch：%s，%d 层，d_model %d，%d 个头" % (name, N, C, cfg["n_heads"])}}
    if description:
        les["description"] = description
    les.update({"vocab": vocab, "model": model_json, "input": {"ids": ids.tolist()}, "mask": "causal", "weights": weights})
    check_lesson(les)
    if check:
        _lm_check(model, les, ids, p, batch_first)
    return les


# ----------------------------------------------------------------------------
# a Llama-style decoder layer
# ----------------------------------------------------------------------------

def _norm_parts(norm, what, default_eps=None):
    """(kind, weight, bias, eps) of an RMSNorm (LlamaRMSNorm, nn.RMSNorm: "RMS" in its class name)
    or a LayerNorm (nn.LayerNorm, or a class of its own such as nanoGPT's, whose bias may be None).
    Without an eps / variance_epsilon attribute: default_eps (nanoGPT's LayerNorm passes 1e-5 to
    F.layer_norm in its forward; the check confirms it), else an error."""
    if norm is None:
        raise ValueError("%s: missing" % what)
    eps = _num_attr(norm, ["variance_epsilon", "eps", "epsilon"])
    if eps is None and default_eps is None:
        raise ValueError("%s: no eps / variance_epsilon attribute" % what)
    eps = default_eps if eps is None else eps
    w = getattr(norm, "weight", None)
    if w is None:
        raise ValueError("%s: no weight (elementwise_affine=False is not supported)" % what)
    if isinstance(norm, nn.LayerNorm) or (default_eps is not None and "RMS" not in type(norm).__name__.upper()):
        return "layer", w, getattr(norm, "bias", None), float(eps)
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
