#!/bin/sh
# attnviz --train STEPS --save FILE (issue 38 item 4; test_task checks the numbers against the
# script): the trained lesson is written with its checkpoints and its task, reads back and
# shows; a lesson without a task or without a vocab, bad steps, a bad lr: one line, exit 1 or
# 2, nothing written; a step that breaks the weights: exit 1 naming the step, FILE holding the
# weights before it.
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# the reversal lesson: 40 steps of SGD, a line per checkpoint (every 2 steps), FILE its checkpoints
"$bin" --train 40 --step sgd:lr=0.05 --seed 11 --save "$tmp/r.json" lessons/reversal-anti-diagonal.json \
    >"$tmp/out" 2>"$tmp/err" || fail "reversal: exit $? $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "reversal: stderr: $(cat "$tmp/err")"
[ "$(grep -c '^step ' "$tmp/out")" = 21 ] || fail "reversal: not 21 step lines: $(cat "$tmp/out")"
grep -q '^training lessons/reversal-anti-diagonal.json: sgd, lr 0.05, 40 steps of 64 × 13 tokens (task reversal, seed 11)$' \
    "$tmp/out" || fail "reversal: the first line: $(head -n 1 "$tmp/out")"
grep -q "r.json: the lesson trained 40 steps, 21 checkpoints" "$tmp/out" || fail "reversal: the last line"
"$bin" --check "$tmp/r.json" >/dev/null || fail "the trained lesson does not check"
grep -q '"task": {"kind": "reversal", "length": 13, "batch": 64, "seed": 4}' "$tmp/r.json" ||
    fail "the task is not kept (the lesson's own seed)"
"$bin" --checkpoint 20 --dump "$tmp/r.json" >"$tmp/d20" && "$bin" --dump "$tmp/r.json" >"$tmp/d" &&
    cmp -s "$tmp/d20" "$tmp/d" || fail "the last checkpoint is not the trained weights"
"$bin" --checkpoint 0 --dump "$tmp/r.json" >"$tmp/d0" && "$bin" --dump lessons/reversal-anti-diagonal.json >"$tmp/dr" &&
    cmp -s "$tmp/d0" "$tmp/dr" || fail "checkpoint 0 is not the weights before training"
ls "$tmp" | grep -q '^\.\|tmp' && fail "a temporary file left: $(ls -a "$tmp")"
# the same seed, the same bytes
"$bin" --train 40 --step sgd:lr=0.05 --seed 11 --save "$tmp/r2.json" lessons/reversal-anti-diagonal.json >/dev/null &&
    cmp -s "$tmp/r.json" "$tmp/r2.json" || fail "not deterministic"

# errors: one line, nothing written
expect() { # CODE WANT ARGS…: the exit code and a line containing WANT on stderr, nothing written
    code=$1 want=$2; shift 2
    rm -f "$tmp/x.json"
    "$bin" "$@" >"$tmp/o" 2>"$tmp/e"; rc=$?
    [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code"
    grep -qF -- "$want" "$tmp/e" || fail "$*: stderr lacks \"$want\": $(cat "$tmp/e")"
    [ "$(wc -l <"$tmp/e")" = 1 ] || fail "$*: not one line: $(cat "$tmp/e")"
    [ -e "$tmp/x.json" ] && fail "$*: a file was written"
}
expect 1 "tests/ref/backward/post-norm-relu-learned.lesson.json: task: the lesson has none" \
    --train 5 --save "$tmp/x.json" tests/ref/backward/post-norm-relu-learned.lesson.json
expect 1 "lessons/arange-2x4x4.json: task: not a language model" --train 5 --save "$tmp/x.json" lessons/arange-2x4x4.json
expect 2 "--train: 0: expected a whole number of steps from 1 to 1000000" --train 0 --save "$tmp/x.json" lessons/induction-heads.json
expect 2 "--train: 1e3: expected a whole number" --train 1e3 --save "$tmp/x.json" lessons/induction-heads.json
expect 2 "--train goes with --save FILE" --train 5 lessons/induction-heads.json
expect 2 "--step: lr=-1: expected a finite number > 0" --train 5 --step adamw:lr=-1 --save "$tmp/x.json" lessons/induction-heads.json
expect 2 "--step: lr=nan: expected a finite number > 0" --train 5 --step sgd:lr=nan --save "$tmp/x.json" lessons/induction-heads.json
expect 2 "--step: steps=3: --train 5 counts the steps; expected no steps= with --train" \
    --train 5 --step adamw:steps=3 --save "$tmp/x.json" lessons/induction-heads.json

# a step too large: exit 1 naming the step and the stage, FILE the weights before that step
"$bin" --train 10 --step sgd:lr=1e37 --save "$tmp/n.json" lessons/reversal-anti-diagonal.json >"$tmp/o" 2>"$tmp/e"
[ $? = 1 ] || fail "lr 1e37: not exit 1"
grep -q "lessons/reversal-anti-diagonal.json: step 1: the loss is not finite after it" "$tmp/e" || fail "lr 1e37: $(cat "$tmp/e")"
# (its checkpoint line says so in words, not printf's "-nan")
grep -q '^step      1 .*held-out loss not finite' "$tmp/o" && ! grep -qi 'nan' "$tmp/o" || fail "lr 1e37: the step line: $(cat "$tmp/o")"
"$bin" --dump "$tmp/n.json" >"$tmp/dn" && cmp -s "$tmp/dn" "$tmp/dr" || fail "lr 1e37: FILE is not the weights before step 1"

[ "$fails" = 0 ] || exit 1
echo "train_cli: ok"
