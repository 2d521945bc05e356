#!/bin/sh
# Issue 15, item 5 (split from reliability_test.sh): lessons/from_torch.py converts
# a module whose mask fill is torch.finfo(torch.float32).min; attnviz reads the
# lesson and its output equals the module's. Needs /usr/bin/python3 with torch:
# skipped (exit 77) without.
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "from_torch_test: SKIP: needs /usr/bin/python3 with torch (python3-torch)"
    exit 77
fi
. "$(dirname "$0")/test_lib.sh"

# --- item 5: the converter and float32's lowest value ------------------------------------
/usr/bin/python3 - "$bin" "$tmp/finfo.json" >"$tmp/py.out" 2>&1 <<'PY' || fail "item5 from_torch.py with finfo.min: $(tail -3 "$tmp/py.out")"
import json, math, subprocess, sys
import torch, torch.nn as nn
sys.path.insert(0, "lessons")
from from_torch import lesson_from_module, save_lesson

class HFStyle(nn.Module):
    """Masks with torch.finfo(torch.float32).min, as Hugging Face code does."""
    def __init__(self):
        super().__init__()
        self.n_heads = 2
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(4, 4) for _ in range(4))
    def forward(self, x, mask=None):
        B, L, _ = x.shape
        split = lambda t: t.view(B, L, 2, 2).transpose(1, 2)
        s = split(self.q_proj(x)) @ split(self.k_proj(x)).transpose(-2, -1) / math.sqrt(2)
        s = s.masked_fill(mask == 0, torch.finfo(torch.float32).min)
        y = torch.softmax(s, -1) @ split(self.v_proj(x))
        return self.out_proj(y.transpose(1, 2).reshape(B, L, 4))

torch.manual_seed(0)
m, x = HFStyle(), torch.randn(2, 3, 4)
save_lesson(lesson_from_module(m, x, mask="causal", mask_fill=torch.finfo(torch.float32).min), sys.argv[2])
les = json.load(open(sys.argv[2]))
assert les["model"]["mask_fill"] == -3.40282347e+38, les["model"]
dump = json.loads(subprocess.run([sys.argv[1], "--dump", sys.argv[2]], check=True, capture_output=True).stdout)
got = torch.tensor(next(s for s in dump["stages"] if s["name"] == "output")["data"]).view(2, 3, 4)
want = m(x, torch.tril(torch.ones(3, 3))).detach()
assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (got, want)
PY

# --- issue 26: a Llama-style decoder layer written as modules ----------------------------
/usr/bin/python3 - "$bin" "$tmp/llama.json" >"$tmp/py2.out" 2>&1 <<'PY' || fail "llama layer: $(tail -3 "$tmp/py2.out")"
import json, math, subprocess, sys
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, "lessons")
from from_torch import lesson_from_llama_layer, save_lesson

sys.path.insert(0, "tests/published")
from llama_layer import DecoderLayer   # transformers' modeling_llama at toy size

torch.manual_seed(26)
layer = DecoderLayer()
with torch.no_grad():
    layer.input_layernorm.weight.copy_(1 + 0.3 * torch.randn(16))
    layer.post_attention_layernorm.weight.copy_(1 + 0.3 * torch.randn(16))
x = torch.randn(2, 5, 16)
les = lesson_from_llama_layer(layer, x, rope={"theta": 500, "style": "half"})
# a wrong rope is caught by the check
try:
    lesson_from_llama_layer(layer, x, rope={"theta": 10000, "style": "half"})
    raise SystemExit("a wrong rope theta was not caught")
except ValueError as e:
    assert "does not reproduce" in str(e), e
save_lesson(les, sys.argv[2])
m = json.load(open(sys.argv[2]))["model"]
assert m["norm"] == "rms" and m["norm_first"] and m["activation"] == "swiglu" and m["n_kv_heads"] == 2, m
dump = json.loads(subprocess.run([sys.argv[1], "--dump", sys.argv[2]], check=True, capture_output=True).stdout)
got = torch.tensor(next(s for s in dump["stages"] if s["name"] == "ffn_sum")["data"]).view(2, 5, 16)
with torch.no_grad():
    want = layer(x)
assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (got - want).abs().max()
PY

