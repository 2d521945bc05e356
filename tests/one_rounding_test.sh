#!/bin/sh
# Issue 35, item 13: one value, one rounding on one screen, as --describe reports every
# frame (1280×720, every shipped lesson, English and Chinese):
# - the attention scale is written one way in a frame: its formula, note, narration, the
#   operators and the strip's labels (√2 was 1.414, 1.41, 1.4142 and 1.41421 in one frame);
# - a strip line that writes out a panel's numbers (the scores row, q and k, the result)
#   has that panel's decimals (a score cell showed 0.9 beside its strip's 0.85), or the
#   frame's note says the strip writes more digits than the cells hold;
# - a softmax row whose cells as shown do not add up to its Σ as shown (sentence-the-cat:
#   "sat" 0.98 beside Σ 1.00) has a note saying the cells are rounded.
. "$(dirname "$0")/test_lib.sh"
cat >"$tmp/check.py" <<'PY'
import json, re, subprocess, sys
bin_, lesson, lang = sys.argv[1:4]
desc = json.loads(subprocess.run([bin_, "--describe", "--lang", lang, lesson], capture_output=True, text=True, check=True).stdout)
dump = {s["name"]: s for s in json.loads(subprocess.run([bin_, "--dump", lesson], capture_output=True, text=True, check=True).stdout)["stages"]}
digits_note = "下方的步骤" if lang == "zh" else "the steps below write"
rounded_note = "四舍五入" if lang == "zh" else "cells rounded to"
bad = []
dec = lambda t: len(t.split(".")[1]) if re.fullmatch(r"-?\d+\.\d+", t) else None
# the scale as the frames write it: the scores' operator "/S =" or the strip's "÷ S"
scale = None
for f in desc["frames"]:
    for p in f["panels"]:
        m = re.match(r"/(\d+\.\d+)", p["op"])
        scale = scale or (m and m.group(1))
for f in desc["frames"]:
    where = "%s (%s) %s" % (lesson, lang, f["stage"])
    if scale:
        texts = [f["formula"], f["note"], f["narration"]] + [p["op"] for p in f["panels"]]
        if f.get("strip"):
            texts += [l[0] for l in f["strip"]["lines"]]
        for t in texts:
            for n in re.findall(r"\d+\.\d{2,}", t):
                # (either a rounding of the other: 1.414 beside 1.41, 1.41 beside 1.41421)
                if n != scale and abs(float(n) - float(scale)) <= 0.5 * 10 ** -min(dec(n), dec(scale)) + 1e-9:
                    bad.append("%s: the scale written %s and %s" % (where, scale, n))
    s = f.get("strip")
    if s and s["shown"]:
        for line, p in zip(s["lines"], s.get("panels", [-1] * len(s["lines"]))):
            if p < 0 or f["panels"][p]["number_px"] == 0:
                continue
            want = f["panels"][p]["decimals"]
            got = {dec(v) for v in line[1:]} - {None}
            if got and got != {want} and digits_note not in f["note"]:
                bad.append("%s: the strip writes %s with %s decimals, its cells with %d" % (where, line[0], sorted(got), want))
    res = [p for p in f["panels"] if p["result"]]
    st = dump.get(f["stage"])
    if res and st and res[0]["number_px"] > 0 and f["stage"].split(".")[-1] == "attn" and len(st["shape"]) == 4 \
            and res[0]["shape"] == st["shape"][2:]:
        L, K, d = st["shape"][2], st["shape"][3], res[0]["decimals"]
        o = (desc["batch"] * st["shape"][1] + f.get("head", 0)) * L * K  # the slice the frame shows
        for r in range(L):
            row = [x for x in st["data"][o + r * K:o + (r + 1) * K]]
            if any(isinstance(x, str) for x in row):
                continue
            shown = sum(round(x, d) for x in row)
            if "%.2f" % shown != "%.2f" % sum(row) and rounded_note not in f["note"]:
                bad.append("%s: row %d's cells add to %.2f beside Σ %.2f, no note" % (where, r, shown, sum(row)))
                break
if bad:
    print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY
for l in lessons/*.json; do
    for lang in en zh; do
        python3 "$tmp/check.py" "$bin" "$l" "$lang" || fail "$l ($lang): one value, one rounding"
    done
done
[ "$fails" -eq 0 ] && echo "one_rounding: ok"
[ "$fails" -eq 0 ]
