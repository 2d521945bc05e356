"""from_torch_blocks.py: lessons/from_torch.py's conversions of whole layers and models:
nn.TransformerEncoderLayer and nn.TransformerEncoder (lesson_from_encoder_layer,
lesson_from_encoder), a GPT-style model in nanoGPT's names (lesson_from_gpt) and a Llama-style
decoder layer (lesson_from_llama_layer). Import them from from_torch (see its docstring and
lessons/README.md, "From PyTorch")."""

import torch
import torch.nn as nn

from lesson_file import check_lesson
from from_torch_parts import (_as_input, _as_linear, _assemble, _describe, _int_attr, _mha_masks, _mismatch,
                              _num_attr, _parts_mha, _run_lesson, _values)


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
