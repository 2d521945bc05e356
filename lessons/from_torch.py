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
    Hugging Face's repeat_kv): n_kv_heads = k outputs / d_k. RoPE and ALiBi are not detected;
  * a language model (any module with an nn.Embedding; lesson_from_gpt): a token nn.Embedding,
    learned positions, 1 to 8 blocks — karpathy/nanoGPT's (its own LayerNorm, bias or not),
    transformers' GPT2Block (Conv1D, NewGELUActivation) or nn.TransformerEncoderLayer —, a final
    norm and a head without bias (or tied to the token embedding), read by type and name;
  * a Llama-style decoder layer (self_attn, mlp, input_layernorm; lesson_from_llama_layer), with
    rope= as the lesson's model.rope.
All of them through lesson_from_module(module, input, ...).

The lesson is checked before it is returned: it is run by lessons/lesson_torch.py (the
Python interpreter of the lesson format) and compared with the module itself (output, and for
nn.MultiheadAttention also the per-head attention weights; for a language model each block's
output, the logits and the loss its forward returns), atol 1e-5 + rtol 1e-4.

Command line:  lessons/from_torch.py --demo OUT.json [--kind mha|custom]
Documentation: lessons/README.md, section "From PyTorch: from_torch.py".
"""

import argparse
import math
import os
import sys

import torch
import torch.nn as nn

__all__ = ["lesson_from_module", "lesson_from_encoder_layer", "lesson_from_encoder", "lesson_from_gpt",
           "lesson_from_llama_layer", "save_lesson", "lesson_text", "lesson_forward", "block_lesson_forward",
           "demo_lesson"]

# the files beside this one: lesson_file.py (the JSON text, the loader's limits, the atomic write),
# lesson_torch.py (the interpreter the checks run), from_torch_parts.py (what the conversions
# share) and from_torch_blocks.py (whole layers and models)
if os.path.dirname(os.path.abspath(__file__)) not in [os.path.abspath(p) for p in sys.path]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lesson_file import check_lesson, check_target, compact_json, lesson_text, save_lesson, to_json  # noqa: E402,F401
from from_torch_parts import (DEFAULT_FILL, FILL_ATTRS, SCALE_ATTRS, _as_input, _assemble, _custom_masks,  # noqa: E402
                              _mha_masks, _mismatch, _num_attr, _parts_custom, _parts_mha, _run_lesson,
                              _run_module, _values, block_lesson_forward, lesson_forward)
from from_torch_blocks import (lesson_from_encoder, lesson_from_encoder_layer, lesson_from_gpt,  # noqa: E402,F401
                               lesson_from_llama_layer)


# ----------------------------------------------------------------------------
# attention modules: nn.MultiheadAttention and hand-written ones
# ----------------------------------------------------------------------------

def lesson_from_module(module, query, key=None, value=None, mask=None, key_padding_mask=None,
                       n_heads=None, title=None, mask_fill=None, scale=None, tokens=None,
                       steps=None, description=None, names=None, mask_convention="keep",
                       check=True, forward=None, rope=None, vocab=None):
    """Builds an attnviz lesson (a dict) from a module and its input: the one entry point for a
    language model, nn.TransformerEncoder(Layer), nn.Transformer (query: the target, key: the source) and a
    Llama-style layer (_lesson_from_whole
    passes them on to their functions), and for an attention module, below.

    module           nn.MultiheadAttention, or a module with q/k/v/out nn.Linear layers
                     (separate, fused q|k|v, or an nn.ModuleList of head modules)
    query            (B, Lq, C) or (Lq, C); for nn.MultiheadAttention with batch_first=False
                     (Lq, B, C) as the module takes it; a language model's token ids (B, L)
    rope             a Llama-style layer's rotary positions, {"theta": …, "style": …} (the layer
                     does not say them); refused for the other kinds
    vocab            a language model's V token strings (default "0", "1", …)
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
    whole = _lesson_from_whole(module, query, key, value, mask, key_padding_mask, rope, vocab, dict(
        n_heads=n_heads, title=title, tokens=tokens, steps=steps, description=description, check=check,
        forward=forward, mask_fill=mask_fill))
    if whole is not None:
        return whole
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


def _lesson_from_whole(module, query, key, value, mask, key_padding_mask, rope, vocab, a):
    """lesson_from_module's other kinds than an attention module — a language model, a Llama-style
    layer, nn.TransformerEncoder, nn.TransformerEncoderLayer — passed on to their functions with
    the arguments they take (a: n_heads, title, tokens, steps, description, check, forward,
    mask_fill); None for an attention module."""
    name = type(module).__name__
    if any(isinstance(m, nn.Embedding) for m in module.modules()):          # a language model
        if key is not None or value is not None or mask not in (None, "causal") or rope is not None:
            raise ValueError("%s reads token ids, causally: give query (the ids) only (no key, value, mask or rope)"
                             % name)
        return lesson_from_gpt(module, query, vocab=vocab, n_heads=a["n_heads"], title=a["title"],
                               description=a["description"], check=a["check"], mask_fill=a["mask_fill"])
    if vocab is not None:
        raise ValueError("vocab= is for a language model (a module with an nn.Embedding); %s has none" % name)
    if all(getattr(module, n, None) is not None for n in ("self_attn", "mlp", "input_layernorm")):
        if key is not None or value is not None or mask not in (None, "causal"):
            raise ValueError("a Llama-style layer attends to its own input, causally: give query only (no key, value "
                             "or mask)")
        return lesson_from_llama_layer(module, query, rope=rope, title=a["title"], tokens=a["tokens"],
                                       description=a["description"], n_heads=a["n_heads"], check=a["check"],
                                       forward=a["forward"])
    if rope is not None:
        raise ValueError("rope= is for a Llama-style decoder layer (self_attn, mlp, input_layernorm); %s is not one"
                         % name)
    if isinstance(module, nn.Transformer):  # an encoder–decoder: query the target, key the source
        if value is not None or key_padding_mask is not None:
            raise ValueError("nn.Transformer: give the target as query and the source as key (no value or "
                             "key_padding_mask)")
        from torch_encdec import lesson_from_transformer
        return lesson_from_transformer(module, query, key, mask=mask, title=a["title"], tokens=a["tokens"],
                                       steps=a["steps"], description=a["description"], check=a["check"])
    if isinstance(module, (nn.TransformerEncoder, nn.TransformerEncoderLayer)):
        if key is not None or value is not None:
            raise ValueError("nn.%s attends to its own input: give query only" % name)
        convert = lesson_from_encoder if isinstance(module, nn.TransformerEncoder) else lesson_from_encoder_layer
        return convert(module, query, mask=mask, src_key_padding_mask=key_padding_mask, title=a["title"],
                       tokens=a["tokens"], steps=a["steps"], description=a["description"], check=a["check"])
    return None


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
                    "nn.TransformerEncoderLayer, an nn.TransformerEncoder of several layers "
                    "(1 to 8 of one configuration, no final norm: model.n_layers), GPT-style "
                    "language models (nanoGPT, transformers' GPT-2, nn.TransformerEncoderLayer "
                    "blocks) and Llama-style decoder layers.")
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
