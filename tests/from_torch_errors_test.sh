#!/bin/sh
# Issue 36, findings 6 and 7: lessons/from_torch.py and the training scripts refuse bad
# input (ids outside the vocabulary, empty inputs, a duplicate or too large vocab, a title
# that is not text, NaN weights) and bad targets (a FIFO, a folder, a missing folder, a
# dangling link) with one line, before writing or training, and never lose the old file;
# a symbolic link is written through. The cases: tests/from_torch_errors.py. Needs
# /usr/bin/python3 with torch: skipped (exit 77) without.
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "from_torch_errors_test: SKIP: needs /usr/bin/python3 with torch (python3-torch)"
    exit 77
fi
. "$(dirname "$0")/test_lib.sh"
/usr/bin/python3 -B tests/from_torch_errors.py "$bin"
