#!/usr/bin/python3
"""Issue 39, item 4: lessons/from_torch.py converts real model code unchanged, through its one
entry point lesson_from_module, and attnviz --dump gives the module's own numbers.

    /usr/bin/python3 tests/from_torch_models.py BINARY

The models (tests/published/: rewrites of the published files, see their headers):
  * karpathy/nanoGPT's model.py: GPT(GPTConfig(bias=True)) and bias=False, lm_head tied to wte;
    forward(idx) returns (logits of the last position, None), forward(idx, targets) every
    position's logits and the loss;
  * a GPT of nn.TransformerEncoderLayer blocks (norm_first, called with a causal mask), written
    here as tutorials do: token and position nn.Embedding, a final nn.LayerNorm (or the
    nn.TransformerEncoder's norm), an nn.Linear head without bias;
  * transformers' GPT2LMHeadModel (Conv1D, NewGELUActivation, finfo.min masking, a
    CausalLMOutputWithCrossAttentions or, with return_dict=False, a tuple);
  * a Llama-style decoder layer (tests/from_torch_test.sh's), here through lesson_from_module.
Each: the lesson's logits (or last stage) from attnviz --dump equal the module's within
1e-5 + 1e-4·|x|, the loss computed from them equals the module's, and what cannot convert is
one ValueError line naming the module's path. Run by tests/from_torch_models_test.sh (skipped
without torch). Prints one line per failed case; exit 1 if any failed.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lessons"))
sys.path.insert(0, os.path.join(ROOT, "tests", "published"))
import from_torch as ft  # noqa: E402
import hf_gpt2  # noqa: E402
import llama_layer  # noqa: E402
import nanogpt_model  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "attnviz")
WORK = tempfile.mkdtemp(prefix="from_torch_models.")
failures = []
FLOAT32_MIN = float(torch.finfo(torch.float32).min)     # what GPT2Attention writes over masked scores


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def close(name, got, want):
    got, want = got.detach().double(), want.detach().double()
    if got.shape != want.shape:
        fail("%s: shape %s, the module's %s" % (name, list(got.shape), list(want.shape)))
    elif not torch.allclose(got, want, atol=1e-5, rtol=1e-4):
        fail("%s: max |difference| %.3g" % (name, float((got - want).abs().max())))


def dumped(name, les):
    """The lesson written by save_lesson and computed by attnviz --dump: {stage: tensor}."""
    path = os.path.join(WORK, name + ".json")
    ft.save_lesson(les, path)
    r = subprocess.run([BINARY, "--dump", path], capture_output=True, timeout=300)
    if r.returncode != 0:
        fail("%s: attnviz --dump: %s" % (name, r.stderr.decode()[-300:]))
        return {}
    num = lambda v: float(v) if isinstance(v, str) else v          # "-inf", "nan" as attnviz writes them
    return {s["name"]: torch.tensor([num(v) for v in s["data"]]).view(s["shape"])
            for s in json.loads(r.stdout)["stages"]}


def convert(name, *args, **kw):
    try:
        return ft.lesson_from_module(*args, **kw)
    except Exception as e:                 # the finding: a model as published does not convert
        fail("%s: %s: %s" % (name, type(e).__name__, e))
        return None


def refused(name, fn, want):
    try:
        fn()
    except ValueError as e:
        if "\n" in str(e) or want not in str(e):
            fail("%s: message %r, want one line with %r" % (name, str(e), want))
        return
    except Exception as e:
        fail("%s: %s: %s, want ValueError" % (name, type(e).__name__, e))
        return
    fail("%s: accepted, want ValueError with %r" % (name, want))


def jitter(model, seed, amount=0.3):
    """Numbers of their own in every parameter (the inits leave LayerNorms at 1 and 0, biases at 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(amount * torch.randn(p.shape, generator=g))
    return model


def nll(logits, targets, ignore):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore)


# --- karpathy/nanoGPT's model.py -----------------------------------------------------------------

