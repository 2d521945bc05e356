"""lesson_torch.py: the lesson format, interpreted in PyTorch: read a lesson, build its torch
modules, run them stage by stage.

    stages = run_lesson(lesson)        # [(stage name, tensor)], in attnviz's order and names
    dict(stages)["output"]             # (B, Lq, d_model); a language model's "logits", "probs"

resolve_lesson(lesson) reads a lesson dict (the model, input, mask, weights or {"init":
{"seed"}}, a vocab with text or ids) into a configuration, tensors and per-layer weights, and
raises LessonError where it cannot; lesson_module(resolved, per_head) builds its modules
(lessons/torch_modules.py: MultiHeadAttention or PerHeadMultiHeadAttention, AttentionBlock,
BlockStack of n_layers, and a language model's embedding and head: lm_weights, lm_tail),
which record every stage.

The one Python reading of the format: tests/gen_reference.py writes its references with it
(and builds its variants from its modules), tests/check_random.py compares attnviz with it,
lessons/from_torch.py checks every lesson it builds with it, and the training scripts
(lessons/trained.py) run their lessons from their own JSON with it. The C program is the
other reading (src/core/attn_json.c, lesson.c).
"""

import json
import math

import numpy as np
import torch
import torch.nn.functional as F

# the modules a lesson is built from
from torch_modules import (INIT_ORDER, NORM_NAMES, _M64, BlockStack, LessonError, init_tensor,
                           make_block, sliding_window_mask, window_mask)
import torch_mla  # noqa: F401,E402  (DeepSeek's attention, which make_block builds: imported while on the path)
import torch_delta  # noqa: F401,E402  (linear attention and Gated DeltaNet, which make_block builds)
import bpe  # noqa: E402  (byte-pair encoding, which tokenize_bpe uses; imported while on the path:
            # tests/gen_reference.py loads this file by its path)

# ----------------------------------------------------------------------------
# lesson interpreter (independent of the modules above)
# ----------------------------------------------------------------------------

def parse_tensor(v, what):
    if isinstance(v, dict):
        shape = [int(s) for s in v["shape"]]
        if "data" in v:
            arr = np.asarray(v["data"], dtype=np.float64)
        elif "arange" in v:
            a = v["arange"]
            step = a[2] if len(a) > 2 else 1
            arr = np.arange(a[0], a[1], step, dtype=np.float64)
        else:
            raise LessonError("%s: tensor object needs data or arange" % what)
        if arr.size != int(np.prod(shape)):
            raise LessonError("%s: %d values for shape %s" % (what, arr.size, shape))
        arr = arr.reshape(shape)
    else:
        arr = np.asarray(v, dtype=np.float64)
    return torch.from_numpy(arr.astype(np.float32))


# ---- language-model lessons: a vocab, token ids in, logits and probabilities out ----------

LM_MODEL_KEYS = ["positions", "max_positions", "final_norm", "tie_embeddings", "temperature", "top_k", "top_p"]
LM_WEIGHTS = ["embed", "pos_embed", "final_norm_weight", "final_norm_bias", "lm_head"]
LM_INIT_INDEX = {"embed": 1000, "pos_embed": 1001, "lm_head": 1002}   # the generator's tensor index


def tokenize(text, vocab, tokenizer, what):
    """A text's token ids. "char": each Unicode character (each code point, as Python iterates a
    str: a JSON surrogate pair is one character, a combining accent its own) is one token; "word":
    the text split on the space character alone, text.split(" ") with the empty pieces of repeated,
    leading or trailing spaces dropped (a tab or newline stays inside its word). Every piece must
    be a vocab entry."""
    if not isinstance(text, str):
        raise LessonError("%s: a string" % what)
    if tokenizer == "bpe":  # (tokenize_bpe: the lesson's merges)
        raise LessonError("%s: the bpe tokenizer needs the lesson's merges (tokenize_bpe)" % what)
    pieces = list(text) if tokenizer == "char" else [w for w in text.split(" ") if w != ""]
    index = {s: i for i, s in enumerate(vocab)}
    for piece in pieces:
        if piece not in index:
            raise LessonError("%s: %s is not in the vocab" % (what, json.dumps(piece, ensure_ascii=False)))
    return [index[piece] for piece in pieces]


