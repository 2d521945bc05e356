"""torch_encdec.py — an encoder–decoder (torch.nn.Transformer) as attnviz computes it.

stages(model, src, tgt) returns every stage attnviz records for model.decoder_layers, in its
order and with its names, computed in float32 from the module's own weights, and checks them
against the module itself: forward hooks on every encoder and decoder layer, on each decoder
layer's self_attn and multihead_attn, on encoder.norm, and the module's output (with autograd
on, so the layers' Python code runs, not the inference fast path). lesson_model and
lesson_weights write the module as a lesson's "model" and "weights" (blocks: the encoder's,
then each decoder layer as two: its causal self-attention with norm1, its cross-attention with
norm2 and the FFN with norm3; encoder.norm is enc_norm_*, decoder.norm final_norm_*).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _ln(x, norm):
    return F.layer_norm(x, (x.shape[-1],), norm.weight, norm.bias, norm.eps)


def _attention(mha, xq, xkv, H, mask, fill):
    """One nn.MultiheadAttention as attnviz's stages (without the input and the norms)."""
    C = xq.shape[-1]
    d = C // H
    W, b = mha.in_proj_weight, mha.in_proj_bias
    B, Lq, Lk = xq.shape[0], xq.shape[1], xkv.shape[1]
    q = F.linear(xq, W[:C], b[:C])
    k = F.linear(xkv, W[C:2 * C], b[C:2 * C])
    v = F.linear(xkv, W[2 * C:], b[2 * C:])
    qh = q.view(B, Lq, H, d).transpose(1, 2)
    kh = k.view(B, Lk, H, d).transpose(1, 2)
    vh = v.view(B, Lk, H, d).transpose(1, 2)
    scores = qh @ kh.transpose(-2, -1) / torch.sqrt(torch.tensor(float(d)))
    masked = scores if mask is None else scores.masked_fill(mask == 0, fill)
    attn = torch.softmax(masked, dim=-1)
    head_out = attn @ vh
    concat = head_out.transpose(1, 2).reshape(B, Lq, C)
    output = F.linear(concat, mha.out_proj.weight, mha.out_proj.bias)
    return [("q_proj", q), ("k_proj", k), ("v_proj", v), ("q_heads", qh), ("k_heads", kh), ("v_heads", vh),
            ("scores", scores), ("masked_scores", masked), ("attn", attn), ("head_out", head_out),
            ("concat", concat), ("output", output)], output


def _act(layer):
    a = layer.activation
    return F.gelu if a is F.gelu or isinstance(a, nn.GELU) else F.relu


def _block(out, l, mha, norm_a, x, xkv, H, mask, fill, first, ffn=None):
    """One block: [attn_norm] attention residual_sum [residual_norm] [the FFN]; its output."""
    p = "l%d." % l
    xin = x
    if first:
        xin = _ln(x, norm_a)
        out.append((p + "attn_norm", xin))
        if xkv is x:
            xkv = xin
    st, o = _attention(mha, xin, xkv, H, mask, fill)
    out += [(p + n, t) for n, t in st]
    s = o + x
    out.append((p + "residual_sum", s))
    z = s
    if not first:
        z = _ln(s, norm_a)
        out.append((p + "residual_norm", z))
    if ffn is None:
        return z
    layer, norm_f = ffn
    n = z
    if first:
        n = _ln(z, norm_f)
        out.append((p + "ffn_norm", n))
    h = _act(layer)(F.linear(n, layer.linear1.weight, layer.linear1.bias))
    out.append((p + "ffn_hidden", h))
    f = F.linear(h, layer.linear2.weight, layer.linear2.bias) + z
    out.append((p + "ffn_sum", f))
    if first:
        return f
    y = _ln(f, norm_f)
    out.append((p + "ffn_out", y))
    return y


def _close(name, want, got, atol=2e-5):
    err = (want - got).abs().max().item()
    if not err <= atol * max(1.0, want.abs().max().item()):
        raise AssertionError("%s differs from nn.Transformer's by %g" % (name, err))