def nanogpt():
    for bias, n_layer in ((True, 3), (False, 2)):
        name = "nanogpt-bias-%s" % bias
        torch.manual_seed(39)
        with contextlib.redirect_stdout(io.StringIO()):      # its "number of parameters" and slow-attention lines
            model = jitter(nanogpt_model.GPT(nanogpt_model.GPTConfig(block_size=16, vocab_size=11, n_layer=n_layer,
                                                                     n_head=2, n_embd=8, dropout=0.1, bias=bias)), 1)
        ids = torch.tensor([[1, 5, 2, 2, 6, 0, 9], [3, 3, 1, 4, 10, 2, 7]])
        les = convert(name, model, ids, vocab=list("abcdefghijk"))
        if les is None:
            continue
        m = les["model"]
        if not (m["tie_embeddings"] and m["n_layers"] == n_layer and m["qkv_bias"] == bias and m["ffn_bias"] == bias
                and m["norm_eps"] == 1e-5 and m["mask_fill"] == "-inf" and m["max_positions"] == 16):
            fail("%s: model %s" % (name, m))
        w = les["weights"]["layers"][0]
        if ("norm_bias" in w) != bias or ("final_norm_bias" in les["weights"]) != bias or "lm_head" in les["weights"]:
            fail("%s: weights %s" % (name, sorted(w) + sorted(les["weights"])))
        st = dumped(name, les)
        if not st:
            continue
        model.eval()
        targets = torch.cat([ids[:, 1:], torch.full((2, 1), -1)], 1)
        with torch.no_grad():
            last, none = model(ids)
            every, loss = model(ids, targets)
        if none is not None or last.shape != (2, 1, 11):
            fail("%s: model(ids) returned %s, %s: not nanoGPT's last-position shortcut" % (name, list(last.shape), none))
        close(name + " logits of every position (model(ids, targets))", st["logits"], every)
        close(name + " the last position (model(ids))", st["logits"][:, -1:], last)
        close(name + " loss", nll(st["logits"], targets, -1), loss)
        close(name + " block 1's output", st["l1.ffn_sum"], model.transformer.h[1](
            model.transformer.h[0](model.transformer.wte(ids) + model.transformer.wpe(torch.arange(7)))))


# --- a GPT of nn.TransformerEncoderLayer blocks --------------------------------------------------

class EncoderGPT(nn.Module):
    """A GPT as PyTorch tutorials write one with nn.TransformerEncoderLayer."""

    def __init__(self, vocab_size, block_size, d_model, n_head, n_layer, stack=False):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        layer = lambda: nn.TransformerEncoderLayer(d_model, n_head, dim_feedforward=4 * d_model, dropout=0.1,
                                                   activation="gelu", batch_first=True, norm_first=True)
        if stack:              # nn.TransformerEncoder with its own final norm
            self.encoder = nn.TransformerEncoder(layer(), n_layer, norm=nn.LayerNorm(d_model))
        else:
            self.blocks = nn.ModuleList([layer() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx):
        T = idx.size(1)
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))
        causal = nn.Transformer.generate_square_subsequent_mask(T)       # 0 / -inf above the diagonal
        if hasattr(self, "encoder"):
            x = self.encoder(x, mask=causal)
        else:
            for block in self.blocks:
                x = block(x, src_mask=causal)
            x = self.ln_f(x)
        return self.head(x)


