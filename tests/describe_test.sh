#!/bin/sh
# --describe and frames.json say what every frame shows, and what they say is true
# for the lesson (the rules test_scene checks on the layout, here through the JSON a
# slide deck or a screen reader gets): every frame has a formula, narration, alt text
# and panels; every panel a range, a scale kind and a group whose panels share that
# range; "+ b" exactly when the lesson has biases; no "+ mask"; masked_fill exactly
# with a mask; an export's frames.json carries the same. Bad input: one line, exit 1/2.
. "$(dirname "$0")/test_lib.sh"

# every lesson in both languages; one python checks them all (one start, not 88)
describe_lessons lessons/*.json tests/ref/*.lesson.json tests/scene/*.json
python3 - "$tmp/list" <<'PY' >"$tmp/bad" 2>&1 || fail "the describe checks: $(cat "$tmp/bad")"
import json, sys
n = 0
for line in open(sys.argv[1]):
    path, lang, out = line.split()
    lesson = json.load(open(path))
    d = json.load(open(out))
    model = lesson["model"]
    qkv_bias = model.get("qkv_bias", True)
    out_bias = model.get("out_bias", True)
    has_mask = lesson.get("mask") is not None
    bad = []
    stages = {f["stage"] for f in d["frames"]}
    for f in d["frames"]:
        s, fx = f["stage"], f["formula"]
        for k in ("formula", "narration", "alt"):
            if not f[k]:
                bad.append(f"{s}: empty {k}")
        if "+ mask" in fx:
            bad.append(f"{s}: '+ mask' in {fx}")
        if s in ("q_proj", "k_proj", "v_proj") and (("+ b_" in fx) != qkv_bias):
            bad.append(f"{s}: bias {qkv_bias} but {fx}")
        if s == "output" and (("+ b_O" in fx) != out_bias):
            bad.append(f"{s}: out_bias {out_bias} but {fx}")
        if s == "masked_scores" and (("masked_fill" in fx) != has_mask):
            bad.append(f"{s}: mask {has_mask} but {fx}")
        if s == "k_proj" and "key_input" in stages and "key·" not in fx:
            bad.append(f"{s}: cross-attention K not from the key input: {fx}")
        groups = {}
        for p in f["panels"]:
            lo, hi = p["range"]
            if not lo < hi:
                bad.append(f"{s}: {p['title']} range {p['range']}")
            if p["scale"] not in ("diverging", "sequential", "log", "mask"):
                bad.append(f"{s}: {p['title']} scale {p['scale']}")
            g = groups.setdefault(p["scale_group"], p["range"])
            if g != p["range"]:
                bad.append(f"{s}: group {p['scale_group']} has ranges {g} and {p['range']}")
        if not any(p["result"] for p in f["panels"]):
            bad.append(f"{s}: no result panel")
    for b in bad:
        print(f"{path} {lang}: {b}")
    n += 1
assert n >= 2, "only %d descriptions checked" % n
PY
[ -s "$tmp/bad" ] && fail "$(cat "$tmp/bad")"

# an export's frames.json describes its frames the same way
"$bin" --export "$tmp/ex" lessons/cross-attention-padding.json --stage masked_scores --batch 1 >/dev/null 2>&1 || fail "export"
python3 - "$tmp/ex/frames.json" <<'PY' || fail "frames.json"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["frames"][0]
assert f["stage"] == "masked_scores" and "masked_fill(mask == 0, −1e10)" in f["formula"], f["formula"]
assert "Hatched" in f["alt"] and f["panels"] and all("range" in p for p in f["panels"]), f
PY

# every panel says how large its numbers are drawn and with how many decimals, at any
# --size and with --projector (the projector's numbers are at least as large)
for size in 800x600 1280x720; do
    "$bin" --describe lessons/arange-2x4x4.json --size "$size" >"$tmp/n.json" 2>"$tmp/err" || fail "--size $size: $(cat "$tmp/err")"
    "$bin" --describe lessons/arange-2x4x4.json --size "$size" --projector >"$tmp/p.json" 2>"$tmp/err" ||
        fail "--projector --size $size: $(cat "$tmp/err")"
    python3 - "$tmp/n.json" "$tmp/p.json" "$size" <<'PY' || fail "number_px / decimals at $size"
import json, sys
n, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
w, h = map(int, sys.argv[3].split("x"))
assert (n["width"], n["height"], n["projector"], p["projector"]) == (w, h, False, True), (n["width"], p["projector"])
for d in (n, p):
    for f in d["frames"]:
        for q in f["panels"]:
            npx, dec = q["number_px"], q["decimals"]
            assert isinstance(npx, int) and isinstance(dec, int), q
            assert (npx == 0) == (dec == -1), (f["stage"], q)
            assert npx == 0 or npx >= 10, (f["stage"], q)
att_n = next(f for f in n["frames"] if f["stage"] == "attn")
att_p = next(f for f in p["frames"] if f["stage"] == "attn")
rn = next(q for q in att_n["panels"] if q["result"])
rp = next((q for q in att_p["panels"] if q["result"]), att_p["panels"][-1])
assert rn["number_px"] > 0 and rn["decimals"] >= 2, rn
# larger in projector mode (at 800x600 a panel too large for the projector's size keeps the usual one)
assert rp["number_px"] > rn["number_px"] or (w < 1024 and rp["number_px"] == rn["number_px"]), (rn, rp)
PY
done

# the FFN's second layer has numbers at 1920×1080: h, W₂ᵀ, b₂, z and f with 2 decimals
# (issue 22 item 4: W₂ᵀ and b₂ were blank, z and f had 1 decimal)
"$bin" --describe lessons/dk-dv-residual-ffn.json --size 1920x1080 >"$tmp/ffn.json" 2>"$tmp/err" || fail "ffn: $(cat "$tmp/err")"
python3 - "$tmp/ffn.json" <<'PY' || fail "the FFN's second layer at 1920x1080"
import json, sys
f = next(f for f in json.load(open(sys.argv[1]))["frames"] if f["stage"] == "ffn_sum")
bad = [(p["title"], p["number_px"], p["decimals"]) for p in f["panels"] if p["number_px"] < 16 or p["decimals"] != 2]
assert not bad, bad
PY

# --describe measures text as the frames are drawn: its number_px and decimals are the
# export's (frames.json, written with the fonts) for the same frame
"$bin" --describe lessons/alibi-linear-bias.json >"$tmp/al.json" 2>"$tmp/err" || fail "alibi: $(cat "$tmp/err")"
"$bin" --export "$tmp/alx" lessons/alibi-linear-bias.json --stage scores >/dev/null 2>&1 || fail "alibi export"
python3 - "$tmp/al.json" "$tmp/alx/frames.json" <<'PY' || fail "--describe's numbers are not the export's"
import json, sys
d = next(f for f in json.load(open(sys.argv[1]))["frames"] if f["stage"] == "scores")
e = json.load(open(sys.argv[2]))["frames"][0]
pick = lambda f: [(p["title"], p["number_px"], p["decimals"]) for p in f["panels"]]
assert pick(d) == pick(e), (pick(d), pick(e))
PY

# bad input: one line naming the file or the argument
"$bin" --describe /nonexistent.json >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q /nonexistent.json "$tmp/err" || fail "--describe /nonexistent.json: exit $rc, '$(cat "$tmp/err")'"
"$bin" --describe lessons/arange-2x4x4.json --head 9 >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--describe --head 9: exit $rc, '$(cat "$tmp/err")'"
"$bin" --describe lessons/arange-2x4x4.json --stage attn >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "--describe --stage: exit $rc, expected 2 (export only)"
"$bin" --describe lessons/arange-2x4x4.json >/dev/full 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "--describe >/dev/full: exit $rc, expected 1"

echo "describe: $fails failures"
[ "$fails" -eq 0 ]
