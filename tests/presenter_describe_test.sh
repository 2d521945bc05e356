#!/bin/sh
# The presenter window at the sizes a teacher has on one laptop (issue 35, item 4: at
# 640x720 its narration and notes were empty and its text 8-9 px; at 800x720 the clock
# was cut off), through --describe --presenter, every lesson, both languages, every
# stage: no text below 12 px (narration and notes 14); nothing drawn past the window or
# cut by its box; the clock, the title, the copy, the scrub bar, the narration and the
# notes inside the window and not on top of each other; the narration and (when the
# lesson has them) the notes non-empty with at least one line shown, the rest reachable
# by scrolling. Bad use: one line, exit 2.
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: >"$tmp/list"
# every lesson at 640x720 (the window it opened as on 1920x1080); a few at the other sizes:
# 440x720 (beside the audience's on 1280x720), 800x600, 1280x720
for size in 640x720 440x720 800x600 1280x720; do
    lessons=lessons/*.json
    [ "$size" = 640x720 ] || lessons="lessons/arange-2x4x4.json lessons/llama-block.json lessons/tiny-lm-fortunes.json"
    for lesson in $lessons; do
        for lang in en zh; do
            out="$tmp/$(basename "$lesson" .json)-$size-$lang.json"
            "$bin" --describe --presenter --size "$size" --lang "$lang" "$lesson" >"$out" 2>"$tmp/err" ||
                { fail "$lesson $size $lang: exit $? $(cat "$tmp/err")"; continue; }
            [ -s "$tmp/err" ] && fail "$lesson $size $lang: stderr $(cat "$tmp/err")"
            printf '%s %s %s %s\n' "$lesson" "$size" "$lang" "$out" >>"$tmp/list"
        done
    done
done
python3 - "$tmp/list" <<'PY' >"$tmp/bad" 2>&1 || fail "the presenter checks: $(cat "$tmp/bad")"
import json, sys
bad, n = [], 0
def inside(r, w, h):
    x, y, rw, rh = r
    return rw > 0 and rh > 0 and x >= 0 and y >= 0 and x + rw <= w and y + rh <= h
def meet(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]
for line in open(sys.argv[1]):
    path, size, lang, out = line.split()
    lesson = json.load(open(path))
    every_note = path.endswith("arange-2x4x4.json") # (a note on every step)
    notes_seen = 0
    d = json.load(open(out))
    w, h = map(int, size.split("x"))
    assert len(d["frames"]) > 0, out
    for f in d["frames"]:
        n += 1
        p, where = f["presenter"], "%s %s %s %s" % (path, size, lang, f["stage"])
        if (p["width"], p["height"]) != (w, h): bad.append("%s: drawn %dx%d" % (where, p["width"], p["height"]))
        if p["min_text_px"] < 12: bad.append("%s: text at %d px" % (where, p["min_text_px"]))
        if p["outside"]: bad.append("%s: past the window: %s" % (where, p["outside"]))
        if p["cropped"]: bad.append("%s: cut: %s" % (where, p["cropped"]))
        parts = {k: p[k] for k in ("clock", "title", "now", "scrub")}
        parts["narration"], parts["notes"] = p["narration"]["box"], p["notes"]["box"]
        for k, r in parts.items():
            if not inside(r, w, h): bad.append("%s: %s %s not inside the window" % (where, k, r))
        ks = list(parts)
        for i in range(len(ks)):
            for j in range(i + 1, len(ks)):
                if meet(parts[ks[i]], parts[ks[j]]): bad.append("%s: %s and %s overlap" % (where, ks[i], ks[j]))
        for k in ("narration", "notes"):
            t = p[k]
            if t["px"] < 14: bad.append("%s: %s at %d px" % (where, k, t["px"]))
            if k == "notes" and t["text"]: notes_seen += 1
            if k == "notes" and not t["text"] and not every_note: continue # (this stage has none)
            if not t["text"].strip(): bad.append("%s: empty %s" % (where, k))
            elif t["lines_shown"] < 1: bad.append("%s: no line of the %s shown (box %s)" % (where, k, t["box"]))
            if not inside(t["text_area"], w, h) and t["lines_shown"] > 0: bad.append("%s: %s text area %s" % (where, k, t["text_area"]))
    if '"notes"' in open(path).read() and not notes_seen: bad.append("%s %s %s: no stage shows its notes" % (path, size, lang))
for b in bad[:40]: print(b)
if bad: sys.exit("%d problems in %d frames" % (len(bad), n))
print("presenter frames checked: %d" % n)
PY
cat "$tmp/bad"
# --presenter goes with the window and --describe only
"$bin" --export "$tmp/x" --presenter lessons/arange-2x4x4.json >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--presenter" "$tmp/err" || fail "--export --presenter: exit $rc, $(cat "$tmp/err")"
[ "$fails" -eq 0 ] && echo "presenter_describe_test: ok" || exit 1