def tokenize_bpe(text, vocab, merges):
    """A text's token ids with byte-pair encoding (lessons/bpe.py: byte i is the vocab entry
    whose bytes are that byte; merges as the lesson writes them, pairs of vocab strings)."""
    ids = {bpe.text_bytes(v): i for i, v in enumerate(vocab)}
    byte_id = [ids[bytes([b])] for b in range(256)]
    pairs = [(ids[bpe.text_bytes(a)], ids[bpe.text_bytes(b)]) for a, b in merges]
    made = [ids[bpe.text_bytes(a) + bpe.text_bytes(b)] for a, b in merges]
    # bpe.encode numbers tokens as bytes 0-255 then 256 + merge; map to the lesson's ids
    own = list(range(256)) + [256 + i for i in range(len(merges))]
    to_lesson = {o: (byte_id[o] if o < 256 else made[o - 256]) for o in own}
    from_lesson = {v: k for k, v in to_lesson.items()}
    return [to_lesson[t] for t in bpe.encode(text, [(from_lesson[a], from_lesson[b]) for a, b in pairs])]


def resolve_lm_input(lesson, d_model):
    """The vocab, the token ids (B, L) from input.text or input.ids, and model's language-model keys."""
    vocab = lesson["vocab"]
    if not isinstance(vocab, list) or not 1 <= len(vocab) <= 1024 or \
            not all(isinstance(s, str) and s != "" for s in vocab):
        raise LessonError("vocab: 1 to 1024 non-empty strings")
    if len(set(vocab)) != len(vocab):
        raise LessonError("vocab: the strings must be distinct")
    tokenizer = lesson.get("tokenizer", "char")
    if tokenizer not in ("char", "word", "bpe"):
        raise LessonError("tokenizer: char, word or bpe")
    if "tokens" in lesson:
        raise LessonError("tokens: a language-model lesson's labels are its vocab strings")
    inp = lesson["input"]
    for key in inp:
        if key not in ("text", "ids", "position_ids"):
            raise LessonError("input.%s: with a vocab the input is text or ids" % key)
    if ("text" in inp) == ("ids" in inp):
        raise LessonError("input: text or ids, one of them")
    if "text" in inp:
        texts = inp["text"] if isinstance(inp["text"], list) else [inp["text"]]
        if tokenizer == "bpe":
            rows = [tokenize_bpe(t, vocab, lesson["merges"]) for t in texts]
        else:
            rows = [tokenize(t, vocab, tokenizer, "input.text[%d]" % i if isinstance(inp["text"], list) else "input.text")
                    for i, t in enumerate(texts)]
    else:
        rows = inp["ids"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise LessonError("input.ids: (B, L) whole numbers")
        for r in rows:
            for i in r:
                if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(vocab):
                    raise LessonError("input.ids: whole numbers 0..%d" % (len(vocab) - 1))
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise LessonError("input: every text the same number of tokens, at least one")
    ids = torch.tensor(rows, dtype=torch.int64)
    m = lesson["model"]
    positions = m.get("positions", "none")
    if positions not in ("none", "learned", "sinusoidal"):
        raise LessonError("model.positions: none, learned or sinusoidal")
    L = ids.shape[1]
    max_pos = int(m.get("max_positions", L))
    if positions == "learned" and max_pos < L:
        raise LessonError("model.max_positions: %d is fewer than the %d tokens" % (max_pos, L))
    if positions == "sinusoidal" and d_model % 2:
        raise LessonError("model.positions sinusoidal: d_model must be even")
    temperature = float(np.float32(m.get("temperature", 1)))
    if not temperature > 0:
        raise LessonError("model.temperature: above 0")
    return dict(vocab=vocab, ids=ids, positions=positions, max_positions=max_pos,
                final_norm=bool(m.get("final_norm", True)), tie=bool(m.get("tie_embeddings", False)),
                temperature=temperature)


def sinusoidal_positions(L, C):
    """The Annotated Transformer's PositionalEncoding, (L, C), in float32:
    pe[pos, 2i] = sin(pos·div_i), pe[pos, 2i+1] = cos(pos·div_i), div = exp(2i·(−ln 10000 / C))."""
    pe = torch.zeros(L, C)
    position = torch.arange(0, L).unsqueeze(1).to(torch.float32)
    div = torch.exp(torch.arange(0, C, 2, dtype=torch.float32) * (-math.log(10000.0) / C))
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)
    return pe


