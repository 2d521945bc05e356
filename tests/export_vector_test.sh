#!/bin/sh
# --format svg|pdf (issue 14): every shipped lesson exports headless as SVG and
# as PDF; each SVG parses and its text holds the numbers --dump gives for the
# frame's result (batch 0, head 0); the PDF has a page a frame and pdftotext
# reads the same numbers there; frames.json lists exactly what was written;
# an interrupted or failed PDF export leaves no partial file; bad --format is a
# usage error. Rendered back (rsvg-convert, pdftoppm) a frame is the PNG's.
. "$(dirname "$0")/test_lib.sh"

# The result's numbers of each frame, as the cells show them at 1280x720 (the decimals
# frames.json gives the result panel: 2, or 1 for scores past 100),
# found in the texts of the SVG and in pdftotext's page.
cat >"$tmp/check.py" <<'PY'
import json, subprocess, sys, xml.etree.ElementTree as ET
kind, out, dump, stages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
d = {s["name"]: s for s in json.load(open(dump))["stages"]}
idx = json.load(open(out + "/frames.json"))
assert idx["format"] == kind and idx["complete"], "frames.json: format/complete"
frames = idx["frames"]
n_stages = len(json.load(open(dump))["stages"])
assert len(frames) == n_stages, "frames.json lists %d frames, expected %d" % (len(frames), n_stages)
def cell(v, dec=2):
    s = "%.*f" % (dec, v)
    return s[1:] if s.startswith("-") and not s.strip("-0.") else s
def slice0(st, h):
    shape, data = st["shape"], st["data"]
    n = 1
    for k in shape[-2:]: n *= k
    h = h if len(shape) == 4 else 0
    return data[h * n:(h + 1) * n]  # batch 0 (and the frame's head for (B, H, L, d))
checked = 0
for page, f in enumerate(frames, 1):
    st = f["stage"]
    if kind == "svg":
        root = ET.parse(out + "/" + f["file"]).getroot()   # parses, or raises
        texts = set("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
        words = texts
    else:
        assert f["file"] == "frames.pdf" and f["page"] == page, "frame %d: file/page" % page
        txt = subprocess.run(["pdftotext", "-layout", "-f", str(page), "-l", str(page), out + "/frames.pdf", "-"],
                             capture_output=True, text=True, check=True).stdout
        words = set(txt.split())
    if st not in stages: continue
    dec = next((p["decimals"] for p in f["panels"] if p["result"]), 2)
    want = set(cell(v, max(dec, 0)) for v in slice0(d[st], f["head"]))
    missing = sorted(want - words)
    assert not missing, "%s frame %d (%s): numbers not in its text: %s" % (kind, page, st, missing[:5])
    checked += 1
assert checked == len(stages), "checked %d stages of %s" % (checked, stages)
PY

lesson=lessons/arange-2x4x4.json
"$bin" --dump "$lesson" >"$tmp/dump.json"
stages=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["stages"]))' "$tmp/dump.json")
for fmt in svg pdf; do
    env -u DISPLAY "$bin" --export "$tmp/$fmt" --format $fmt "$lesson" >"$tmp/out" 2>"$tmp/err" || fail "$fmt export exited $?: $(cat "$tmp/err")"
    python3 "$tmp/check.py" $fmt "$tmp/$fmt" "$tmp/dump.json" q_proj,scores,attn,head_out,output 2>"$tmp/perr" ||
        fail "$fmt: $(tail -1 "$tmp/perr")"
    ls "$tmp/$fmt" | grep -q 'tmp-' && fail "$fmt: temporary files left"
