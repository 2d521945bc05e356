#!/bin/sh
# The narration speaks of what is on screen (issue 35): a stage whose panels show one
# head opens on the head its narration is about (the first head it names), in every
# shipped lesson and both languages; the K and V projections have narration of their own
# (not the query's). Chinese frames and questions have no English left.
. "$(dirname "$0")/test_lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

describe_lessons lessons/*.json

# the head a stage's narration is about is the one its panels show
python3 - "$tmp/list" <<'PY' || fail "narration about a head not on screen"
import json, re, sys
named = {"en": re.compile(r"\b[Hh]eads? (\d+)"), "zh": re.compile(r"(?<![0-9个])头 ?(\d+)(?! ?个)")}
bad = n = 0
for line in open(sys.argv[1]):
    path, lang, out = line.split()
    for f in json.load(open(out))["frames"]:
        titles = " ".join(str(p.get("title", "")) for p in f.get("panels", []))
        shown = {a or b for a, b in re.findall(r"\(h(\d+)\)|head (\d+)", titles)}
        heads = named[lang].findall(f["narration"])
        if not shown or not heads:
            continue  # every head on screen (Q, the split, concat), or none named
        n += 1
        if heads[0] not in shown:
            bad += 1
            print("%s %s %s: the narration is about head %s, the panels show head %s: %s"
                  % (path, lang, f["stage"], heads[0], "/".join(sorted(shown)), f["narration"][:90]))
if n < 20:
    print("only %d frames name a head: the check found nothing to check" % n)
    bad += 1
sys.exit(1 if bad else 0)
PY

# no English left in Chinese frames: --describe of every stage of every lesson (also
# inside a loop's step) and the study questions have no English phrase (two or more
# English words in a row) outside quotes, code (name(…)) and the lesson's own tokens
for lesson in lessons/*.json; do
    n=${lesson##*/}
    "$bin" --describe "$lesson" --lang zh --loop 1 >"$tmp/zh-loop-$n" 2>/dev/null || rm -f "$tmp/zh-loop-$n" # (no loop)
    "$bin" --quiz "$lesson" --lang zh >"$tmp/zh-quiz-$n" 2>"$tmp/err" || fail "$lesson --quiz --lang zh: $(cat "$tmp/err")"
done
python3 - "$tmp" <<'PY' || fail "English in Chinese frames"
import glob, json, os, re, sys
tmp = sys.argv[1]
def clean(s):
    s = re.sub(r"“[^”]*”|\"[^\"]*\"|'[^']*'", "", s)  # quoted tokens, words and code
    while True:  # code: name(…), innermost first
        t = re.sub(r"[\w.]+\([^()]*\)", "", s)
        if t == s:
            return s
        s = t
english = re.compile(r"\b[A-Za-z]{2,}(?:[ ,:]+[A-Za-z]{2,})+\b")
bad = 0
def scan(where, s):
    global bad
    for m in english.finditer(clean(s)):
        print("%s: English in Chinese: %r in %s" % (where, m.group(0), s[:120]))
        bad += 1
files = [l.split() for l in open(os.path.join(tmp, "list")) if l.split()[1] == "zh"]
files += [(p, "zh", p) for p in glob.glob(os.path.join(tmp, "zh-loop-*"))]
for path, _, out in files:
    for f in json.load(open(out))["frames"]:
        for k in ("formula", "note", "narration", "alt"):
            scan("%s %s %s" % (path, f["stage"], k), f.get(k) or "")
        for p in f.get("panels", []):
            scan("%s %s panel" % (path, f["stage"]), p.get("title") or "")
for out in glob.glob(os.path.join(tmp, "zh-quiz-*")):
    for q in json.load(open(out)):
        for k in ("question", "explanation"):
            scan("%s %s %s" % (out, q.get("id"), k), q.get(k) or "")
sys.exit(1 if bad else 0)
PY

# induction-heads and tiny-lm-fortunes open layer 1's attention on the induction /
# word-start head; --head still chooses
for c in "induction-heads l1.attn 1" "tiny-lm-fortunes l1.attn 1" "tiny-lm-fortunes l0.attn 2" "arange-2x4x4 head_out 1"; do
    set -- $c
    "$bin" --export "$tmp/ex-$1" --stage "$2" "lessons/$1.json" --size 800x600 >/dev/null 2>&1 || fail "$1 --export --stage $2"
    grep -q "\"head\": $3," "$tmp/ex-$1/frames.json" 2>/dev/null || fail "$1 $2 does not open on head $3: $(grep -o '"head": [0-9]*' "$tmp/ex-$1/frames.json")"
done
"$bin" --describe lessons/induction-heads.json --head 0 >"$tmp/h0.json" 2>&1 || fail "--describe --head 0"
python3 - "$tmp/h0.json" <<'PY' || fail "--head 0 does not keep head 0"
import json, sys
f = [f for f in json.load(open(sys.argv[1]))["frames"] if f["stage"] == "l1.attn"][0]
sys.exit(0 if all("(h0)" in p["title"] for p in f["panels"]) else 1)
PY

