#!/bin/sh
# attnviz --compare SPEC with --dump / --describe and --experiment NAME (issue 41 items 1 and 3;
# test_experiment checks the numbers against PyTorch): the JSON's shape and its summary line in
# both languages, the Δ tensors = B − A of two --dump runs, and the bad inputs: one line on
# stderr naming what is wrong, nothing on stdout, exit 1 (2 for a usage error).
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp, one_line
py=$(command -v python3) || { echo "no python3"; exit 77; }

# Δ = B − A: the dump's delta against --dump of A and of B (--set)
L=lessons/causal-decoder.json
"$bin" --compare set:model.mask_fill=-inf --dump "$L" >"$tmp/c.json" 2>"$tmp/err" || fail "--compare --dump: $(cat "$tmp/err")"
"$bin" --dump "$L" >"$tmp/a.json"
"$bin" --dump --set model.mask_fill=-inf "$L" >"$tmp/b.json"
"$bin" --compare set:model.mask_fill=-inf --describe --lang zh "$L" >"$tmp/zh.json" || fail "--describe --lang zh"
"$py" - "$tmp/c.json" "$tmp/a.json" "$tmp/b.json" "$tmp/zh.json" <<'PY' || fail "the compare dump"
import json, math, sys
c, a, b, zh = (json.load(open(p)) for p in sys.argv[1:5])
A = {s["name"]: s["data"] for s in a["stages"]}
Bs = {s["name"]: s["data"] for s in b["stages"]}
num = lambda v: float(v) if not isinstance(v, str) else float(v.replace("inf", "inf"))
assert [s["name"] for s in c["stages"]] == list(A), "every stage of A, in order"
for s in c["stages"]:
    d = s["delta"]["data"]
    for x, y, v in zip(A[s["name"]], Bs[s["name"]], d):
        x, y, v = num(x), num(y), num(v)
        want = 0.0 if x == y or (math.isnan(x) and math.isnan(y)) else y - x
        assert v == want or (math.isnan(v) and math.isnan(want)), (s["name"], x, y, v)
    assert s["identical"] == all(num(v) == 0 for v in d), s["name"]
differ = [s["name"] for s in c["stages"] if not s["identical"]]
assert differ == ["masked_scores"], differ
assert c["summary"].startswith("B = set:model.mask_fill=-inf: 13 stages identical (input … scores, attn … output); 1 differ: masked_scores (max |Δ| ∞)"), c["summary"]
assert "完全相同" in zh["summary"] and "最大 |Δ|" in zh["summary"], zh["summary"]
assert "delta" not in zh["stages"][0] and zh["stages"][0]["text"] == "完全相同"
PY

# experiments: the numbers in words, in both languages
"$bin" --experiment ablation --lang zh lessons/induction-heads.json | grep -qF '"summary": "把 l0.h1 的输出置零，本课文本上的损失升得最多：1.344 → 7.772（+6.43）；其次是 l1.h1（+5.75）。"' ||
    fail "--experiment ablation --lang zh: its summary"
"$bin" --experiment logit-lens lessons/induction-heads.json | grep -qF 'after layer 0 at 1 of 11 positions, after layer 1 at 6 of 11' ||
    fail "--experiment logit-lens: its summary"
"$bin" --experiment logit-attribution lessons/induction-heads.json | grep -qF 'l1.h1 adds the most: +5.96 on average' ||
    fail "--experiment logit-attribution: its summary (the induction head first)"
# experiments: the ablation table ranks every head; the logit lens's last layer is the model's own
"$bin" --experiment ablation lessons/induction-heads.json >"$tmp/ab.json" || fail "--experiment ablation"
"$bin" --experiment logit-lens lessons/induction-heads.json >"$tmp/ll.json" || fail "--experiment logit-lens"
"$bin" --dump lessons/induction-heads.json >"$tmp/ind.json"
"$py" - "$tmp/ab.json" "$tmp/ll.json" "$tmp/ind.json" <<'PY' || fail "the experiments' JSON"
import json, sys
ab, ll, d = (json.load(open(p)) for p in sys.argv[1:4])
heads = ab["heads"]
assert len(heads) == 4 and [h["rank"] for h in heads] == [1, 2, 3, 4]
assert all(heads[k]["delta"] >= heads[k + 1]["delta"] for k in range(3))
assert {(h["layer"], h["head"]) for h in heads[:2]} == {(0, 1), (1, 1)}, heads[:2]
probs = next(s for s in d["stages"] if s["name"] == "probs")
V = probs["shape"][-1]
last = ll["top_prob"][-1]
for i, p in enumerate(last):
    row = probs["data"][i * V:(i + 1) * V]
    assert p == max(row) and ll["top"][-1][i] == row.index(max(row)), i
PY