def encoder_gpt():
    for stack in (False, True):
        name = "encoder-gpt%s" % ("-stack" if stack else "")
        torch.manual_seed(40)
        model = jitter(EncoderGPT(13, 12, 8, 2, 3, stack), 2, 0.2)
        ids = torch.tensor([[4, 1, 12, 0, 7, 7, 3, 9]])
        les = convert(name, model, ids)
        if les is None:
            continue
        m = les["model"]
        if not (m["n_layers"] == 3 and m.get("norm_first") and m["activation"] == "gelu" and m["ffn_hidden"] == 32
                and not m["tie_embeddings"] and m["final_norm"]):
            fail("%s: model %s" % (name, m))
        st = dumped(name, les)
        if st:
            model.eval()
            with torch.enable_grad():           # the layers' Python code, not 1.13's fast path
                close(name + " logits", st["logits"], model(ids))
    torch.manual_seed(40)
    model = EncoderGPT(13, 12, 8, 2, 2)
    model.head = nn.Linear(8, 13)
    refused("encoder-gpt head with a bias", lambda: ft.lesson_from_module(model, [1, 2]), "head: the head has a bias")
    model = EncoderGPT(13, 12, 8, 2, 2)
    model.blocks[1] = nn.TransformerEncoderLayer(8, 2, 32, activation="gelu", batch_first=True)
    refused("encoder-gpt blocks of two kinds", lambda: ft.lesson_from_module(model, [1, 2]),
            "blocks.1's norm_first is False, blocks.0's True")
    model = EncoderGPT(13, 12, 8, 2, 3)
    model.blocks[2] = model.blocks[2].self_attn          # neither kind of block: no blocks found
    refused("encoder-gpt with an attention module among the blocks", lambda: ft.lesson_from_module(model, [1, 2]),
            "EncoderGPT: no blocks found")
    model.blocks[2] = hf_gpt2.GPT2Block(hf_gpt2.GPT2Config(n_embd=8, n_head=2, n_positions=12))
    refused("encoder-gpt with a GPT2Block among the blocks", lambda: ft.lesson_from_module(model, [1, 2]),
            "blocks.2 is a GPT block (ln_1, attn, ln_2, mlp), blocks.0 an nn.TransformerEncoderLayer")
    model = EncoderGPT(13, 12, 8, 2, 2)
    del model.tok_emb, model.pos_emb
    model.blocks[0].rel_pos = nn.Embedding(3, 8)          # an embedding only inside a block
    refused("encoder-gpt without an embedding of its own", lambda: ft.lesson_from_module(model, [1, 2]),
            "EncoderGPT: no nn.Embedding outside blocks")
    model = EncoderGPT(13, 12, 8, 2, 2)
    model.proj = nn.Linear(8, 8)
    refused("encoder-gpt an extra layer", lambda: ft.lesson_from_module(model, [1, 2]), "linear layer proj besides")
    model = EncoderGPT(13, 12, 8, 2, 2)
    model.forward = lambda idx: model.head(model.ln_f(model.blocks[0](      # forgets the second block
        model.tok_emb(idx) + model.pos_emb(torch.arange(idx.shape[1])),
        src_mask=nn.Transformer.generate_square_subsequent_mask(idx.shape[1]))))
    refused("encoder-gpt whose forward skips a block", lambda: ft.lesson_from_module(model, [1, 2]),
            "did not call block blocks.1")


# --- transformers' GPT2LMHeadModel ----------------------------------------------------------------

def hf():
    # (reorder_and_upcast_attn is left out: its torch.baddbmm(torch.empty(…), …, beta=0) carries NaN
    # from the uninitialised memory on PyTorch 1.13's CPU now and then, which the check refuses)
    cases = (("hf-gpt2", {}), ("hf-gpt2-unscaled", {"scale_attn_weights": False}))
    for name, extra in cases:
        torch.manual_seed(41)
        model = jitter(hf_gpt2.GPT2LMHeadModel(hf_gpt2.GPT2Config(vocab_size=13, n_positions=12, n_embd=8, n_layer=2,
                                                                  n_head=2, **extra)), 3)
        ids = torch.tensor([[4, 1, 12, 0, 7, 7, 3], [2, 2, 5, 11, 0, 1, 6]])
        les = convert(name, model, ids)
        if les is None:
            continue
        m = les["model"]
        if not (m["tie_embeddings"] and m["activation"] == "gelu_tanh" and m["mask_fill"] == FLOAT32_MIN
                and m.get("scale", None) == (None if extra.get("scale_attn_weights", True) else 1.0)):
            fail("%s: model %s" % (name, m))
        c_attn = model.transformer.h[0].attn.c_attn.weight            # Conv1D: (in, out)
        if les["weights"]["layers"][0]["w_q"] != c_attn[:, :8].t().tolist():
            fail("%s: w_q is not c_attn's first 8 columns, transposed" % name)
        st = dumped(name, les)
        if not st:
            continue
        model.eval()
        with torch.no_grad():
            out = model(ids, labels=ids)
            tup = model(ids, return_dict=False)
        close(name + " logits", st["logits"], out.logits)
        close(name + " logits (return_dict=False)", st["logits"], tup[0])
        close(name + " loss (labels shifted inside)", nll(st["logits"][:, :-1], ids[:, 1:], -100), out.loss)
        scores = st.get("l0.masked_scores")
        if scores is None or float(scores[0, 0, 0, 1]) != FLOAT32_MIN:
            fail("%s: the masked scores are not float32's lowest, as GPT2Attention writes them" % name)
    les = convert("hf-gpt2 mask_fill='-inf'", model, ids, mask_fill="-inf")   # shown as −∞, the same outputs
    if les is not None and les["model"]["mask_fill"] != "-inf":
        fail("hf-gpt2 mask_fill='-inf': the lesson's is %r" % les["model"]["mask_fill"])
    refused("hf-gpt2 mask_fill=0 (which would let the future in)", lambda: ft.lesson_from_module(model, ids, mask_fill=0),
            "does not reproduce")
    torch.manual_seed(41)
    model = hf_gpt2.GPT2LMHeadModel(hf_gpt2.GPT2Config(vocab_size=13, n_positions=12, n_embd=8, n_layer=2, n_head=2,
                                                       scale_attn_by_inverse_layer_idx=True))
    refused("hf-gpt2 scale by inverse layer index", lambda: ft.lesson_from_module(model, [1, 2]),
            "transformer.h.1's scale is 4, transformer.h.0's 2")


