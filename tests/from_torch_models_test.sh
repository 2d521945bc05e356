#!/bin/sh
# Issue 39, item 4: lessons/from_torch.py converts real model code unchanged through
# lesson_from_module — karpathy/nanoGPT's model.py (bias and not), a GPT of
# nn.TransformerEncoderLayer blocks, transformers' GPT2LMHeadModel with Conv1D, a Llama-style
# layer with rope= — and attnviz --dump's logits and the loss equal the module's. The models
# are rewrites of the published files in tests/published/; the cases: tests/from_torch_models.py.
# Needs /usr/bin/python3 with torch: skipped (exit 77) without.
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "from_torch_models_test: SKIP: needs /usr/bin/python3 with torch (python3-torch)"
    exit 77
fi
. "$(dirname "$0")/test_lib.sh"
/usr/bin/python3 -B tests/from_torch_models.py "$bin"