# the compare view exported: a frame a stage of A (A | B | Δ), in both languages; a B that cannot
# be made writes nothing (no directory)
for lang in en zh; do
    "$bin" --export "$tmp/x-$lang" --lang $lang --compare ablate:l1.h1 lessons/induction-heads.json >/dev/null 2>"$tmp/err" ||
        fail "--export --compare --lang $lang: $(cat "$tmp/err")"
    n=$(ls "$tmp/x-$lang"/*.png 2>/dev/null | wc -l)
    [ "$n" = 35 ] || fail "--export --compare --lang $lang: $n frames, expected 35 (every stage of A)"
done
"$bin" --export "$tmp/x-head" --stage l1.head_out --head 1 --compare ablate:l1.h1 lessons/induction-heads.json >/dev/null ||
    fail "--export --compare --stage --head"
[ -f "$tmp/x-head/0000-l1.head_out.png" ] || fail "--export --compare --stage: no frame"
"$bin" --export "$tmp/x-bad" --compare ablate:l5.h0 lessons/induction-heads.json >/dev/null 2>"$tmp/err" && fail "a bad ablation exported"
grep -qF 'no such head' "$tmp/err" || fail "--export --compare ablate:l5.h0: \"$(cat "$tmp/err")\""
[ -e "$tmp/x-bad" ] && fail "--export --compare: a bad B made the directory"

# a whole layer's attention ablated (ablate:l1): B's l1.head_out and l1.concat are 0 (A + Δ), every
# stage before layer 1's attention output identical
"$bin" --compare ablate:l1 --dump lessons/induction-heads.json >"$tmp/l1.json" || fail "--compare ablate:l1"
"$py" - "$tmp/l1.json" "$tmp/ind.json" <<'PY' || fail "ablate:l1: B's layer 1 attention output is not zero"
import json, sys
c, a = (json.load(open(p)) for p in sys.argv[1:3])
A = {s["name"]: s["data"] for s in a["stages"]}
for s in c["stages"]:
    b = [x + d for x, d in zip(A[s["name"]], s["delta"]["data"])]
    if s["name"] in ("l1.head_out", "l1.concat"):
        assert not s["identical"] and all(v == 0.0 for v in b), s["name"]
names = [s["name"] for s in c["stages"]]
first = names.index("l1.head_out")
assert all(s["identical"] for s in c["stages"][:first]), [s["name"] for s in c["stages"][:first] if not s["identical"]]
PY

bad() { # bad RC WANT ARGS...: exit RC, one line naming WANT (one_line), nothing on stdout
    rc_w=$1 want=$2; shift 2
    one_line "$*" "$rc_w" "$want" "$bin" "$@"
    [ -s "$tmp/out" ] && fail "$*: wrote to stdout"
}
I=lessons/induction-heads.json
bad 1 'stage "input" is (2,4,4) in A and (1,6,6) in B' --compare lesson:lessons/sentence-the-cat.json --dump lessons/arange-2x4x4.json
bad 1 'no such head: the model has 2 layers of 2 heads (l0.h0 … l1.h1)' --compare ablate:l2.h0 --dump $I
bad 1 '"l5": no such layer: the model has 2 layers (l0 … l1)' --compare ablate:l5 --dump $I
bad 1 '"l1.h9": no such head: the model has 2 layers of 2 heads' --compare ablate:l1.h9 --describe $I
bad 1 '"x1": expected a head as lL.hH, e.g. l1.h0 (layer.head, from 0) or a layer as lL' --compare ablate:x1 --dump $I
bad 1 'model.flash: an ablation changes head_out' --compare ablate:h0 --describe lessons/flash-attention-tiles.json
bad 1 '--compare text:ab c: input.text' --compare 'text:ab c' --dump $I
bad 1 "--compare text:qkdmbx: B's text is 6 tokens and A's 12: a compare needs as many tokens in both" --compare text:qkdmbx --describe $I
bad 2 '--compare: "swap:1": expected set:KEY=VALUE' --compare swap:1 --dump $I
bad 2 '--compare goes with --dump, --describe and --export' --compare set:mask=causal --quiz $I
bad 2 '--experiment: expected ablation, ablation-mean, logit-lens, logit-attribution or patching' --experiment lens $I
bad 1 'the logit lens reads the residual stream through the unembedding: a language model' --experiment logit-lens lessons/arange-2x4x4.json
bad 1 'ranks heads by the next-token loss' --experiment ablation lessons/arange-2x4x4.json
bad 1 'direct logit attribution follows each head' --experiment logit-attribution tests/ref/backward/post-norm-relu-learned.lesson.json
# activation patching's bad input: texts of different lengths, a character outside the vocab, no --corrupt
bad 1 '--corrupt: "qkdmb" is 5 tokens, the lesson'"'"'s text 12: patching needs texts of one length' --experiment patching --corrupt qkdmb $I
bad 1 '--corrupt: input.text: character 12, "!", is not in the vocab' --experiment patching --corrupt 'qkdmbxakdmb!' $I
bad 2 '--experiment patching needs --corrupt TEXT' --experiment patching $I
bad 1 'the clean text'"'"'s probability, 0.1437: nothing to recover' --text qkdmbx --experiment patching --corrupt qkdmbx $I
bad 1 '--corrupt: "qkdmbxakdmbx" is 12 tokens, the lesson'"'"'s text 6' --text qkdmbx --experiment patching --corrupt qkdmbxakdmbx $I
# an experiment that cannot run writes nothing (no directory)
for args in "--experiment patching --corrupt qkdmb" "--text qkdmbx --experiment patching --corrupt qkdmbx" \
    "--experiment ablation"; do
    lesson=$I
    [ "$args" = "--experiment ablation" ] && lesson=lessons/arange-2x4x4.json
    rm -rf "$tmp/x-none"
    # shellcheck disable=SC2086
    "$bin" $args --export "$tmp/x-none" $lesson >/dev/null 2>"$tmp/err" && fail "$args --export: exit 0"
    [ -e "$tmp/x-none" ] && fail "$args --export: a bad experiment made the directory"
done
bad 2 '--corrupt goes with --experiment patching' --experiment ablation --corrupt qkdmbxakdmbx $I
# a convention's bad value
bad 1 'model.window_convention=w: expected "inclusive" or "flash"' --compare set:model.window_convention=w --dump $I

# the experiments drawn (view_experiment.c): --export writes one frame, DIR/0000-NAME.png, and its
# frames.json; --describe its cells, the same numbers as the JSON of --experiment alone
for e in ablation logit-lens logit-attribution; do
    "$bin" --experiment $e --export "$tmp/x-$e" $I >/dev/null 2>"$tmp/err" || fail "--experiment $e --export: $(cat "$tmp/err")"
    [ -s "$tmp/x-$e/0000-$e.png" ] && [ "$(ls "$tmp/x-$e" | wc -l)" = 2 ] || fail "--experiment $e --export: not one frame $(ls "$tmp/x-$e")"
    "$bin" --experiment $e --describe --lang zh $I >"$tmp/x-$e.json" || fail "--experiment $e --describe"
done
"$bin" --experiment patching --corrupt qkdmbxakdmbx --export "$tmp/x-patching" --format svg $I >/dev/null 2>"$tmp/err" &&
    [ -s "$tmp/x-patching/0000-patching.svg" ] || fail "--experiment patching --export --format svg: $(cat "$tmp/err")"
"$py" - "$tmp/ab.json" "$tmp/x-ablation.json" "$tmp/ll.json" "$tmp/x-logit-lens.json" "$tmp/x-ablation/frames.json" <<'PY' || fail "the experiments drawn"
import json, sys
ab, xab, ll, xll, idx = (json.load(open(p)) for p in sys.argv[1:6])
f = xab["frames"][0]
assert f["experiment"] == "ablation" and f["panel0"]["rows"][:2] == ["l0.h1", "l1.h1"], f["panel0"]["rows"]
for h, row, v in zip(ab["heads"], f["panel0"]["rows"], f["panel0"]["values"]):
    assert row == "l%d.h%d" % (h["layer"], h["head"]) and v[0] == h["delta"], (h, row, v)
assert f["bars"]["numbers"][0] == "+" + f["panel0"]["cells"][0][0], f["bars"]
assert "把 l0.h1 的输出置零" in f["narration"] and "置零" in f["panels"][0]["title"], f
g = xll["frames"][0]["panel0"]
assert g["values"] == ll["top_prob"], "the lens's cells are --experiment logit-lens's"
assert idx["frames"][0]["file"] == "0000-ablation.png" and idx["frames"][0]["panel0"]["cells"] == f["panel0"]["cells"]
PY
bad 2 '--experiment goes alone (its JSON), with --export DIR or with --describe' --experiment ablation --dump $I
bad 2 '--experiment with --export is one frame of the experiment: no --stage' --experiment ablation --export "$tmp/no" --stage l0.attn $I
[ -e "$tmp/no" ] && fail "--experiment --export --stage: made the directory"

# a typed text as B (the window's Shift+D "a typed text" makes the same B): A's text against it
# stage by stage, the positions identical, the token embeddings differing at the last token only
"$bin" --compare text:qkdmbxqkdmbq --dump $I >"$tmp/t.json" 2>"$tmp/err" || fail "--compare text: $(cat "$tmp/err")"
"$py" - "$tmp/t.json" <<'PY' || fail "the compare of a typed text"
import json, sys
c = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in c["stages"]}
assert st["pos_embed"]["identical"] and not st["token_embed"]["identical"], "positions same, tokens not"
d, shape = st["token_embed"]["delta"]["data"], st["token_embed"]["delta"]["shape"]
rows = [any(float(v) != 0 for v in d[i * shape[-1]:(i + 1) * shape[-1]]) for i in range(shape[1])]
assert rows == [False] * 11 + [True], rows
PY
[ "$fails" = 0 ] && echo "compare: ok"
exit $((fails > 0))