def lm_weights(lm, lesson, wj, seed, d_model, norm, eps):
    """Reads the language model's own tensors (weights.embed, pos_embed, final_norm_weight,
    final_norm_bias, lm_head: given, else seeded as tensors 1000, 1001, 1002, the norm's 1 and 0)
    and makes the stages before the layers: token_embed, and with positions pos_embed and
    embedding (B, L, C)."""
    V, C = len(lm["vocab"]), d_model
    P = lm["max_positions"]
    shapes = {"embed": (V, C), "pos_embed": (P, C), "final_norm_weight": (C,), "final_norm_bias": (C,),
              "lm_head": (V, C)}
    used = ["embed"] + (["pos_embed"] if lm["positions"] == "learned" else []) + \
        (["final_norm_weight"] + (["final_norm_bias"] if norm != "rms" else []) if lm["final_norm"] else []) + \
        ([] if lm["tie"] else ["lm_head"])
    w = {}
    for name in LM_WEIGHTS:
        if name in wj:
            if name not in used:
                raise LessonError("weights.%s: this model has no such tensor" % name)
            w[name] = parse_tensor(wj[name], "weights." + name)
        elif name in LM_INIT_INDEX and name in used:
            if seed is None:
                raise LessonError("weights.%s missing" % name)
            w[name] = init_tensor(seed, LM_INIT_INDEX[name], shapes[name], C if name == "lm_head" else 1)
        elif name in used:
            w[name] = (torch.ones if name.endswith("weight") else torch.zeros)(C)
        if name in w and tuple(w[name].shape) != shapes[name]:
            raise LessonError("weights.%s: shape %s, want %s" % (name, list(w[name].shape), list(shapes[name])))
    ids = lm["ids"]
    B, L = ids.shape
    x = w["embed"][ids]                                         # (B, L, C)
    stages = [("token_embed", x)]
    if lm["positions"] != "none":
        pe = w["pos_embed"][:L] if lm["positions"] == "learned" else sinusoidal_positions(L, C)
        pe = pe.unsqueeze(0).expand(B, L, C)
        stages += [("pos_embed", pe), ("embedding", x + pe)]
    lm.update(stages=stages, weights=w, norm=norm, norm_eps=eps,
              w_u=w["embed"] if lm["tie"] else w["lm_head"])


def lm_tail(lm, x):
    """The stages after the last layer's output x: final_norm (LayerNorm or RMSNorm with the
    model's eps), logits = x·W_Uᵀ (lm_head, or embed when tied; no bias) and
    probs = softmax(logits / temperature) over the vocab (a true division by the float32
    temperature, not a product with its reciprocal)."""
    out = []
    if lm["final_norm"]:
        w = lm["weights"]
        if lm["norm"] == "rms":
            x = w["final_norm_weight"] * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + lm["norm_eps"]))
        else:
            x = F.layer_norm(x, x.shape[-1:], w["final_norm_weight"], w["final_norm_bias"], lm["norm_eps"])
        out.append(("final_norm", x))
    logits = torch.matmul(x, lm["w_u"].t())
    out += [("logits", logits), ("probs", F.softmax(logits / lm["temperature"], dim=-1))]
    return out


