#!/bin/sh
# --set, --text and --save, the what-if engine from the command line (test_edit checks the
# engine itself): a saved lesson is valid and its --dump equals --dump of the original
# with the same --set edits, for every shipped lesson; --print, --describe and --export
# take edits and say the lesson is edited; a bad edit is one line on stderr, exit 1,
# and no file is written; --save never leaves a temporary file.
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for lesson in lessons/*.json; do
    set -- --set 'input.query[0,0,1]=2.5' --set 'weights.w_v[1,0]=-0.75' --set 'model.scale=1' \
        --set 'mask[0,0,1]=0' --set 'model.mask_fill=-inf'
    # a language model reads token ids, not a query tensor: its embedding instead
    grep -q '"vocab"' "$lesson" && set -- --set 'weights.embed[0,1]=2.5' --set 'weights.w_v[1,0]=-0.75' \
        --set 'model.scale=1' --set 'mask[0,0,1]=0' --set 'model.mask_fill=-inf'
    # an encoder–decoder's masks are the model's (no mask cell to edit); a vision transformer reads an image
    grep -q '"decoder_layers"' "$lesson" && set -- --set 'input.query[0,0,1]=2.5' --set 'weights.w_v[1,0]=-0.75' \
        --set 'model.scale=1' --set 'model.mask_fill=-inf'
    grep -q '"image"' "$lesson" && set -- --set 'weights.w_v[1,0]=-0.75' \
        --set 'model.scale=1'
    "$bin" "$@" --save "$tmp/saved.json" "$lesson" 2>"$tmp/err" || { fail "$lesson: --save exit $? $(cat "$tmp/err")"; continue; }
    "$bin" --check "$tmp/saved.json" >/dev/null 2>&1 || fail "$lesson: --check rejects the saved lesson"
    "$bin" --dump "$tmp/saved.json" >"$tmp/a.json" || fail "$lesson: --dump saved"
    "$bin" --dump "$lesson" "$@" >"$tmp/b.json" || fail "$lesson: --dump --set"
    cmp -s "$tmp/a.json" "$tmp/b.json" || fail "$lesson: --dump of the saved lesson differs from --dump --set"
    "$bin" --dump "$lesson" >"$tmp/c.json"
    cmp -s "$tmp/a.json" "$tmp/c.json" && fail "$lesson: the edits changed nothing"
    grep -q '"title": "[^"]*(edited)"' "$tmp/a.json" || fail "$lesson: the title does not say edited"
    ls "$tmp" | grep -q 'tmp-' && fail "$lesson: a temporary file was left behind"
done

L=lessons/arange-2x4x4.json
# --print: the scale the edit set
"$bin" --print scores "$L" --set model.scale=1 >"$tmp/p.txt" || fail "--print --set exit $?"
grep -q '^# scale = 1 ' "$tmp/p.txt" || fail "--print --set model.scale=1: $(tail -n 1 "$tmp/p.txt")"
# --describe: edited title, generated narration
"$bin" --describe "$L" --set 'input.query[0,0,0]=1' >"$tmp/d.json" || fail "--describe --set exit $?"
python3 - "$tmp/d.json" <<'PY' || fail "--describe --set"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["title"].endswith("(edited)"), d["title"]
assert "torch.arange" not in d["frames"][0]["narration"], "the original's narration on an edited lesson"
PY
# --export: frames.json says edited
"$bin" --export "$tmp/ex" "$L" --stage scores --set mask=causal >/dev/null 2>&1 || fail "--export --set exit $?"
grep -q '(edited)' "$tmp/ex/frames.json" || fail "--export --set: frames.json does not say edited"

# bad edits: one line naming the argument, exit 1, no file
for arg in 'input.query[0,4,0]=1' 'weights.b_q[0]=x' 'mask=diagonal' 'model.scale=0' 'nope=1' \
           'input.key[0,0,0]=1' 'model.mask_fill=nan'; do
    rm -f "$tmp/bad.json"
    "$bin" --set "$arg" --save "$tmp/bad.json" "$L" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "--set $arg: exit $rc, expected 1"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--set $arg: not one line: $(cat "$tmp/err")"
    grep -q "^attnviz: --set $arg: " "$tmp/err" 2>/dev/null || grep -qF "attnviz: --set $arg: " "$tmp/err" || fail "--set $arg: $(cat "$tmp/err")"
    [ -e "$tmp/bad.json" ] && fail "--set $arg: wrote $tmp/bad.json"
done
"$bin" --save /nonexistent-dir/x.json "$L" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q '^/nonexistent-dir/x.json: cannot write' "$tmp/err" || fail "--save to a missing folder: exit $rc $(cat "$tmp/err")"
"$bin" --dump "$L" --set 2>/dev/null; [ $? -eq 2 ] || fail "--set without KEY=VALUE is not a usage error"

# --text: a language model's input typed in. The token embedding's rows are E's rows of the
# tokens typed; --save writes the ids, which read back to the same numbers; a bad text is
# one line naming --text, exit 1, nothing written.
LM=tests/ref/lm-char-2-layer.lesson.json
"$bin" --text "cabba c" --dump "$LM" >"$tmp/t.json" || fail "--text --dump exit $?"
/usr/bin/env python3 - "$tmp/t.json" "$LM" <<'PY' || fail "--text: the token embedding is not E's rows of the text"
import json, sys
d, les = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
st = {s["name"]: s for s in d["stages"]}
vocab = les["vocab"]
ids = [vocab.index(ch) for ch in "cabba c"]
e = st["token_embed"]
assert e["shape"] == [1, 7, 8], e["shape"]
rows = [e["data"][i * 8:(i + 1) * 8] for i in range(7)]
for i, t in enumerate(ids):  # the same id, the same row; another id, another row
    for j, u in enumerate(ids):
        assert (rows[i] == rows[j]) == (t == u), (i, j)
assert st["probs"]["shape"] == [1, 7, len(vocab)]
PY
"$bin" --text "cabba c" --save "$tmp/typed.json" "$LM" 2>"$tmp/err" || fail "--text --save: $(cat "$tmp/err")"
"$bin" --dump "$tmp/typed.json" >"$tmp/t2.json" || fail "--dump of the saved typed lesson"
python3 -c 'import json,sys; a,b=(json.load(open(f))["stages"] for f in sys.argv[1:]); sys.exit(a != b)' "$tmp/t.json" "$tmp/t2.json" \
    || fail "--text --save: the saved lesson computes other numbers"
for case in 'cabZa|character 4, "Z", is not in the vocab' '|empty: expected at least one token' \
            'abcabcabcabcab|14 tokens, longer than the model'"'"'s context (model.max_positions 12)'; do
    text=${case%%|*} want=${case#*|}
    rm -f "$tmp/bad.json"
    "$bin" --text "$text" --save "$tmp/bad.json" "$LM" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc -eq 1 ] || fail "--text '$text': exit $rc, expected 1"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "--text: input.text: $want" "$tmp/err" || fail "--text '$text': $(cat "$tmp/err")"
    [ -e "$tmp/bad.json" ] && fail "--text '$text': wrote $tmp/bad.json"
done
"$bin" --text "abc" --dump "$L" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -qF -- "--text: $L is not a language model" "$tmp/err" || fail "--text on $L: exit $rc $(cat "$tmp/err")"

[ $fails -eq 0 ] && echo "edit_cli_test: ok" || { echo "edit_cli_test: $fails failed"; exit 1; }
