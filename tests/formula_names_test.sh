#!/bin/sh
# Every stage's formula and panel titles name only tensors its block has (tests/formula_names.py):
# an encoder–decoder's cross-attention and encoder blocks have no mask, so their softmax reads
# "scores", not "masked_scores" (issue 42's left-over); every shipped lesson (under make test-full: every shipped lesson).
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
py=$(command -v python3) || { echo "no python3"; exit 77; }
for L in $(shipped_lessons) lessons/encoder-decoder-reversal.json lessons/vision-digits.json; do
    "$bin" --describe "$L" >"$tmp/d.json" 2>"$tmp/err" || { fail "$L: --describe: $(cat "$tmp/err")"; continue; }
    "$py" tests/formula_names.py src/core/stages.h "$L" <"$tmp/d.json" || fail "$L: a formula names a tensor its block lacks"
done
[ "$fails" = 0 ] && echo "formula names: ok"
exit $((fails > 0))
