#!/bin/sh
# --handout FILE.pdf LESSON (issue 14): a title page and one page a stage, A4 or
# US letter; each stage page's text (pdftotext) holds the stage's title, its
# formula and the numbers --dump gives for its result (batch 0, the head it opens on); Chinese
# with --lang zh; fonts embedded; every shipped lesson; bad options are one line
# and exit 2, a write that fails exits 1 and leaves no file. Issue 23: no window chrome,
# the frames fill the page; --worksheet: questions, empty result cells, answers at the end.
. "$(dirname "$0")/test_lib.sh"
lesson=lessons/arange-2x4x4.json
"$bin" --dump "$lesson" >"$tmp/dump.json"
"$bin" --describe "$lesson" >"$tmp/desc.json"
env -u DISPLAY "$bin" --handout "$tmp/a4.pdf" "$lesson" >"$tmp/out" 2>"$tmp/err" || fail "handout exited $?: $(cat "$tmp/err")"
grep -q "^handout: 14 pages to $tmp/a4.pdf" "$tmp/out" || fail "no summary line: $(cat "$tmp/out")"
pdfinfo "$tmp/a4.pdf" | grep -q 'Pages: *14' || fail "A4 handout: not 14 pages (title + 13 stages)"
pdfinfo "$tmp/a4.pdf" | grep -q 'Page size: *595.* x 841.* (A4)' || fail "not A4: $(pdfinfo "$tmp/a4.pdf" | grep 'Page size')"
pdffonts "$tmp/a4.pdf" | awk 'NR > 2 && $(NF-4) != "yes" { bad = 1 } END { exit bad }' || fail "a font is not embedded"
python3 - "$tmp/a4.pdf" "$tmp/dump.json" "$tmp/desc.json" <<'PY' || fail "handout text does not match the lesson"
import json, re, subprocess, sys
pdf, dump, desc = sys.argv[1:4]
stages = {s["name"]: s for s in json.load(open(dump))["stages"]}
frames = json.load(open(desc))["frames"]
def page(k):
    return subprocess.run(["pdftotext", "-f", str(k), "-l", str(k), pdf, "-"], capture_output=True, text=True, check=True).stdout
first = page(1)
assert "Contents" in first and "arange" in first, "title page"
for k, f in enumerate(frames, 2):
    t = page(k)
    words = set(t.split())
    assert "Step %d of %d" % (k - 1, len(frames)) in t, "page %d: step line" % k
    assert f["formula"].split()[0] in t, "page %d: formula %r" % (k, f["formula"])
    assert f["narration"].split()[0] in t, "page %d: narration" % k
    assert "Shapes" in t and "Formula" in t, "page %d: sections" % k
    if f["stage"] in ("scores", "attn", "head_out", "q_proj"):
        st = stages[f["stage"]]
        n = st["shape"][-1] * st["shape"][-2]
        # with the decimals its cells have in the frame (--describe: 1 for scores past 100)
        dec = next(p["decimals"] for p in f["panels"] if p["result"])
        fmt = "%%.%df" % max(dec, 0)
        zero = fmt % 0.0
        # the head the stage is shown on (--describe's result title "(h1)": its narration's)
        m = re.search(r"\(h(\d+)\)", next(p["title"] for p in f["panels"] if p["result"]))
        h = int(m.group(1)) if m and len(st["shape"]) == 4 else 0
        want = set(zero if fmt % v == "-" + zero else fmt % v for v in st["data"][h * n:(h + 1) * n])
        missing = want - words
        assert not missing, "page %d (%s): numbers missing %s" % (k, f["stage"], sorted(missing)[:4])
PY
# the pages read like a printed worksheet (issue 23: about 60 % blank, "paused ×1" and
# "? help" printed): no window chrome in any stage page's text, and the frames fill the
# page: on average at most 30 % of a stage page's pixel rows are blank (white), none over 45 %
for k in $(seq 2 14); do
    pdftotext -f "$k" -l "$k" "$tmp/a4.pdf" - | grep -q -e 'paused' -e '? help' -e 'Batch *0 *1' && fail "page $k prints the window's chrome"
done
if command -v pdftoppm >/dev/null && command -v convert >/dev/null; then
    pdftoppm -r 30 -gray -f 2 -l 14 "$tmp/a4.pdf" "$tmp/pg"
    for p in "$tmp"/pg-*.pgm; do
        convert "$p" -scale '1x!' -format '%c' histogram:info:- | awk '{ n += $1; if ($0 ~ /gray\(255\)/) w += $1 } END { print w / n }'
    done >"$tmp/blank"
    awk '{ s += $1; if ($1 > m) m = $1 } END { exit !(s / NR <= 0.30 && m <= 0.45) }' "$tmp/blank" ||
        fail "handout pages too blank: $(tr '\n' ' ' <"$tmp/blank")"
