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

echo "from_torch: $fails failures"
[ "$fails" -eq 0 ]