# --- issue 25, item 6: nn.TransformerEncoderLayer and a one-layer nn.TransformerEncoder ---
/usr/bin/python3 - "$bin" "$tmp/encoder.json" >"$tmp/py3.out" 2>&1 <<'PY' || fail "encoder layer: $(tail -3 "$tmp/py3.out")"
import json, subprocess, sys
import torch, torch.nn as nn
sys.path.insert(0, "lessons")
from from_torch import lesson_from_module, save_lesson
binary, out = sys.argv[1], sys.argv[2]
torch.manual_seed(3)
cases = [
    ("post-relu", nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.1, batch_first=True), {}),
    ("pre-gelu", nn.TransformerEncoderLayer(8, 4, dim_feedforward=6, activation="gelu", norm_first=True, batch_first=True), {"mask": "causal"}),
    ("seq-first-padding", nn.TransformerEncoderLayer(6, 3, dim_feedforward=10, layer_norm_eps=1e-6), {"key_padding_mask": torch.tensor([[False]*5, [False]*3 + [True]*2])}),
    ("encoder-1-layer", nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=8, activation=nn.GELU(approximate="tanh"), batch_first=True), 1), {}),
]
for name, layer, kw in cases:
    C = layer.layers[0].self_attn.embed_dim if isinstance(layer, nn.TransformerEncoder) else layer.self_attn.embed_dim
    bf = (layer.layers[0] if isinstance(layer, nn.TransformerEncoder) else layer).self_attn.batch_first
    x = torch.randn(2, 5, C) if bf else torch.randn(5, 2, C)
    les = lesson_from_module(layer, x, **kw)
    save_lesson(les, out)
    dump = json.loads(subprocess.run([binary, "--dump", out], check=True, capture_output=True).stdout)
    last = dump["stages"][-1]
    got = torch.tensor(last["data"]).view(last["shape"])
    layer.eval()
    with torch.enable_grad():
        m = kw.get("mask")
        mm = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1) if m == "causal" else None
        if isinstance(layer, nn.TransformerEncoder):
            want = layer(x, mask=mm, src_key_padding_mask=kw.get("key_padding_mask"))
        else:
            want = layer(x, src_mask=mm, src_key_padding_mask=kw.get("key_padding_mask"))
    want = want.detach()
    if not bf:
        want = want.transpose(0, 1)
    assert last["name"] in ("ffn_out", "ffn_sum"), last["name"]
    assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (name, (got - want).abs().max())
    print(name, last["name"], "max diff %.2g" % float((got - want).abs().max()))
# a wrong activation is caught by the check
layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, batch_first=True)
layer.activation = torch.nn.functional.silu
try:
    lesson_from_module(layer, torch.randn(1, 3, 8)); raise SystemExit("silu accepted")
except ValueError as e:
    assert "activation" in str(e), e
# an encoder's final norm, and layers of different configurations, are refused with one line
try:
    lesson_from_module(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, batch_first=True), 2, norm=nn.LayerNorm(8)), torch.randn(1, 3, 8)); raise SystemExit("final norm accepted")
except ValueError as e:
    assert "final norm" in str(e) and "\n" not in str(e), e
mixed = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, batch_first=True), 2)
mixed.layers[1] = nn.TransformerEncoderLayer(8, 2, batch_first=True, norm_first=True)
try:
    lesson_from_module(mixed, torch.randn(1, 3, 8)); raise SystemExit("mixed layers accepted")
except ValueError as e:
    assert "layer 1's norm_first" in str(e) and "\n" not in str(e), e
print("ok")
PY

# --- issue 25, items 1 and 6: an nn.TransformerEncoder of several layers -----------------
# model.n_layers and weights.layers; the last layer's last stage (l2.ffn_sum pre-norm,
# l1.ffn_out post-norm) is the encoder's output
/usr/bin/python3 - "$bin" "$tmp/stack.json" >"$tmp/py4.out" 2>&1 <<'PY' || fail "encoder of several layers: $(tail -3 "$tmp/py4.out")"
import json, subprocess, sys
import torch, torch.nn as nn
sys.path.insert(0, "lessons")
from from_torch import lesson_from_module, save_lesson
binary, out = sys.argv[1], sys.argv[2]
torch.manual_seed(25)

def own_weights(enc):
    # nn.TransformerEncoder copies one layer N times: give each layer numbers of its own
    with torch.no_grad():
        for p in enc.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return enc

causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
cases = [
    ("3-prenorm-gelu", own_weights(nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=12, activation="gelu", norm_first=True, batch_first=True), 3)),
     torch.randn(2, 5, 8), {}, "l2.ffn_sum"),
    ("2-postnorm-relu-padding", own_weights(nn.TransformerEncoder(nn.TransformerEncoderLayer(6, 3, dim_feedforward=10), 2)),
     torch.randn(5, 2, 6), {"key_padding_mask": pad}, "l1.ffn_out"),
    ("2-postnorm-relu-causal", own_weights(nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=12, batch_first=True), 2)), torch.randn(2, 5, 8), {"mask": causal}, "l1.ffn_out"),
]
for name, enc, x, kw, last_name in cases:
    n = len(enc.layers)
    les = lesson_from_module(enc, x, **kw)
    assert les["model"]["n_layers"] == n and len(les["weights"]["layers"]) == n, (name, les["model"])
    save_lesson(les, out)
    dump = json.loads(subprocess.run([binary, "--dump", out], check=True, capture_output=True).stdout)
    names = [s["name"] for s in dump["stages"]]
    assert names[0] == "input" and names[-1] == last_name, (name, names)
    for l in range(n):             # every layer's stages, layer after layer
        mine = [i for i, s in enumerate(names) if s.startswith("l%d." % l)]
        assert mine and mine == list(range(mine[0], mine[0] + len(mine))), (name, l, names)
        assert names[mine[-1]] == "l%d.%s" % (l, last_name[3:]), (name, l, names)
    last = dump["stages"][-1]
    got = torch.tensor(last["data"]).view(last["shape"])
    enc.eval()
    with torch.enable_grad():     # the layers' Python code, not 1.13's inference fast path
        want = enc(x, mask=kw.get("mask"), src_key_padding_mask=kw.get("key_padding_mask")).detach()
    if not enc.layers[0].self_attn.batch_first:
        want = want.transpose(0, 1)
    assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (name, (got - want).abs().max())
    print(name, last["name"], "max diff %.2g" % float((got - want).abs().max()))
print("ok")
PY

# --- issue 25, item 6: a GPT-style model (nanoGPT's names and code at toy size) --------------
# three blocks, tied and untied lm_head, exact and tanh GELU: attnviz --dump's logits equal the model's
for variant in "none tied" "tanh untied"; do
    # shellcheck disable=SC2086
    /usr/bin/python3 - "$bin" "$tmp/gpt.json" $variant >"$tmp/py4.out" 2>&1 <<'PY' || fail "GPT-style ($variant): $(tail -3 "$tmp/py4.out")"
import json, math, subprocess, sys
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, "lessons")
from from_torch import lesson_from_module, save_lesson

# nanoGPT's model at toy size (its names and its code, written out: no nanoGPT in Debian)
class CausalSelfAttention(nn.Module):
    def __init__(self, C, n_head):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(C, 3 * C), nn.Linear(C, C), n_head
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
class MLP(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc, self.gelu, self.c_proj = nn.Linear(C, 4 * C), nn.GELU(approximate=sys.argv[3]), nn.Linear(4 * C, C)
    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))
class Block(nn.Module):
    def __init__(self, C, n_head):
        super().__init__()
        self.ln_1, self.attn, self.ln_2, self.mlp = nn.LayerNorm(C), CausalSelfAttention(C, n_head), nn.LayerNorm(C), MLP(C)
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))
class GPT(nn.Module):
    def __init__(self, V, P, C, n_layer, n_head, tied):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, C), wpe=nn.Embedding(P, C),
                                              h=nn.ModuleList([Block(C, n_head) for _ in range(n_layer)]), ln_f=nn.LayerNorm(C)))
        self.lm_head = nn.Linear(C, V, bias=False)
        if tied:
            self.transformer.wte.weight = self.lm_head.weight
    def forward(self, idx):
        T = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
        for b in self.transformer.h:
            x = b(x)
        return self.lm_head(self.transformer.ln_f(x)), None

torch.manual_seed(0)
tied = sys.argv[4] == "tied"
m, ids = GPT(7, 10, 8, 3, 2, tied), torch.tensor([[1, 5, 2, 2, 6, 0], [3, 3, 1, 4, 0, 2]])
les = lesson_from_module(m, ids)
assert les["model"]["n_layers"] == 3 and les["model"]["tie_embeddings"] == tied, les["model"]
save_lesson(les, sys.argv[2])
dump = json.loads(subprocess.run([sys.argv[1], "--dump", sys.argv[2]], check=True, capture_output=True).stdout)
st = {s["name"]: s for s in dump["stages"]}
got = torch.tensor(st["logits"]["data"]).view(2, 6, 7)
want = m(ids)[0].detach()
assert torch.allclose(got, want, atol=1e-5, rtol=1e-4), (got - want).abs().max()
assert all(n in st for n in ("token_embed", "pos_embed", "embedding", "l0.attn", "l2.ffn_sum", "final_norm", "probs"))
PY
done

echo "from_torch: $fails failures"
[ "$fails" -eq 0 ]