def stages(model, src, tgt, fill=-1e9):
    """Every stage of the encoder–decoder model (nn.Transformer, batch_first) on src (B, Ls, C)
    and tgt (B, Lt, C), as [(name, tensor)], checked against the module's own hooks and output."""
    enc, dec = model.encoder.layers, model.decoder.layers
    E, D = len(enc), len(dec)
    H = enc[0].self_attn.num_heads
    first = enc[0].norm_first
    B, Lt = tgt.shape[0], tgt.shape[1]
    causal = torch.tril(torch.ones(Lt, Lt)).expand(B, Lt, Lt)
    seen = {}

    def hook(key):
        def f(_m, _i, o):
            seen[key] = (o[0] if isinstance(o, tuple) else o).detach().clone()
        return f
    handles = [m.register_forward_hook(hook(("enc", i))) for i, m in enumerate(enc)]
    handles += [m.register_forward_hook(hook(("dec", i))) for i, m in enumerate(dec)]
    handles += [m.self_attn.register_forward_hook(hook(("sa", i))) for i, m in enumerate(dec)]
    handles += [m.multihead_attn.register_forward_hook(hook(("ca", i))) for i, m in enumerate(dec)]
    handles.append(model.encoder.norm.register_forward_hook(hook(("mem", 0))))
    try:
        with torch.enable_grad():  # the layers' Python code, not the inference fast path
            want = model(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(Lt)).detach()
    finally:
        for h in handles:
            h.remove()

    out = []
    with torch.no_grad():
        x = src
        for l, layer in enumerate(enc):
            x = _block(out, l, layer.self_attn, layer.norm1, x, x, H, None, fill, first, (layer, layer.norm2))
            _close("encoder layer %d" % l, seen[("enc", l)], x)
        mem = _ln(x, model.encoder.norm)
        out.append(("l%d.enc_norm" % (E - 1), mem))
        _close("the encoder's output", seen[("mem", 0)], mem)
        y = tgt
        for i, layer in enumerate(dec):
            l = E + 2 * i
            out.append(("l%d.mask" % l, causal.clone()))
            n = len(out)
            y = _block(out, l, layer.self_attn, layer.norm1, y, y, H, causal.unsqueeze(1), fill, first)
            _close("decoder layer %d's self-attention" % i, seen[("sa", i)], dict(out[n:])["l%d.output" % l])
            n = len(out)
            y = _block(out, l + 1, layer.multihead_attn, layer.norm2, y, mem, H, None, fill, first, (layer, layer.norm3))
            _close("decoder layer %d's cross-attention" % i, seen[("ca", i)], dict(out[n:])["l%d.output" % (l + 1)])
            _close("decoder layer %d" % i, seen[("dec", i)], y)
        y = _ln(y, model.decoder.norm)
        out.append(("final_norm", y))
        _close("nn.Transformer's output", want, y)
    return out


def _t(x):
    return x.detach().to(torch.float32).tolist()


def lesson_model(model, fill=-1e9):
    """The lesson's "model" for nn.Transformer model."""
    enc, dec = model.encoder.layers, model.decoder.layers
    l0 = enc[0]
    m = {"d_model": l0.self_attn.embed_dim, "n_heads": l0.self_attn.num_heads, "n_layers": len(enc) + 2 * len(dec),
         "decoder_layers": len(dec), "mask_fill": fill, "residual_norm": True,
         "ffn_hidden": l0.linear1.out_features, "norm_eps": l0.norm1.eps}
    if l0.norm_first:
        m["norm_first"] = True
    if _act(l0) is F.gelu:
        m["activation"] = "gelu"
    return m


def _mha(mha, norm):
    C = mha.embed_dim
    W, b = mha.in_proj_weight, mha.in_proj_bias
    return {"w_q": _t(W[:C]), "b_q": _t(b[:C]), "w_k": _t(W[C:2 * C]), "b_k": _t(b[C:2 * C]),
            "w_v": _t(W[2 * C:]), "b_v": _t(b[2 * C:]), "w_o": _t(mha.out_proj.weight), "b_o": _t(mha.out_proj.bias),
            "norm_weight": _t(norm.weight), "norm_bias": _t(norm.bias)}


def _ffn(layer, norm):
    return {"ffn_w1": _t(layer.linear1.weight), "ffn_b1": _t(layer.linear1.bias), "ffn_w2": _t(layer.linear2.weight),
            "ffn_b2": _t(layer.linear2.bias), "ffn_norm_weight": _t(norm.weight), "ffn_norm_bias": _t(norm.bias)}


