#!/bin/sh
# The study mode in the real window under Xvfb, keyboard only, as a student would:
#  - --study opens it; every question of the classic lesson is answered with the keys
#    (the answers typed from `attnviz --quiz`, → to the next stage with questions, no
#    pause after it); digits and Q typed into an answer do nothing else (no jump along
#    the timeline, no quitting);
#  - progress.json (in $XDG_DATA_HOME/attnviz) then holds every answer, all right;
#  - reopened, the answers are restored (N, "show the answer", finds nothing to give
#    up: the file keeps every answer right), and the lesson picker opens;
#  - a corrupt progress.json is reported on stderr and set aside, its bytes kept.
# Every wait is bounded and polls; skips (exit 77) only when Xvfb is missing.
. "$(dirname "$0")/window_lib.sh"
window_test_begin window_study_test xdotool import python3
L=lessons/arange-2x4x4.json
"$B/attnviz" --quiz "$L" >"$TMP/quiz.json" || { echo "window_study_test: FAIL: --quiz"; exit 1; }
# one line per question: its stage's index in the trace, then the answer as typed
python3 - "$TMP/quiz.json" "$B" "$L" >"$TMP/answers.txt" <<'PY' || { echo "window_study_test: FAIL: answers"; exit 1; }
import json, subprocess, sys
qs = json.load(open(sys.argv[1]))
stages = [s["name"] for s in json.loads(subprocess.check_output([sys.argv[2] + "/attnviz", "--dump", sys.argv[3]]))["stages"]]
for q in qs:
    a = q["answer"]
    if q["kind"] == "shape":
        t = "x".join(str(int(x)) for x in a)
    elif isinstance(a, list):
        t = " ".join(str(int(x)) for x in a)
    elif float(a).is_integer():
        t = str(int(a))
    else:
        t = "%.4f" % a
    print(stages.index(q["stage"]), t)
PY
cat >"$TMP/inner.sh" <<'INNER'
#!/bin/sh
B=$1; TMP=$2; NAME=window_study_test
. "$3"
export XDG_DATA_HOME="$TMP/data"
P="$XDG_DATA_HOME/attnviz/progress.json"
L=lessons/arange-2x4x4.json
window_start "$TMP/out.txt" "$TMP/err.txt" --size 1280x720 --study "$L"
k() { xdotool key --window "$WID" "$@"; }
# press KEYS: typed, then 10 frames drawn (the study mode keeps drawing: no settling)
press() { mark; xdotool key --window "$WID" "$@"; drawn 10; }
stage=0
first=1
while read -r s answer; do
    # no pause after →: the answer's first key may come in the same frame
    while [ "$stage" -lt "$s" ]; do k Right; stage=$((stage + 1)); done
    # a Q typed into an answer does not quit (E and X are part of answers)
    [ "$first" = 1 ] && xdotool type --window "$WID" -- "qQ" && first=0
    xdotool type --window "$WID" -- "$answer"
    press Return
done <"$TMP/answers.txt"
[ -f "$P" ] || fail "no $P after answering"
python3 - "$P" "$TMP/answers.txt" <<'PY' || fail "progress.json does not hold every answer right: $(cat "$P")"
import json, sys
p = json.load(open(sys.argv[1]))
n = sum(1 for _ in open(sys.argv[2]))
(l,) = p["lessons"].values()
assert l["total"] == n and l["answered"] == n and l["right"] == n, l
assert all(a["right"] for a in l["answers"].values()) and len(l["answers"]) == n
PY
window_quit "after answering"
cp "$P" "$TMP/kept.json"
# reopened: restored, nothing left to give up; the picker lists the lesson's score
window_start "$TMP/out2.txt" "$TMP/err2.txt" --size 1280x720 --study "$L"
press n
press o
press Escape
window_quit "reopened"
python3 - "$P" "$TMP/answers.txt" <<'PY' || fail "reopening lost answers: $(cat "$P")"
import json, sys
p = json.load(open(sys.argv[1]))
n = sum(1 for _ in open(sys.argv[2]))
(l,) = p["lessons"].values()
assert l["answered"] == n and l["right"] == n, l
PY
# a corrupt file: reported, set aside, its bytes kept
printf '{"attnviz_progress": 1, "lessons": [' >"$P"
window_start "$TMP/out3.txt" "$TMP/err3.txt" --size 1280x720 --study "$L"
window_quit "corrupt progress"
grep -q "progress.json: not valid JSON; set aside as" "$TMP/err3.txt" || fail "no report of the corrupt file: $(cat "$TMP/err3.txt")"
aside=$(ls "$XDG_DATA_HOME"/attnviz/progress.json.corrupt-* 2>/dev/null | head -n 1)
[ -n "$aside" ] || fail "the corrupt file was not set aside"
[ "$(cat "$aside")" = '{"attnviz_progress": 1, "lessons": [' ] || fail "the corrupt file's bytes were not kept"
echo "window_study_test: ok"
INNER
window_test_run 240
