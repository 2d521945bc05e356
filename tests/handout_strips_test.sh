#!/bin/sh
# Issue 35, item 1: a printed handout's (and a worksheet's) derivation strips are the
# window's. The handout drew the result's part of a split frame, and the strip read that
# part's first panel as its input: softmax began from the weights as "scores", LayerNorm
# from z. For every shipped lesson, every stage, English and Chinese: the strip
# --describe reports for the window's frame (scene_strip) is on the stage's page line for
# line, label and values as written (pdftotext -layout); a strip the window has no room
# for (shown false) may be left out, but where the page has its title it is the same
# strip. Worksheets (the sample; every lesson under ATTNVIZ_FULL): a page whose result
# is hidden draws no strip; any it draws is the window's.
. "$(dirname "$0")/test_lib.sh"
command -v pdftotext >/dev/null || { echo "no pdftotext"; exit 77; }
cat >"$tmp/strips.py" <<'PY'
import json, subprocess, sys
bin_, lesson, lang, pdf, worksheet = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
desc = json.loads(subprocess.run([bin_, "--describe", "--lang", lang, lesson], capture_output=True, text=True,
                                 check=True).stdout)
flat = lambda s: "".join(s.split())
bad = 0
for k, f in enumerate(desc["frames"], 2):
    strip = f.get("strip")
    if not strip:
        continue
    t = subprocess.run(["pdftotext", "-layout", "-f", str(k), "-l", str(k), pdf, "-"], capture_output=True,
                       text=True, check=True).stdout
    rows = [flat(r) for r in t.splitlines()]
    if not any(flat(strip["title"]) in r for r in rows):
        if strip["shown"] and not worksheet:
            print("%s (%s) page %d, %s: the window's strip %r is not on the page" % (lesson, lang, k, f["stage"],
                                                                                 strip["title"]))
            bad += 1
        continue
    for line in strip["lines"]:
        if not any(flat("".join(line)) in r for r in rows):
            print("%s (%s%s) page %d, %s: the window's strip line %r is not on the page" %
                  (lesson, lang, ", worksheet" if worksheet else "", k, f["stage"], " ".join(line)))
            bad += 1
            break
sys.exit(1 if bad else 0)
PY
for l in lessons/*.json; do
    for lang in en zh; do
        env -u DISPLAY "$bin" --handout "$tmp/h.pdf" --lang "$lang" "$l" >/dev/null 2>"$tmp/err" ||
            { fail "$l ($lang): handout exited $?: $(cat "$tmp/err")"; continue; }
        python3 "$tmp/strips.py" "$bin" "$l" "$lang" "$tmp/h.pdf" 0 || fail "$l ($lang): handout strips"
    done
done
for l in $(shipped_lessons); do
    for lang in en zh; do
        env -u DISPLAY "$bin" --handout "$tmp/w.pdf" --worksheet --lang "$lang" "$l" >/dev/null 2>"$tmp/err" ||
            { fail "$l ($lang): worksheet exited $?: $(cat "$tmp/err")"; continue; }
        python3 "$tmp/strips.py" "$bin" "$l" "$lang" "$tmp/w.pdf" 1 || fail "$l ($lang): worksheet strips"
    done
done
[ "$fails" -eq 0 ] && echo "handout_strips: ok"
[ "$fails" -eq 0 ]