def lesson_weights(model):
    """The lesson's "weights" for nn.Transformer model: its blocks in attnviz's order."""
    layers = [dict(_mha(l.self_attn, l.norm1), **_ffn(l, l.norm2)) for l in model.encoder.layers]
    for l in model.decoder.layers:
        layers.append(_mha(l.self_attn, l.norm1))
        layers.append(dict(_mha(l.multihead_attn, l.norm2), **_ffn(l, l.norm3)))
    return {"enc_norm_weight": _t(model.encoder.norm.weight), "enc_norm_bias": _t(model.encoder.norm.bias),
            "final_norm_weight": _t(model.decoder.norm.weight), "final_norm_bias": _t(model.decoder.norm.bias),
            "layers": layers}


def random_norms(model, gen):
    """Every LayerNorm's γ and β drawn around 1 and 0 (so that a norm read from the wrong place shows)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1 + 0.3 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.3 * torch.randn(m.bias.shape, generator=gen))


def lesson_from_transformer(model, tgt, src, mask="causal", title=None, tokens=None, steps=None, description=None,
                            check=True):
    """A lesson (dict) from an nn.Transformer and its input: tgt the decoder's (the lesson's query) and src the
    encoder's (its key), (B, L, C) with batch_first, else (L, B, C) as the module takes them; mask "causal" (or None:
    the decoder's self-attention is causal, tgt_mask = generate_square_subsequent_mask). check: the stages are
    computed and compared with the module's hooks and output (stages above). ValueError (one line) for what the
    lesson format cannot hold."""
    if src is None:
        raise ValueError("nn.Transformer: give the source as key= (the encoder's input) and the target as query")
    if mask not in (None, "causal"):
        raise ValueError("nn.Transformer: the lesson's decoder attends causally and its encoder to the whole source; "
                         "expected mask=None or \"causal\"")
    enc, dec = list(model.encoder.layers), list(model.decoder.layers)
    if not enc or not dec:
        raise ValueError("nn.Transformer with %d encoder and %d decoder layers: expected one or more of each"
                         % (len(enc), len(dec)))
    if len(enc) + 2 * len(dec) > 8:
        raise ValueError("nn.Transformer with %d encoder and %d decoder layers is %d blocks (a decoder layer is two); "
                         "a lesson holds at most 8" % (len(enc), len(dec), len(enc) + 2 * len(dec)))
    l0 = enc[0]
    for name, layer in [("encoder.layers.%d" % i, l) for i, l in enumerate(enc)] + \
                       [("decoder.layers.%d" % i, l) for i, l in enumerate(dec)]:
        if layer.norm_first != l0.norm_first or _act(layer) is not _act(l0) or \
                layer.linear1.out_features != l0.linear1.out_features or layer.self_attn.num_heads != l0.self_attn.num_heads:
            raise ValueError("nn.Transformer: %s differs from encoder.layers.0 (norm_first, activation, "
                             "dim_feedforward or nhead); a lesson's layers share one configuration" % name)
        a = layer.activation
        if not (a is F.relu or a is F.gelu or isinstance(a, (nn.ReLU, nn.GELU))):
            raise ValueError("nn.Transformer: %s's activation %s; expected relu or gelu" % (name, a))
    if model.encoder.norm is None or model.decoder.norm is None:
        raise ValueError("nn.Transformer without its encoder.norm or decoder.norm; expected both (as nn.Transformer "
                         "makes them)")
    bf = l0.self_attn.batch_first
    src = torch.as_tensor(src, dtype=torch.float32)
    tgt = torch.as_tensor(tgt, dtype=torch.float32)
    if not bf:
        src, tgt = src.transpose(0, 1), tgt.transpose(0, 1)
    if check:
        moved = not bf
        if moved:  # (stages runs the module as batch_first)
            for m in model.modules():
                if hasattr(m, "batch_first"):
                    m.batch_first = True
        try:
            stages(model, src, tgt)
        except AssertionError as e:
            raise ValueError("the lesson does not reproduce nn.Transformer: %s" % e) from None
        finally:
            if moved:
                for m in model.modules():
                    if hasattr(m, "batch_first"):
                        m.batch_first = False
    C = l0.self_attn.embed_dim
    lesson = {"title": title or {"en": "nn.Transformer: %d encoder + %d decoder layers, d_model %d"
                                 % (len(enc), len(dec), C),
                                 "zh": "nn.Transformer：%d 个编码器层 + %d 个解码器层，d_model %d" % (len(enc), len(dec), C)},
              "model": lesson_model(model), "input": {"query": _t(tgt), "key": _t(src)},
              "weights": lesson_weights(model)}
    for k, v in (("description", description), ("tokens", tokens), ("steps", steps)):
        if v is not None:
            lesson[k] = v
    return lesson