# the K and V projections speak of their own tensor, not the query's
for lang in en zh; do
    "$bin" --describe lessons/arange-2x4x4.json --lang $lang >"$tmp/a.json" 2>&1 || fail "arange --describe $lang"
    python3 - "$tmp/a.json" <<'PY' || fail "arange $lang: K/V narration"
import json, sys
fr = {f["stage"]: f["narration"] for f in json.load(open(sys.argv[1]))["frames"]}
ok = True
for s, sym in (("k_proj", "K"), ("v_proj", "V")):
    if fr[s] == fr["q_proj"] or "Q[" in fr[s] or (sym + "[0, ") not in fr[s]:
        print("%s repeats the query's narration or does not name %s: %s" % (s, sym, fr[s][:100]))
        ok = False
sys.exit(0 if ok else 1)
PY
done

# the model view labels its tokens and says what each head looks at; a checkpoint's
# narration comes from that checkpoint's numbers: the step, the loss, the head that changed
# most since the checkpoint before (the one the stage opens on) and what it looks at now
for lang in en zh; do
    "$bin" --describe --model-view lessons/induction-heads.json --lang $lang >"$tmp/mv.json" 2>&1 || fail "--model-view $lang"
    for k in 5 6 7; do
        "$bin" --describe --checkpoint $k lessons/induction-heads.json --lang $lang >"$tmp/ck$k.json" 2>&1 || fail "--checkpoint $k"
    done
    python3 - "$tmp" $lang <<'PY' || fail "model view / checkpoint narration ($lang)"
import json, os, re, sys
tmp, lang = sys.argv[1], sys.argv[2]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print(what)
        ok = False
mv = json.load(open(os.path.join(tmp, "mv.json")))["frames"][0]
check(mv.get("token_px", 0) >= 8 and mv.get("token_step") == 1, "model view tokens: %s %s" % (mv.get("token_px"), mv.get("token_step")))
heads = re.findall(r"Layer (\d) head (\d) looks most at" if lang == "en" else r"第 (\d) 层头 (\d) 最常看", mv["narration"])
check(len(heads) == 4, "the model view names %d of 4 heads: %s" % (len(heads), mv["narration"]))
check("key i − 5" in mv["narration"] or "键 i − 5" in mv["narration"], "the induction head's pattern: " + mv["narration"])
seen = set()
for k, step in ((5, 250), (6, 300), (7, 350)):
    fr = {f["stage"]: f for f in json.load(open(os.path.join(tmp, "ck%d.json" % k)))["frames"]}
    n = fr["l1.attn"]["narration"]
    want = ("Step %d of 6000 (checkpoint %d of 20), loss " % (step, k + 1)) if lang == "en" else \
           ("第 %d 步，共 6000 步（检查点 %d/20），损失 " % (step, k + 1))
    check(n.startswith(want), "checkpoint %d: %s" % (k, n[:120]))
    m = re.search(r"layer 1 head (\d) changed most" if lang == "en" else r"第 1 层头 (\d) 变化最大", n)
    check(m is not None, "checkpoint %d names no changed head: %s" % (k, n[:200]))
    if m:
        check(all("(h%s)" % m.group(1) in p["title"] for p in fr["l1.attn"]["panels"]),
              "checkpoint %d: the narration is about head %s, not on screen" % (k, m.group(1)))
    seen.add(n)
check(len(seen) == 3, "the checkpoints' narrations are the same")
fr = {f["stage"]: f for f in json.load(open(os.path.join(tmp, "ck6.json")))["frames"]}
check("key i − 5" in fr["l1.attn"]["narration"] or "键 i − 5" in fr["l1.attn"]["narration"],
      "step 300: the induction head's key i − 5: " + fr["l1.attn"]["narration"])
sys.exit(0 if ok else 1)
PY
done

# a step's "head": checked (one line naming it), kept by --save
python3 -c '
import json, sys
d = json.load(open("lessons/arange-2x4x4.json"))
d["steps"]["softmax"] = {"en": "x", "head": 2}
json.dump(d, open(sys.argv[1], "w"))' "$tmp/badhead.json"
"$bin" --check "$tmp/badhead.json" >"$tmp/out" 2>&1 && fail "a head past n_heads was accepted"
grep -q 'steps.softmax.head: expected the head the narration is about, a whole number from 0 to 1 (model.n_heads 2), got 2$' "$tmp/out" ||
    fail "bad head: $(cat "$tmp/out")"
"$bin" --save "$tmp/saved.json" lessons/induction-heads.json >/dev/null 2>&1 || fail "--save induction-heads"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["steps"]["l1.attn"].get("head") == 1 else 1)' "$tmp/saved.json" || fail "--save drops a step's head"

[ "$fails" = 0 ] || exit 1
echo "narration: ok"
