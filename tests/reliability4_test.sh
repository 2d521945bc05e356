#!/bin/sh
# Issue 36 ("Reliability, round four"), the command line's part of items 3, 4 and 5 (the
# text box's and the session's part of item 1 is in test_session; the bad lessons of items
# 3 and 4 are in tests/bad/):
#  item3  a language model whose logits (B, L, V) pass the element limit, generated here
#         (64 texts × 256 ids, d_model 1024, vocab 1024: the issue's 90 KB lesson): --check
#         refuses it with one line naming the file and "input"
#  item4  a 4 KB lesson of 64 {"init"} checkpoints: refused at once (well under a second),
#         naming "checkpoints"
#  item5  --save after --text or --checkpoint writes none of the author's narration, notes
#         and questions (written about the file's own text and weights); a plain --save of
#         lessons/induction-heads.json keeps its 20 checkpoints, re-loads to the same --dump
#         and to the same --dump at each checkpoint; a lesson whose last checkpoint is its
#         model (no "weights") is saved without "weights" and re-loads the same
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
command -v python3 >/dev/null || { echo "reliability4_test: no python3"; exit 77; }
IH=lessons/induction-heads.json

# --- item 3 ----------------------------------------------------------------------------
python3 - "$tmp/lm90.json" <<'PY'
import json, sys
V = 1024
json.dump({"title": "logits of 64·256·1024", "vocab": ["t%d" % i for i in range(V)],
           "model": {"d_model": 1024, "n_heads": 1, "d_k": 4, "d_v": 4, "positions": "none"},
           "input": {"ids": [[(b * 7 + l) % V for l in range(256)] for b in range(64)]}, "mask": "causal",
           "weights": {"init": {"seed": 1}}}, open(sys.argv[1], "w"), separators=(",", ":"))
PY
one_line "item3 --check" 1 "$tmp/lm90.json: input: " "$bin" --check "$tmp/lm90.json"
grep -qF "over the limit of 4194304" "$tmp/err" || fail "item3: $(cat "$tmp/err")"

# --- item 4 ----------------------------------------------------------------------------
python3 - "$tmp/ck64.json" <<'PY'
import json, sys
json.dump({"title": "64 checkpoints", "model": {"d_model": 512, "n_heads": 8, "ffn_hidden": 2048},
           "input": {"query": {"shape": [1, 2, 512], "arange": [0, 1024]}},
           "checkpoints": [{"step": k, "loss": 1, "weights": {"init": {"seed": k}}} for k in range(64)]},
          open(sys.argv[1], "w"), separators=(",", ":"))
PY
start=$(date +%s.%N)
one_line "item4 --check" 1 "$tmp/ck64.json: checkpoints: 64 checkpoints of" "$bin" --check "$tmp/ck64.json"
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
awk -v s="$secs" 'BEGIN { exit !(s < 1) }' || fail "item4: the refusal took $secs s (generated before checking?)"

# --- item 5 ----------------------------------------------------------------------------
# keys KEY... FILE: fails unless FILE (a lesson) has none of the keys
no_keys() {
    name=$1 file=$2
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); bad=[k for k in ("steps","notes","quiz") if k in d]; sys.exit(bad and print(bad) or 0)' \
        "$file" || fail "$name: the saved lesson keeps the author's narration/notes/quiz"
}
same_dump() { # NAME ARGS-A... -- ARGS-B...: the two --dump outputs are the same
    name=$1; shift
    a=; while [ "$1" != -- ]; do a="$a $1"; shift; done; shift
    # (the arguments here have no spaces)
    "$bin" --dump $a >"$tmp/da.json" 2>"$tmp/err" || fail "$name: --dump$a: $(cat "$tmp/err")"
    "$bin" --dump "$@" >"$tmp/db.json" 2>"$tmp/err" || fail "$name: --dump $*: $(cat "$tmp/err")"
    cmp -s "$tmp/da.json" "$tmp/db.json" || fail "$name: --dump$a differs from --dump $*"
}
"$bin" --text "the cat sat" --save "$tmp/typed.json" lessons/tiny-lm-fortunes.json 2>"$tmp/err" ||
    fail "item5 --text --save: $(cat "$tmp/err")"
no_keys "item5 --text" "$tmp/typed.json"
"$bin" --checkpoint 0 --save "$tmp/ck0.json" "$IH" 2>"$tmp/err" || fail "item5 --checkpoint --save: $(cat "$tmp/err")"
no_keys "item5 --checkpoint" "$tmp/ck0.json"
same_dump "item5 --checkpoint 0 saved" "$tmp/ck0.json" -- --checkpoint 0 "$IH"
# a plain copy: the author's texts and every checkpoint kept
"$bin" --save "$tmp/copy.json" "$IH" 2>"$tmp/err" || fail "item5 --save: $(cat "$tmp/err")"
n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d.get("checkpoints", [])), "steps" in d)' "$tmp/copy.json")
[ "$n" = "20 True" ] || fail "item5: the plain copy has (checkpoints, steps) = $n, expected 20 True"
same_dump "item5 plain copy" "$tmp/copy.json" -- "$IH"
for k in 0 7 19; do same_dump "item5 copy at checkpoint $k" --checkpoint $k "$tmp/copy.json" -- --checkpoint $k "$IH"; done
# no "weights": the last checkpoint is the model, and stays so
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["weights"]; json.dump(d, open(sys.argv[2], "w"))' \
    "$IH" "$tmp/noweights.json"
"$bin" --save "$tmp/nw-copy.json" "$tmp/noweights.json" 2>"$tmp/err" || fail "item5 --save (no weights): $(cat "$tmp/err")"
grep -q '"weights": {"w_q"\|^  "weights"' "$tmp/nw-copy.json" && fail "item5: the copy of a lesson without \"weights\" has them"
same_dump "item5 copy without weights" "$tmp/nw-copy.json" -- "$tmp/noweights.json"
same_dump "item5 copy without weights, checkpoint 3" --checkpoint 3 "$tmp/nw-copy.json" -- --checkpoint 3 "$tmp/noweights.json"

[ $fails -eq 0 ] && echo "reliability4_test: ok" || { echo "reliability4_test: $fails failed"; exit 1; }
