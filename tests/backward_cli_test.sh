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
    grep -qF -e "$want" "$tmp/err" || fail "$*: \"$(cat "$tmp/err")\" lacks \"$want\""
}
bad "lessons/arange-2x4x4.json: vocab: the backward pass needs a language model" lessons/arange-2x4x4.json
bad "lessons/induction-heads.json: input: the backward pass needs a position with a next token" \
    --text q lessons/induction-heads.json


# --step (issue 38 item 3; test_optim checks the numbers): training first, then the dump at the
# new weights with the optimizer, its losses and the weights it changed; --save writes a lesson
# whose --dump --backward is the same; the end-to-end numbers are torch.optim's
ref=tests/ref/optim/adamw-five-steps.json
spec=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["optimizer"])' "$ref")
lesson=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["lesson"])' "$ref")
"$bin" --dump --backward --step "$spec" --save "$tmp/stepped.json" "$lesson" >"$tmp/s.json" 2>"$tmp/err" ||
    fail "--step: exit $? $(cat "$tmp/err")"
"$bin" --dump --backward "$tmp/stepped.json" >"$tmp/s2.json" || fail "--step --save: the saved lesson"
"$bin" --dump --backward "$lesson" >"$tmp/s0.json"
"$py" - "$tmp/s.json" "$tmp/s2.json" "$tmp/s0.json" "$ref" <<'PY' || fail "--step: the dump"
import json, sys
s, saved, before, ref = (json.load(open(p)) for p in sys.argv[1:])
assert s["optimizer"] == "adamw" and s["steps"] == 5 and s["beta1"] == 0.8 and s["weight_decay"] == 0.1, s["optimizer"]
assert len(s["losses"]) == 6 and s["losses"][0] == s["loss_before"] == before["loss"] and s["losses"][-1] == s["loss"]
assert s["stages"] == saved["stages"] and s["loss"] == saved["loss"], "the saved lesson computes the same"
tol = lambda a, b: abs(a - b) <= 1e-5 + 1e-4 * abs(b)
assert all(tol(a, b) for a, b in zip(s["losses"], ref["losses"])), (s["losses"], ref["losses"])
got = {w["name"]: w["data"] for w in s["weights"]}
assert sorted(got) == sorted(w["name"] for w in ref["weights"]), sorted(got)
for w in ref["weights"]:
    assert all(tol(a, b) for a, b in zip(got[w["name"]], w["data"])), w["name"]
PY
usage() { # usage WANT ARGS...: exit 2, one line naming WANT, nothing on stdout, nothing saved
    want=$1; shift
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" = 2 ] || fail "$*: exit $rc, expected 2"
    [ -s "$tmp/out" ] && fail "$*: wrote to stdout"
    [ -e "$tmp/never.json" ] && fail "$*: saved"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: not one line: $(cat "$tmp/err")"
    grep -qF -e "$want" "$tmp/err" || fail "$*: \"$(cat "$tmp/err")\" lacks \"$want\""
}
usage "--step: adam: unknown optimizer; expected sgd or adamw" --dump --backward --step adam lessons/induction-heads.json
usage "--step: lr=0: expected a finite number > 0" --step sgd:lr=0 --save "$tmp/never.json" lessons/induction-heads.json
usage "--step: lr=inf: expected a finite number > 0" --dump --backward --step sgd:lr=inf lessons/induction-heads.json
usage "--step: steps=10001: expected a whole number of steps from 1 to 10000" --dump --backward --step adamw:steps=10001 \
    lessons/induction-heads.json
usage "--step goes with --dump --backward and/or --save FILE" --dump --step sgd lessons/induction-heads.json
usage "--step: lr=2: lr given twice; expected each key once" --dump --backward --step sgd:lr=1e-3,lr=2 \
    lessons/induction-heads.json
bad "lessons/arange-2x4x4.json: vocab: the backward pass needs a language model" --step sgd lessons/arange-2x4x4.json
"$bin" --step sgd:lr=1e38,steps=3 --save "$tmp/never.json" lessons/induction-heads.json 2>"$tmp/err"
[ $? = 1 ] && [ ! -e "$tmp/never.json" ] || fail "a diverging --step: exit 1, nothing saved"
grep -qF "lessons/induction-heads.json: step 1: the loss is not finite after it (try a smaller lr)" "$tmp/err" ||
    fail "a diverging --step: $(cat "$tmp/err")"

# the backward view (issue 38 item 2): --describe, --quiz and --export with --backward walk the
# gradient stages after the forward ones (the forward frames unchanged); a lesson that is not a
# language model is one line naming the file, exit 1
"$bin" --describe --backward lessons/induction-heads.json >"$tmp/db.json" 2>"$tmp/err" || fail "--describe --backward: $(cat "$tmp/err")"
"$bin" --describe lessons/induction-heads.json >"$tmp/df.json"
"$bin" --quiz --backward --lang zh lessons/tiny-lm-fortunes.json >"$tmp/q.json" || fail "--quiz --backward"
"$py" - "$tmp/db.json" "$tmp/df.json" "$tmp/q.json" <<'PY' || fail "the backward view's --describe / --quiz"
import json, sys
b, f, q = (json.load(open(p)) for p in sys.argv[1:4])
fb, ff = b["frames"], f["frames"]
assert fb[:len(ff)] == ff, "the forward frames are --describe's"
names = [x["stage"] for x in fb[len(ff):]]
assert names[:3] == ["grad.target", "grad.logits", "grad.model.lm_head"], names[:3]
for want in ("grad.l1.jacobian", "grad.l1.masked_scores", "grad.l1.w_q", "grad.l0.q_heads", "grad.token_embed"):
    assert want in names, want
soft = fb[len(ff) + names.index("grad.l1.masked_scores")]
assert "rises most" in soft["narration"] and "{" not in soft["narration"], soft["narration"]
assert soft["formula"].startswith("∂L/∂masked_scores = attn ⊙ (∂L/∂attn − rowsum("), soft["formula"]
qs = q["questions"] if isinstance(q, dict) else q
kinds = {x["kind"] for x in qs if x["stage"].startswith("grad.")}
assert {"value", "shape", "rises"} <= kinds, kinds
assert all(x["stage"].startswith("grad.") for x in qs if x["kind"] != "authored"), "--quiz --backward asks about the gradients"
PY
"$bin" --export "$tmp/ex" --backward --stage grad.l1.jacobian lessons/induction-heads.json >/dev/null 2>"$tmp/err" &&
    [ -s "$tmp/ex/0000-grad.l1.jacobian.png" ] || fail "--export --backward --stage grad.l1.jacobian: $(cat "$tmp/err")"
"$bin" --describe --backward lessons/arange-2x4x4.json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
    grep -qF "lessons/arange-2x4x4.json: vocab: the backward pass needs a language model" "$tmp/err" ||
    fail "--describe --backward of a lesson without a vocab: exit $rc, $(cat "$tmp/err")"

[ "$fails" = 0 ] && echo "backward_cli: ok"
[ "$fails" = 0 ]