fi
# --worksheet: each stage's study questions under its frames, its result's cells empty
# (none of its numbers on the page), the answers (as --quiz gives them) on the last page
env -u DISPLAY "$bin" --handout "$tmp/ws.pdf" --worksheet "$lesson" >/dev/null 2>"$tmp/err" || fail "--worksheet exited $?: $(cat "$tmp/err")"
"$bin" --quiz --seed 1 "$lesson" >"$tmp/quiz.json"
python3 - "$tmp/ws.pdf" "$tmp/dump.json" "$tmp/quiz.json" "$tmp/a4.pdf" "$tmp/desc.json" <<'PY' || fail "the worksheet does not hold the questions, blanks and answers"
import collections, json, re, subprocess, sys
pdf, dump, quiz, full, desc = sys.argv[1:6]
stages = json.load(open(dump))["stages"]
frames = json.load(open(desc))["frames"]
qs = json.load(open(quiz))
def text(a, b=None, f=None):
    return subprocess.run(["pdftotext", "-f", str(a), "-l", str(b or a), f or pdf, "-"], capture_output=True,
                          text=True, check=True).stdout
n_pages = int(re.search(r"Pages:\s*(\d+)", subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout).group(1))
assert n_pages >= len(stages) + 2, n_pages
flat = lambda t: " ".join(t.split())
for k, st in enumerate(stages, 2):
    t = flat(text(k))
    asked = [q for q in qs if q["stage"] == st["name"]]
    for q in asked: # (--quiz asks about any slice; the worksheet about its own: batch 0, head 0)
        if q["kind"] in ("shape", "value") and q["batch"] in (None, 0) and q["head"] in (None, 0):
            assert flat(q["question"])[:40] in t, "page %d: question %r" % (k, q["question"])
    if asked and st["name"] in ("q_proj", "scores"):
        # none of the result's numbers: a value the page shows only as often as the handout's
        # page (the same frames with the result) shows it outside the result's cells, in an
        # operand (the seeded weights print W_Q[0,0] -0.06 and b_Q[0] -0.40, as Q[0,3], Q[1,0])
        n = st["shape"][-1] * st["shape"][-2]
        dec = next(p["decimals"] for p in frames[k - 2]["panels"] if p["result"])
        fmt = "%%.%df" % max(dec, 0)
        result = collections.Counter(fmt % v for v in st["data"][:n])
        here, whole = collections.Counter(t.split()), collections.Counter(text(k, f=full).split())
        shown = sorted(v for v in result if here[v] > max(0, whole[v] - result[v]))
        assert not shown, "page %d (%s): the hidden result's numbers %s" % (k, st["name"], shown[:4])
answers = flat(text(len(stages) + 2, n_pages))
assert "Answers" in answers
for i, q in enumerate(qs, 1):
    assert "%d. " % i in answers, "answer %d missing" % i
PY
# issue 35, item 2: a worksheet asks only about the slice it prints (it printed batch 0,
# head 0 and asked about batch 1 or head 1 in 10 of 19 questions), and its answer key writes
# each answer as its question asks ("to 2 decimals": 0.00, not 7.154e-21; -19.70, not -19.7).
# Every sampled lesson, both languages, the first and the last slice: every batch and head a
# question names (its words, or its index [b,h,r,c] / [b,r,c]) is the page's; every answer to
# a "2 decimals" question has exactly 2 decimals, the others are whole numbers.
cat >"$tmp/slice.py" <<'PY'
import json, re, subprocess, sys
pdf, dump, b, h, lang = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
d = json.load(open(dump))
stages, H = d["stages"], max((s["shape"][1] for s in d["stages"] if len(s["shape"]) == 4 and s["name"].endswith("attn")), default=1)
text = lambda k: subprocess.run(["pdftotext", "-f", str(k), "-l", str(k), pdf, "-"], capture_output=True, text=True,
                                check=True).stdout
n_pages = int(re.search(r"Pages:\s*(\d+)", subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout).group(1))
head_q = "问题" if lang == "zh" else "Questions"
two = "保留 2 位小数" if lang == "zh" else "to 2 decimals"
B = r"批次 (\d+)" if lang == "zh" else r"\b[Bb]atch (\d+)"
Hd = r"第 (\d+) 个头|头 (\d+)" if lang == "zh" else r"\b[Hh]ead (\d+)"
bad, asked = [], []
for k, st in enumerate(stages, 2):
    t = " ".join(text(k).split())
    if head_q not in t:
        continue
    body = t[t.index(head_q):].rsplit(" — ", 1)[0]
    # the questions are numbered in turn: a "4. " inside a question ("Q·Kᵀ / 4. What is …") is
    # not the next one's number
    cuts, want = [], None
    for m in re.finditer(r"(?:^| )(\d+)\. ", body):
        if want is None or int(m.group(1)) == want:
            cuts.append(m)
            want = int(m.group(1)) + 1
    qs = []
    for i, m in enumerate(cuts):
        qs += [m.group(1), body[m.end():cuts[i + 1].start() if i + 1 < len(cuts) else len(body)]]
    for no, q in zip(qs[0::2], qs[1::2]):
        asked.append((int(no), two.replace(" ", "") in q.replace(" ", ""))) # (a line break may fall inside it)
        hs = [int(x or y) for x, y in re.findall(Hd, q)] if lang == "zh" else [int(x) for x in re.findall(Hd, q)]
        bs = [int(x) for x in re.findall(B, q)]
        kv = h * st["shape"][1] // H if len(st["shape"]) == 4 and st["shape"][1] < H else h
        for idx in re.findall(r"\[(\d+(?:,\d+)+)\]", q):
            ix = [int(x) for x in idx.split(",")]
            bs.append(ix[0])
            if len(ix) == 4 and len(st["shape"]) == 4:
                hs.append(h if ix[1] == kv else -1)
        if any(x != b for x in bs) or any(x != h for x in hs):
            bad.append("page %d, question %s (%s) asks about batch %s / head %s; the page prints batch %d, head %d"
                       % (k, no, q[:90], bs, hs, b, h))
