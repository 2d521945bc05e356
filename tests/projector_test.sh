#!/bin/sh
# Projector mode at the sizes projectors have (issues 23, 35), read from --describe
# --projector --size (number_px, the part of a split stage): at 1024x768, 1280x720,
# 1920x1080 and 3840x2160 every number drawn in a cell is at least the projector's
# minimum, 12 / 15 / 22 / 45 px (1/48 of the height), or the stage is shown in parts;
# only beside a tensor too large for such numbers even alone (more than 5 rows or 6
# columns) do they keep the usual minimum. Every shipped lesson; the classic one without
# exception and never in parts (its stages fit whole at every size).
. "$(dirname "$0")/test_lib.sh"
command -v python3 >/dev/null || { echo "projector: no python3, skipped"; exit 77; }
for size in 1024x768:12 1280x720:15 1920x1080:22 3840x2160:45; do
    for l in lessons/*.json; do
        "$bin" --describe --projector --size "${size%:*}" "$l" >"$tmp/d.json" 2>"$tmp/err" ||
            { fail "$l --size ${size%:*}: $(cat "$tmp/err")"; continue; }
        python3 - "$tmp/d.json" "${size#*:}" "$l" <<'PY' || fail "$l at ${size%:*}"
import json, sys
d, want, lesson = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
classic = "arange-2x4x4" in lesson
ok, parts = True, {}
for f in d["frames"]:
    if "part" in f:
        parts.setdefault(f["stage"], []).append(f["part"])
    large = any(q["shape"][0] > 5 or q["shape"][1] > 6 for q in f["panels"])
    for q in f["panels"]:
        px = q["number_px"]
        if px and px < want and (classic or not large):
            print("%s %s part %s: %s numbers of %d px (< %d)" % (lesson, f["stage"], f.get("part"), q["title"], px, want))
            ok = False
    if "part" in f and any(q["number_px"] == 0 for q in f["panels"]):
        print("%s %s part %d: a panel without numbers" % (lesson, f["stage"], f["part"]))
        ok = False
for st, ps in parts.items():
    if ps != list(range(len(ps))) or len(ps) < 2:
        print("%s %s: parts %s" % (lesson, st, ps))
        ok = False
if classic and parts:
    print("%s: stages in parts: %s (they fit whole at the projector's minimum)" % (lesson, sorted(parts)))
    ok = False
sys.exit(0 if ok else 1)
PY
    done
done
echo "projector: $fails failures"
[ "$fails" -eq 0 ]