def resolve_lesson(lesson):
    """Lesson dict -> dict(cfg=..., query, key, value, mask, weights, layers, n_layers, per_head_form):
    layers holds one weights dict a layer (model.n_layers), weights is layer 0's."""
    m = lesson["model"]
    d_model = int(m["d_model"])
    H = int(m["n_heads"])
    d_k = int(m.get("d_k", d_model // H))
    d_v = int(m.get("d_v", d_k))
    qkv_bias = bool(m.get("qkv_bias", True))
    out_bias = bool(m.get("out_bias", True))
    scale = m.get("scale")
    # Gemma 2/3's query_pre_attn_scalar s: the scores are scaled by s ** -0.5 (here ÷ √s, as √d_k)
    qpas = m.get("query_pre_attn_scalar")
    if qpas is not None and not float(qpas) > 0:
        raise LessonError("model.query_pre_attn_scalar: above 0")
    scale = (math.sqrt(d_k) if qpas is None else float(np.float32(math.sqrt(float(qpas))))) if scale is None \
        else float(scale)
    fill = m.get("mask_fill", -1e9)
    # a float32, as attnviz reads it: '%.9g' writes finfo(float32).min as -3.40282347e+38, a
    # little past -FLT_MAX as a double (masked_fill would refuse it), which rounds to -FLT_MAX
    fill = float("-inf") if fill == "-inf" else float(np.float32(fill))
    residual_norm = bool(m.get("residual_norm", False))
    eps = float(m.get("norm_eps", 1e-5))
    ffn = int(m.get("ffn_hidden", 0) or 0)
    norm = m.get("norm", "layer")
    norm_first = bool(m.get("norm_first", False))
    activation = m.get("activation", "relu")
    ffn_bias = bool(m.get("ffn_bias", True))
    attn_sinks = bool(m.get("attn_sinks", False))
    Hkv = int(m.get("n_kv_heads", H))
    if H % Hkv:
        raise LessonError("model.n_kv_heads does not divide n_heads")
    rope = m.get("rope")
    if rope is not None:
        rope = (float(np.float32(rope.get("theta", 10000))), rope.get("style", "half"),
                int(rope.get("rotary_dim", d_k)), rope.get("scaling"))
    alibi = bool(m.get("alibi", False))
    # the conventions (issue 41), each with its default
    conv = dict(window_conv=m.get("window_convention", "inclusive"), masked_rows=m.get("masked_rows", "softmax"),
                alibi_form=m.get("alibi_form", "relative"), flash_acc=m.get("flash_accumulator", "fa2"),
                stream_pos=m.get("streaming_positions", "text"))
    for key, names in (("window_convention", ("inclusive", "flash")), ("masked_rows", ("softmax", "zero")),
                       ("alibi_form", ("relative", "key")), ("flash_accumulator", ("fa2", "fa1")),
                       ("streaming_positions", ("text", "cache"))):
        if m.get(key, names[0]) not in names:
            raise LessonError("model.%s: expected %s" % (key, " or ".join(names)))
    decode = bool(m.get("decode", False))
    flash = m.get("flash")
    if flash is not None:
        flash = (int(flash["block_q"]), int(flash["block_k"]))
    n_layers = m.get("n_layers", 1)
    if isinstance(n_layers, bool) or not isinstance(n_layers, (int, float)) or n_layers != int(n_layers) \
            or not 1 <= n_layers <= 8:
        raise LessonError("model.n_layers: a whole number 1..8")
    n_layers = int(n_layers)
    # 2026's mechanisms: QK-norm, soft-capping, the gate, a local/global pattern of layers
    qk_norm = bool(m.get("qk_norm", False))
    softcap = float(np.float32(m.get("attn_logit_softcapping", 0)))
    if "attn_logit_softcapping" in m and not softcap > 0:
        raise LessonError("model.attn_logit_softcapping: above 0")
    attn_gate = bool(m.get("attn_gate", False))
    types = m.get("layer_types", [])
    if types and not 2 <= n_layers or len(types) > n_layers or \
            any(t not in ("sliding_attention", "full_attention", "linear_attention") for t in types):
        raise LessonError("model.layer_types: 1 to n_layers of sliding_attention / full_attention / "
                          "linear_attention, n_layers >= 2")
    linear = [bool(types) and types[l % len(types)] == "linear_attention" for l in range(n_layers)]
    lin_rule, lin_form = m.get("linear_rule", "gated_delta"), m.get("linear_form", "recurrent")
    if lin_rule not in ("gated_delta", "delta", "linear") or lin_form not in ("recurrent", "parallel"):
        raise LessonError("model.linear_rule / linear_form: gated_delta, delta or linear / recurrent or parallel")
    sliding = [bool(types) and types[l % len(types)] == "sliding_attention" for l in range(n_layers)]
    window = int(m.get("sliding_window", 0))
    if any(sliding) != (window > 0):
        raise LessonError("model.sliding_window: with sliding layers, and only then")
    local_theta = m.get("rope_local_base_freq")
    # DeepSeek: multi-head latent attention (ranks of c_Q and c_KV, the decoupled RoPE dimensions)
    # and the sparse attention's lightning indexer (torch_mla.py)
    rq, r, dr = (int(m.get(k, 0)) for k in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"))
    if r and not (rope is not None and 0 < dr < d_k and dr % 2 == 0 and r <= d_model and rq <= d_model
                  and not qkv_bias):
        raise LessonError("model.kv_lora_rank: with model.rope, an even qk_rope_head_dim below d_k, ranks up to "
                          "d_model, no qkv_bias")
    index = tuple(int(m.get(k, 0)) for k in ("index_n_heads", "index_head_dim", "index_topk"))
    index = index if all(index) else None

    def as3(t, what):
        if t.dim() == 2:
            t = t.unsqueeze(0)
        if t.dim() != 3 or t.shape[-1] != d_model:
            raise LessonError("%s: bad shape %s" % (what, list(t.shape)))
        return t

    inp = lesson["input"]
    lm = resolve_lm_input(lesson, d_model) if "vocab" in lesson else None
    if lm is not None:
        # a language model: the layers read the embedding, made below once the weights are known
        q = k = v = None
        kref = vref = "query"
        B, Lq = lm["ids"].shape
        Lk = Lq
    else:
        for key in LM_MODEL_KEYS:
            if key in m:
                raise LessonError("model.%s: only with a vocab (a language-model lesson)" % key)
        q = as3(parse_tensor(inp["query"], "input.query"), "input.query")
        kref = inp.get("key", "query")
        k = q if kref == "query" else as3(parse_tensor(kref, "input.key"), "input.key")
        vref = inp.get("value", "key")
        v = {"query": q, "key": k}.get(vref) if isinstance(vref, str) else \
            as3(parse_tensor(vref, "input.value"), "input.value")
        B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
    if n_layers > 1 and (not isinstance(kref, str) or not isinstance(vref, str)):
        raise LessonError("model.n_layers > 1: self-attention only (a layer reads the one before), "
                          "no input.key / input.value tensors")

    mj = lesson.get("mask")
    if mj is None:
        mask = None
    elif mj == "causal":
        mask = torch.tril(torch.ones(Lq, Lk))
    elif isinstance(mj, dict) and "causal" in mj:
        # "top_left": torch.tril, as SDPA's is_causal; "bottom_right": FlashAttention >= 2.1's
        # alignment for Lq != Lk (flash_attn_func(causal=True)): query i sees keys j <= i + Lk - Lq
        if mj["causal"] not in ("top_left", "bottom_right"):
            raise LessonError("mask.causal: expected top_left or bottom_right")
        mask = torch.tril(torch.ones(Lq, Lk), diagonal=Lk - Lq if mj["causal"] == "bottom_right" else 0)
    elif isinstance(mj, dict) and "sliding_window" in mj:
        mask = window_mask(Lq, int(mj["sliding_window"]), int(mj.get("sink_tokens", 0)), conv["window_conv"])
    elif isinstance(mj, dict) and "key_padding" in mj:
        lens = torch.tensor([int(x) for x in mj["key_padding"]])
        if lens.numel() != B:
            raise LessonError("mask.key_padding: need %d lengths" % B)
        mask = (torch.arange(Lk)[None, :] < lens[:, None]).view(B, 1, 1, Lk)
    else:
        mt = parse_tensor(mj, "mask")
        if mt.dim() == 4:
            if mt.shape[1] != 1:
                raise LessonError("mask: rank-4 mask needs dim 1 == 1")
            mask = mt.expand(B, 1, Lq, Lk)
        else:
            mask = mt.expand(B, Lq, Lk).unsqueeze(1)

    qin, kin = (rq or d_model), (r or d_model)
    shapes = {"w_q": (H * d_k, qin), "b_q": (H * d_k,), "w_k": (H * (d_k - dr), r) if r else (Hkv * d_k, d_model),
              "b_k": (Hkv * d_k,), "w_v": (Hkv * d_v, kin), "b_v": (Hkv * d_v,),
              "w_dq": (rq, d_model), "q_latent_norm": (rq,), "w_dkv": (r, d_model), "kv_latent_norm": (r,),
              "w_kr": (dr, d_model), "w_iq": ((index or (0, 0))[0] * (index or (0, 0))[1], d_model),
              "w_ik": ((index or (0, 0))[1], d_model), "w_iw": ((index or (0, 0))[0], d_model),
              "w_o": (d_model, H * d_v), "b_o": (d_model,), "ffn_w1": (ffn, d_model),
              "ffn_b1": (ffn,), "ffn_w2": (d_model, ffn), "ffn_b2": (d_model,),
              "ffn_w_gate": (ffn, d_model), "ffn_b_gate": (ffn,), "sinks": (H,),
              "q_norm": (d_k,), "k_norm": (d_k,), "w_gate": (H * d_v, d_model), "b_gate": (H * d_v,),
              "w_beta": (H, d_model), "w_alpha": (H, d_model), "a_log": (H,), "dt_bias": (H,)}
    fan_in = {n: d_model for n in ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "ffn_w1", "ffn_b1",
                                   "ffn_w_gate", "ffn_b_gate", "w_gate", "b_gate"]}
    fan_in.update({"w_o": H * d_v, "b_o": H * d_v, "ffn_w2": ffn, "ffn_b2": ffn, "sinks": 1})
    fan_in.update({"w_q": qin, "w_k": kin, "w_v": kin, "w_dq": d_model, "w_dkv": d_model, "w_kr": d_model,
                   "w_iq": d_model, "w_ik": d_model, "w_iw": d_model, "w_beta": d_model, "w_alpha": d_model,
                   "a_log": 1, "dt_bias": 1})
    needed = ["w_q", "w_k", "w_v", "w_o"]
    if qkv_bias:
        needed += ["b_q", "b_k", "b_v"]
    if out_bias:
        needed += ["b_o"]
    if attn_sinks:
        needed += ["sinks"]
    if attn_gate:
        needed += ["w_gate"] + (["b_gate"] if qkv_bias else [])
    if r:
        needed += ["w_dkv", "w_kr"] + (["w_dq"] if rq else [])
    if index:
        needed += ["w_iq", "w_ik", "w_iw"]
    if ffn:
        needed += ["ffn_w1", "ffn_w2"] + (["ffn_w_gate"] if activation == "swiglu" else [])
        if ffn_bias:
            needed += ["ffn_b1", "ffn_b2"] + (["ffn_b_gate"] if activation == "swiglu" else [])

    # weights: one flat object, or with several layers {"init"} alone or {"layers": [one object a
    # layer], "init"}; layer l's seeded tensor in slot i is the generator's tensor i + 64·l
    wj = lesson["weights"]
    seed = int(wj["init"]["seed"]) & _M64 if "init" in wj else None
    flat = [name for name in wj if name not in ("init", "layers") and name not in LM_WEIGHTS]
    if lm is None:
        for name in LM_WEIGHTS:
            if name in wj:
                raise LessonError("weights.%s: only with a vocab (a language-model lesson)" % name)
    if "layers" in wj:
        objs = wj["layers"]
        if not isinstance(objs, list) or len(objs) != n_layers:
            raise LessonError("weights.layers: need %d layer objects (model.n_layers)" % n_layers)
        if flat:
            raise LessonError("weights.%s: with weights.layers each tensor goes in its layer's object" % flat[0])
        where = ["weights.layers[%d]." % l for l in range(n_layers)]
    else:
        if n_layers > 1 and flat:
            raise LessonError("weights.%s: with model.n_layers > 1 give weights.layers (or init alone)" % flat[0])
        objs = [{name: wj[name] for name in flat}] * n_layers
        where = ["weights."] * n_layers
    per_head_form = False
    layers = []
    for l, obj in enumerate(objs):
        if not isinstance(obj, dict) or "init" in obj:
            raise LessonError("%s: a layer's object holds tensors only (init stands beside layers)" % where[l][:-1])
        for name in LM_WEIGHTS:
            if name in obj:
                raise LessonError("%s%s: the model's own tensors stand beside weights.layers" % (where[l], name))
        w = {}
        # a linear layer: its gates, and no full layer's gate (torch_delta.py)
        lin_w = (["w_beta"] if lin_rule != "linear" else []) + \
            (["w_alpha", "a_log", "dt_bias"] if lin_rule == "gated_delta" else [])
        layer_needed = [n for n in needed if n not in ("w_gate", "b_gate")] + lin_w if linear[l] else needed
        if seed is not None:
            for t, name in enumerate(INIT_ORDER):
                if name in layer_needed:
                    w[name] = init_tensor(seed, t + 64 * l, shapes[name], fan_in[name])
        for name, val in obj.items():
            t = parse_tensor(val, where[l] + name)
            if name in ("w_q", "w_k", "w_v") and t.dim() == 3:
                per_head_form = True
                t = t.reshape(-1, t.shape[-1])
            elif name in ("b_q", "b_k", "b_v") and t.dim() == 2:
                t = t.reshape(-1)
            w[name] = t
        for name in layer_needed:
            if name not in w:
                raise LessonError("%s%s missing" % (where[l], name))
            if tuple(w[name].shape) != shapes[name]:
                raise LessonError("%s%s: shape %s, want %s" % (where[l], name, list(w[name].shape), shapes[name]))
        for name in NORM_NAMES:
            if name not in w:
                w[name] = (torch.ones if name.endswith("weight") else torch.zeros)(d_model)
        for name, n in (("q_latent_norm", rq), ("kv_latent_norm", r)):
            if n and name not in w:
                w[name] = torch.ones(n)
        for name in ("q_norm", "k_norm"):
            if qk_norm and name not in w:
                w[name] = torch.ones(d_k)
            if name in w and tuple(w[name].shape) != shapes[name]:
                raise LessonError("%s%s: shape %s, want %s" % (where[l], name, list(w[name].shape), shapes[name]))
        layers.append(w)

    cfg = dict(d_model=d_model, n_heads=H, d_k=d_k, d_v=d_v, qkv_bias=qkv_bias,
               out_bias=out_bias, scale=scale, mask_fill=fill, residual_norm=residual_norm,
               norm_eps=eps, ffn_hidden=ffn, n_kv_heads=Hkv, rope=rope, alibi=alibi, flash=flash,
               decode=decode, norm=norm, norm_first=norm_first, activation=activation, ffn_bias=ffn_bias,
               attn_sinks=attn_sinks, qk_norm=qk_norm, softcap=softcap, attn_gate=attn_gate,
               q_lora_rank=rq, kv_lora_rank=r, qk_rope_head_dim=dr, index=index, **conv)
    # each layer's own: a sliding layer's window and (Gemma 3) its RoPE base, no scaling
    per_layer = [dict(window=window if sliding[l] else 0, linear=(lin_rule, lin_form) if linear[l] else None,
                      rope=(float(np.float32(local_theta)),) + rope[1:3] + (None,)
                      if sliding[l] and local_theta is not None and rope is not None else rope)
                 for l in range(n_layers)]
    pos = inp.get("position_ids")
    if pos is not None:
        pos = torch.tensor(pos, dtype=torch.int64)
        pos = pos.expand(B, Lq) if pos.dim() == 1 else pos
    if lm is not None:
        lm_weights(lm, lesson, wj, seed, d_model, norm, eps)
        q = k = v = lm["stages"][-1][1]         # the embedding, or token_embed without positions
    return dict(cfg=cfg, per_layer=per_layer, query=q, key=k, value=v, mask=mask, weights=layers[0], layers=layers,
                n_layers=n_layers, per_head_form=per_head_form, position_ids=pos, lm=lm)


def lesson_module(r, per_head):
    """The block of a resolved lesson with its weights, or with model.n_layers > 1 a BlockStack
    of one block a layer."""
    blocks = []
    for w, own in zip(r["layers"], r["per_layer"]):
        block = make_block(per_head=per_head, **dict(r["cfg"], **own))
        block.load_lesson_weights(w)
        if r["position_ids"] is not None:
            block.attn.position_ids = r["position_ids"]
        blocks.append(block)
    return blocks[0] if r["n_layers"] == 1 else BlockStack(blocks)


def run_lesson(lesson, per_head=None):
    """Interpret a lesson dict and run it in torch; returns [(stage, tensor)]. A language-model
    lesson (a vocab) runs its embedding and head around the layers, as resolve_lesson and
    lm_tail read them."""
    r = resolve_lesson(lesson)
    if per_head is None:
        per_head = r["per_head_form"]
    module = lesson_module(r, per_head)
    with torch.no_grad():
        y = module(r["query"], r["key"], r["value"], r["mask"])
    if r["lm"] is None:
        return module.stages()
    # a language model: the embedding's stages, the layers, then final_norm, logits, probs
    return r["lm"]["stages"] + module.stages() + lm_tail(r["lm"], y)
