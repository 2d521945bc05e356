#!/bin/sh
# --quiz prints the study mode's questions as JSON: for every lesson in both
# languages, valid UTF-8 JSON with the documented schema, answers that agree with
# --dump (a value is the dumped cell, a shape the dumped shape), the same output for
# the same --seed and another for another seed; --set edits apply. Bad input: one
# line on stderr, exit 1 (a bad lesson) or 2 (usage).
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# check LESSON LANG JSON DUMP: JSON (--quiz's output) is checked against DUMP (--dump's)
# by check_all, one python for every check (it names each failing LESSON LANG)
: >"$tmp/checks"
n_checks=0
check() {
    n_checks=$((n_checks + 1))
    cp "$3" "$tmp/q-$n_checks.json" && cp "$4" "$tmp/d-$n_checks.json" &&
        printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$tmp/q-$n_checks.json" "$tmp/d-$n_checks.json" >>"$tmp/checks"
}
check_all() {
    python3 - "$tmp/checks" <<'PY'
import json, sys
def check(lesson, lang, qpath, dpath, bad):
    raw = open(qpath, "rb").read()
    raw.decode("utf-8")
    qs = json.loads(raw)
    stages = {s["name"]: s for s in json.load(open(dpath))["stages"]}
    kinds = {"shape", "value", "argmax", "masked", "sum", "source"}
    # the lesson's own questions ("quiz"): asked as the file has them, after the generated ones
    try:
        own = json.load(open(lesson)).get("quiz", [])
    except FileNotFoundError: # an edited lesson ("name+edits"): the lesson's questions are not asked
        own = []
    authored = {(a.get("id") or f"authored-{n + 1}"): a for n, a in enumerate(own)}
    seen = set()
    if not isinstance(qs, list) or not 1 <= len(qs) <= 40 + len(authored):
        bad.append(f"{len(qs)} questions")
    ids = set()
    for q in qs:
        keys = {"id", "stage", "batch", "head", "kind", "cell", "question", "answer", "tolerance", "unordered", "explanation"}
        if set(q) != keys:
            bad.append(f"keys {sorted(q)}"); continue
        i, k = q["id"], q["kind"]
        seen.add(k)
        if i in ids: bad.append(f"{i} twice")
        ids.add(i)
        if k == "authored":
            a = authored.pop(i, None)
            def same(x, y):  # the answer as float32 (0.64 is written 0.639999986)
                if isinstance(x, list) or isinstance(y, list):
                    return isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and all(map(same, x, y))
                return abs(x - y) <= 1e-6 * max(1.0, abs(x))
            if not a or a["stage"] != q["stage"] or not same(a["answer"], q["answer"]): bad.append(f"{i}: not the lesson's question")
            continue
        if k not in kinds: bad.append(f"{i}: kind {k}")
        if q["stage"] not in stages: bad.append(f"{i}: stage {q['stage']}")
        if not q["question"].strip() or not q["explanation"].strip(): bad.append(f"{i}: empty text")
        if lang == "zh" and all(ord(c) < 128 for c in q["question"]): bad.append(f"{i}: not Chinese")
        if not isinstance(q["tolerance"], (int, float)) or q["tolerance"] < 0: bad.append(f"{i}: tolerance")
        for f in ("batch", "head"):
            if q[f] is not None and not (isinstance(q[f], int) and q[f] >= 0): bad.append(f"{i}: {f}")
        st = stages.get(q["stage"])
        if not st: continue
        shape, data, a, c = st["shape"], st["data"], q["answer"], q["cell"]
        if k == "shape":
            if a != shape or c != []: bad.append(f"{i}: shape {a} vs {shape}")
        elif k == "value":
            idx = [q["batch"]] + ([q["head"]] if len(shape) == 4 else []) + c
            flat = 0
            for n, x in zip(shape, idx):
                flat = flat * n + x
            if len(c) != 2 or data[flat] != a: bad.append(f"{i}: value {a} vs {data[flat]}")
            # at least 0.5 %, more where the operands as the cells show them give another answer
            if q["tolerance"] < max(0.005, 0.005 * abs(a)) * (1 - 1e-6): bad.append(f"{i}: tolerance {q['tolerance']}")
        elif k in ("argmax", "sum"):
            if len(c) != 1 or not isinstance(a, (int, float)): bad.append(f"{i}: cell {c} answer {a}")
            else:
                b, h, (L, K) = q["batch"], q["head"], shape[2:]
                row = data[((b * shape[1] + h) * L + c[0]) * K:][:K]
                if k == "argmax" and row.index(max(row)) != a: bad.append(f"{i}: argmax {a} of {row}")
                if k == "sum" and abs(sum(row) - a) > 1e-5: bad.append(f"{i}: sum {a} vs {sum(row)}")
        elif k == "source":
            # (a model of several layers: the layer of the concat asked about, "l1.concat" → "l1.head_out")
            dv = stages[q["stage"][: -len("concat")] + "head_out"]["shape"][3]
            if a != [c[1] // dv, c[1] % dv]: bad.append(f"{i}: source {a}")
        elif k == "masked":
            if not isinstance(a, list) or not a or not q["unordered"]: bad.append(f"{i}: masked {a}")
    # the model's mask, or a block's own (an encoder–decoder's decoder: "l2.mask")
    masks = [v for n, v in stages.items() if n == "mask" or n.endswith(".mask")]
    need = kinds if any(0 in m["data"] for m in masks) else kinds - {"masked"}
    if authored: bad.append(f"the lesson's questions {sorted(authored)} are not asked")
    if seen - {"authored"} != need: bad.append(f"kinds {sorted(seen)}, expected {sorted(need)}")

failed = 0
for line in open(sys.argv[1]):
  lesson, lang, qpath, dpath = line.rstrip("\n").split("\t")
  bad = []
  try:
    check(lesson, lang, qpath, dpath, bad)
  except Exception as e:
    bad.append(f"{type(e).__name__}: {e}")
  for b in bad:
    print(f"{lesson} {lang}: {b}")
  failed += bool(bad)
sys.exit(1 if failed else 0)
PY
}

for lesson in lessons/*.json tests/scene/*.json tests/big/long-256.json; do
    "$bin" --dump "$lesson" >"$tmp/dump.json" 2>"$tmp/err" || { fail "$lesson: --dump exit $?"; continue; }
    for lang in en zh; do
        "$bin" --quiz "$lesson" --lang "$lang" --seed 5 >"$tmp/q.json" 2>"$tmp/err" || { fail "$lesson $lang: exit $? $(cat "$tmp/err")"; continue; }
        [ -s "$tmp/err" ] && fail "$lesson $lang: stderr $(cat "$tmp/err")"
        check "$lesson" "$lang" "$tmp/q.json" "$tmp/dump.json"
    done
done

# the same seed, the same questions; another seed, others; the default seed is 1
l=lessons/sentence-the-cat.json
"$bin" --quiz $l --seed 5 >"$tmp/a.json" && "$bin" --quiz $l --seed 5 >"$tmp/b.json" && cmp -s "$tmp/a.json" "$tmp/b.json" || fail "--seed 5 twice differs"
"$bin" --quiz $l --seed 6 >"$tmp/b.json" && ! cmp -s "$tmp/a.json" "$tmp/b.json" || fail "--seed 5 and 6 give the same questions"
"$bin" --quiz $l >"$tmp/a.json" && "$bin" --quiz $l --seed 1 >"$tmp/b.json" && cmp -s "$tmp/a.json" "$tmp/b.json" || fail "the default seed is not 1"

# --set edits apply: a mask added to a lesson without one gives masked questions
"$bin" --dump lessons/arange-2x4x4.json --set mask=causal >"$tmp/dump.json" &&
"$bin" --quiz lessons/arange-2x4x4.json --set mask=causal >"$tmp/q.json" &&
check "arange+causal" en "$tmp/q.json" "$tmp/dump.json" # (--quiz with --set mask=causal)

# bad input: one line, exit 1 (lesson) or 2 (usage)
expect() { # CODE ARGS...
    code=$1; shift
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: stderr is not one line: $(cat "$tmp/err")"
    [ -s "$tmp/out" ] && fail "$*: wrote to stdout"
}
printf '{"model": ' >"$tmp/broken.json"
expect 1 --quiz "$tmp/broken.json"
expect 1 --quiz "$tmp/missing.json"
expect 1 --quiz lessons/arange-2x4x4.json --set 'input.query[9,9,9]=1'
expect 2 --quiz
expect 2 --quiz lessons/arange-2x4x4.json --seed
expect 2 --quiz lessons/arange-2x4x4.json --seed -3
expect 2 --quiz lessons/arange-2x4x4.json --seed 12x
expect 2 --quiz lessons/arange-2x4x4.json --seed 99999999999999999999999
expect 2 --quiz lessons/arange-2x4x4.json --lang fr
expect 2 --quiz lessons/arange-2x4x4.json --dump lessons/arange-2x4x4.json
expect 2 --quiz lessons/arange-2x4x4.json --head 1
expect 2 --seed 3 --dump lessons/arange-2x4x4.json
if [ -w /dev/full ]; then
    "$bin" --quiz lessons/arange-2x4x4.json >/dev/full 2>"$tmp/err"; rc=$?
    [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "--quiz to /dev/full: exit $rc, $(cat "$tmp/err")"
fi

check_all >"$tmp/bad" 2>&1 || fail "the quiz checks: $(cat "$tmp/bad")"
[ "$n_checks" -ge 30 ] || fail "only $n_checks quizzes checked"

[ "$fails" -eq 0 ] && echo "quiz_test: ok"
[ "$fails" -eq 0 ]