done
n=$(ls "$tmp/svg"/*.svg | wc -l)
[ "$n" -eq "$stages" ] || fail "expected $stages SVGs, got $n"
[ -f "$tmp/svg/0007-scores.svg" ] || fail "no 0007-scores.svg (NNNN-STAGE.svg naming)"
pages=$(pdfinfo "$tmp/pdf/frames.pdf" | sed -n 's/^Pages: *//p')
[ "$pages" = "$stages" ] || fail "frames.pdf has $pages pages, expected $stages"
pdfinfo "$tmp/pdf/frames.pdf" | grep -q 'Page size: *1280 x 720 pts' || fail "PDF page is not the frame's size"
# fonts embedded (every one), text not outlines
pdffonts "$tmp/pdf/frames.pdf" | awk 'NR > 2 && $(NF-4) != "yes" { bad = 1 } END { exit bad }' || fail "a PDF font is not embedded"
pdffonts "$tmp/pdf/frames.pdf" | grep -q DejaVuSans || fail "DejaVu Sans not in the PDF"

# the same frame, three ways: the SVG and the PDF rendered back look like the PNG
env -u DISPLAY "$bin" --export "$tmp/png" --stage scores "$lesson" >/dev/null 2>&1
rsvg-convert "$tmp/svg/0007-scores.svg" >"$tmp/s.png" && pdftoppm -r 72 -f 8 -l 8 -png "$tmp/pdf/frames.pdf" "$tmp/p"
convert "$tmp/png/0000-scores.png" -scale 12.5% "$tmp/ref8.png"
for r in "$tmp/s.png" "$tmp"/p-*8.png; do
    # Text edges differ (another rasteriser: librsvg, poppler), cells, fills and
    # layout do not: at 1/8 scale fewer than 250 of 14,400 pixels differ by 10 %
    # (measured: SVG ~150, PDF ~20; the PNG moved by 2 px: 342; the next stage: 3199).
    convert "$r" -scale 12.5% "$tmp/r8.png"
    ae=$(compare -metric AE -fuzz 10% "$tmp/r8.png" "$tmp/ref8.png" null: 2>&1)
    [ "${ae%% *}" -lt 250 ] 2>/dev/null || fail "$(basename "$r") does not look like the PNG ($ae of 14400 pixels at 1/8 differ)"
done

# every shipped lesson (make test: a sample, shipped_lessons), both formats, Chinese
# for every other one (the sentence always); large heatmaps as images
i=0
for l in $(shipped_lessons) tests/big/long-256.json; do
    i=$((i + 1)); lang=en; [ $((i % 2)) -eq 0 ] || [ "$l" = lessons/sentence-the-cat.json ] && lang=zh
    base=$(basename "$l" .json)
    for fmt in svg pdf; do
        stage=; [ "$base" = long-256 ] && stage="--stage attn"
        env -u DISPLAY "$bin" --export "$tmp/l-$base-$fmt" --format $fmt --lang $lang $stage "$l" >/dev/null 2>"$tmp/err" ||
            fail "$l $fmt ($lang): exit $?: $(cat "$tmp/err")"
    done
    for s in "$tmp/l-$base-svg"/*.svg; do
        python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$s" 2>/dev/null || { fail "$s does not parse"; break; }
    done
    want=$(grep -c '"file"' "$tmp/l-$base-pdf/frames.json")
    got=$(pdfinfo "$tmp/l-$base-pdf/frames.pdf" 2>/dev/null | sed -n 's/^Pages: *//p')
    [ "$got" = "$want" ] || fail "$l: PDF has $got pages, frames.json lists $want"
done
grep -q '<image ' "$tmp/l-long-256-svg"/*.svg || fail "L = 256: the heatmaps are not embedded as images in the SVG"
[ "$(pdfimages -list "$tmp/l-long-256-pdf/frames.pdf" | tail -n +3 | wc -l)" -ge 2 ] || fail "L = 256: no images in the PDF"
[ "$(grep -c '<rect ' "$tmp/l-long-256-svg"/*.svg)" -lt 2000 ] || fail "L = 256: cells drawn as rectangles, not images"
pdftotext "$tmp/l-sentence-the-cat-pdf/frames.pdf" - | grep -q '注意力' || fail "Chinese text not extractable from the PDF"

# interrupted: no partial PDF, frames.json says incomplete and lists nothing
interrupt_export "$tmp/int" 0.3 --format pdf --animate --fps 60 "$lesson"
[ "$rc" -eq 130 ] || fail "interrupted PDF export exited $rc, expected 130"
[ -e "$tmp/int/frames.pdf" ] && fail "an interrupted PDF export left frames.pdf"
ls -a "$tmp/int" | grep -q 'tmp-' && fail "an interrupted PDF export left a temporary file"
grep -q '"complete": false' "$tmp/int/frames.json" 2>/dev/null || fail "interrupted: frames.json not marked incomplete"
grep -q '"file"' "$tmp/int/frames.json" && fail "interrupted: frames.json lists frames of a PDF that is not there"

# a write that fails (file-size limit): one line naming the file, exit 1, nothing left
(ulimit -f 40; env -u DISPLAY "$bin" --export "$tmp/lim" --format pdf --animate "$lesson" >/dev/null 2>"$tmp/err"); rc=$?
[ "$rc" -eq 1 ] || fail "PDF over a file-size limit exited $rc, expected 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'frames.pdf: cannot write' "$tmp/err" || fail "file-size limit message: $(cat "$tmp/err")"
[ -e "$tmp/lim/frames.pdf" ] && fail "a failed PDF export left frames.pdf"
ls -a "$tmp/lim" | grep -q 'tmp-' && fail "a failed PDF export left a temporary file"

# usage errors
env -u DISPLAY "$bin" --export "$tmp/bad" --format tiff "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'expected png, svg, pdf, gif or mp4' "$tmp/err" || fail "--format tiff: exit $rc, $(cat "$tmp/err")"
[ -e "$tmp/bad" ] && fail "--format tiff created the directory"
"$bin" --format svg "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q 'go with --export' "$tmp/err" || fail "--format without --export: exit $rc"

[ "$fails" -eq 0 ] && echo "export vector: ok"
[ "$fails" -eq 0 ]