ans = " ".join(" ".join(text(k).split()).rsplit(" — ", 1)[0] for k in range(len(stages) + 2, n_pages + 1))
for no, decimals in asked:
    m = re.search(r"(?:^| )%d\. .*?[:：] ?((?:\(?-?[\d.]+(?:e[-+]\d+)?\)?(?:, | × )?)+)(?= |$)" % no, ans)
    if not m:
        bad.append("answer %d not found" % no)
        continue
    for a in re.findall(r"-?[\d.]+(?:e[-+]\d+)?", m.group(1)):
        ok = re.fullmatch(r"-?\d+\.\d\d", a) if decimals else re.fullmatch(r"-?\d+", a)
        if not ok:
            bad.append("answer %d: %r, its question asks for %s" % (no, a, "2 decimals" if decimals else "a whole number"))
print("\n".join(bad))
sys.exit(1 if bad or not asked else 0)
PY
for l in $(shipped_lessons); do
    "$bin" --dump "$l" >"$tmp/d.json" 2>/dev/null || { fail "$l: --dump"; continue; }
    last=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=[x['shape'] for x in d['stages'] if x['name'].endswith('attn') and len(x['shape'])==4][0]; print(s[0]-1, s[1]-1)" "$tmp/d.json")
    for sl in "0 0" "$last"; do
        set -- $sl
        for lang in en zh; do
            env -u DISPLAY "$bin" --handout "$tmp/s.pdf" --worksheet --lang "$lang" --batch "$1" --head "$2" "$l" >/dev/null 2>"$tmp/err" ||
                { fail "$l: worksheet --batch $1 --head $2 exited: $(cat "$tmp/err")"; continue; }
            python3 "$tmp/slice.py" "$tmp/s.pdf" "$tmp/d.json" "$1" "$2" "$lang" >"$tmp/out" ||
                fail "$l ($lang, batch $1, head $2): the worksheet's questions and answers: $(head -c 600 "$tmp/out")"
        done
    done
done
one_line "--worksheet without --handout" 2 "--worksheet goes with --handout" env -u DISPLAY "$bin" --export "$tmp/x" --worksheet "$lesson"
env -u DISPLAY "$bin" --handout "$tmp/letter.pdf" --paper letter --lang zh "$lesson" >/dev/null 2>"$tmp/err" || fail "letter/zh exited $?"
pdfinfo "$tmp/letter.pdf" | grep -q 'Page size: *612 x 792 pts (letter)' || fail "not letter"
pdftotext -f 1 -l 1 "$tmp/letter.pdf" - | grep -q '目录' || fail "zh handout: no Chinese contents"
# every shipped lesson (make test: a sample, shipped_lessons) and the L = 256 one
# (heatmaps as images)
for l in $(shipped_lessons) tests/big/long-256.json; do
    env -u DISPLAY "$bin" --handout "$tmp/h.pdf" "$l" >/dev/null 2>"$tmp/err" || fail "$l: exit $?: $(cat "$tmp/err")"
    n=$("$bin" --dump "$l" 2>/dev/null | grep -c '"name"')
    [ "$n" -gt 0 ] && { pdfinfo "$tmp/h.pdf" | grep -q "Pages: *$((n + 1))\$" || fail "$l: not $((n + 1)) pages"; }
done
# errors: one line
check() { # exit pattern args...
    want=$1 pat=$2; shift 2
    env -u DISPLAY "$bin" "$@" >/dev/null 2>"$tmp/err"; rc=$?
    [ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pat" "$tmp/err" || fail "$*: exit $rc: $(cat "$tmp/err")"
}
check 2 "expected a4 or letter" --handout "$tmp/x.pdf" --paper a5 "$lesson"
check 2 "needs FILE.pdf and LESSON" --handout "$tmp/x.pdf"
check 2 "goes with --handout" --paper a4 "$lesson"
check 2 "heads 0..1" --handout "$tmp/x.pdf" --head 7 "$lesson"
check 1 "no/such/x.pdf: cannot write" --handout "$tmp/no/such/x.pdf" "$lesson"
(ulimit -f 8; check 1 "x.pdf: cannot write" --handout "$tmp/x.pdf" "$lesson")
ls -a "$tmp" | grep -q 'x.pdf' && fail "a failed handout left a file: $(ls -a "$tmp" | grep x.pdf)"

[ "$fails" -eq 0 ] && echo "handout: ok"
[ "$fails" -eq 0 ]
