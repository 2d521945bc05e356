#!/bin/sh
# attnviz --dump --backward (issue 38 item 1; test_backward checks the numbers): a language
# model's dump gains the loss, the targets and the gradients after the same stages as --dump,
# takes --set / --text / --checkpoint; a lesson without a loss (no vocab, one token) is one
# line on stderr naming the file, exit 1, nothing on stdout.
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=$(command -v python3) || { echo "no python3"; exit 77; }

for lesson in lessons/induction-heads.json lessons/reversal-anti-diagonal.json lessons/tiny-lm-fortunes.json; do
    "$bin" --dump --backward "$lesson" >"$tmp/b.json" 2>"$tmp/err" || { fail "$lesson: exit $? $(cat "$tmp/err")"; continue; }
    "$bin" --dump "$lesson" >"$tmp/f.json"
    "$py" - "$tmp/b.json" "$tmp/f.json" "$lesson" <<'PY' || fail "$lesson: the backward dump"
import json, math, sys
b, f = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
names = [s["name"] for s in b["stages"]]
fwd = [s for s in b["stages"] if not s["name"].startswith("grad.")]
assert fwd == f["stages"], "the forward stages are --dump's"
assert math.isfinite(b["loss"]) and b["loss"] > 0, b["loss"]
L = len(b["targets"][0])
assert b["targets"][0][-1] == -1 and b["n_targets"] == sum(t >= 0 for r in b["targets"] for t in r)
grads = names[len(fwd):]
assert grads[0] == "grad.logits" and "grad.model.embed" in grads, grads[:3]
assert any(n.endswith("w_q") for n in grads) and "grad.probs" not in grads
PY
done
"$bin" --dump --backward --checkpoint 0 lessons/induction-heads.json >"$tmp/c0.json" || fail "--checkpoint 0"
cmp -s "$tmp/c0.json" "$tmp/b.json" && fail "--checkpoint 0 gives the last checkpoint's gradients"
"$bin" --dump --backward --text "qkdm" lessons/induction-heads.json >/dev/null || fail "--text"

# "targets" (issue 38): the lesson's own are the loss's (null / -1 not counted), --save keeps
# them, --text (another input) leaves them out
printf '%s\n' '{"title": "t", "vocab": ["a", "b", "c"], "model": {"d_model": 4, "n_heads": 2},' \
    ' "input": {"ids": [[0, 1, 2], [2, 1, 0]]}, "mask": "causal", "weights": {"init": {"seed": 1}},' \
    ' "targets": [[1, 2, -1], [null, 0, 1]]}' >"$tmp/t.json"
"$bin" --dump --backward "$tmp/t.json" >"$tmp/t.out" || fail "targets: exit $?"
grep -qF '"n_targets": 4, "targets": [[1, 2, -1], [-1, 0, 1]]' "$tmp/t.out" || fail "targets: not the lesson's"
"$bin" --save "$tmp/saved.json" "$tmp/t.json" && grep -qF '"targets": [[1, 2, -1], [-1, 0, 1]]' "$tmp/saved.json" ||
    fail "targets: --save lost them"
"$bin" --dump --backward "$tmp/saved.json" | cmp -s - "$tmp/t.out" || fail "targets: the saved lesson's loss differs"
"$bin" --dump --backward --text "ab" "$tmp/t.json" | grep -qF '"targets": [[1, -1]]' || fail "targets: --text kept them"

bad() { # bad WANT ARGS...: exit 1, one line naming WANT, nothing on stdout
    want=$1; shift
    "$bin" --dump --backward "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" = 1 ] || fail "$*: exit $rc, expected 1"
    [ -s "$tmp/out" ] && fail "$*: wrote to stdout"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: not one line: $(cat "$tmp/err")"
    grep -qF "$want" "$tmp/err" || fail "$*: \"$(cat "$tmp/err")\" lacks \"$want\""
}
bad "lessons/arange-2x4x4.json: vocab: the backward pass needs a language model" lessons/arange-2x4x4.json
bad "lessons/induction-heads.json: input: the backward pass needs a position with a next token" \
    --text q lessons/induction-heads.json

[ "$fails" = 0 ] && echo "backward_cli: ok"
[ "$fails" = 0 ]