# --- a Llama-style decoder layer through lesson_from_module -------------------------------------

def llama():
    torch.manual_seed(26)
    layer = jitter(llama_layer.DecoderLayer(), 4, 0.2)
    x = torch.randn(2, 5, 16)
    les = convert("llama via lesson_from_module", layer, x, rope={"theta": 500, "style": "half"})
    if les is not None:
        st = dumped("llama", les)
        if st:
            with torch.no_grad():
                close("llama ffn_sum", st["ffn_sum"], layer(x))
    refused("llama wrong rope", lambda: ft.lesson_from_module(layer, x, rope={"theta": 10000}), "does not reproduce")
    refused("rope= for an attention module", lambda: ft.lesson_from_module(nn.MultiheadAttention(4, 2), torch.randn(3, 4),
                                                                          rope={"theta": 10000}),
            "rope= is for a Llama-style decoder layer")


# --- nn.Transformer (encoder–decoder) through lesson_from_module ---------------------------------

def transformer():
    for name, nf, bf, E, D in (("transformer post-norm", False, True, 2, 1), ("transformer norm_first seq-first", True, False, 1, 2)):
        torch.manual_seed(27)
        model = jitter(nn.Transformer(8, 2, E, D, 12, dropout=0.0, batch_first=bf, norm_first=nf), 5, 0.2).eval()
        src, tgt = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
        args = (tgt, src) if bf else (tgt.transpose(0, 1), src.transpose(0, 1))
        les = convert(name, model, args[0], key=args[1], mask="causal")
        if les is not None:
            st = dumped(name.replace(" ", "-"), les)
            if st:
                with torch.enable_grad():
                    want = model(args[1], args[0], tgt_mask=nn.Transformer.generate_square_subsequent_mask(3)).detach()
                close(name + " final_norm", st["final_norm"], want if bf else want.transpose(0, 1))
    big = nn.Transformer(8, 2, 2, 4, 12, dropout=0.0, batch_first=True)
    refused("transformer too many blocks", lambda: ft.lesson_from_module(big, torch.randn(1, 3, 8), key=torch.randn(1, 4, 8)),
            "is 10 blocks (a decoder layer is two); a lesson holds at most 8")
    refused("transformer without a source", lambda: ft.lesson_from_module(nn.Transformer(8, 2, 1, 1, 12, batch_first=True),
                                                                          torch.randn(1, 3, 8)),
            "give the source as key=")


for case in (nanogpt, encoder_gpt, hf, llama, transformer):
    case()
subprocess.run(["rm", "-rf", WORK])
print("from_torch_models: %d failures" % len(failures))
sys.exit(1 if failures else 0)
