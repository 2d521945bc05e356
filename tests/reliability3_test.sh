#!/bin/sh
# Issue 27 ("Reliability, round three"), the command line's part; each check is
# named after the issue's item (the rest is in test_edit, test_study, test_args,
# test_lab and install_test.sh):
#  item1  --save, --handout and --icon to a FIFO, a dangling link: refused with one
#         line, the path as it was; to a link: written through (the link stays)
#  item5  --save with another command: both done; with an option that does not go
#         with it: a usage error that writes nothing
#  item8  --save over the LESSON: refused, the file and its mode as they were
#  item9  a SIGKILLed --handout's temporary file is removed by the next one (one of a
#         running process is not); --handout and --export to a full stdout: exit 1
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
lesson=lessons/arange-2x4x4.json

# --- item 1: output paths that are not files ---------------------------------------
mkfifo "$tmp/fifo"
ln -s "$tmp/nowhere" "$tmp/dangling"
for out in fifo dangling; do
    one_line "item1 --save $out" 1 "cannot write" "$bin" --save "$tmp/$out" "$lesson"
    one_line "item1 --handout $out" 1 "cannot write" "$bin" --handout "$tmp/$out" "$lesson"
    one_line "item1 --icon $out" 1 "cannot write" "$bin" --icon "$tmp/$out"
done
[ -p "$tmp/fifo" ] || fail "item1: the FIFO was replaced"
[ -L "$tmp/dangling" ] && [ ! -e "$tmp/nowhere" ] || fail "item1: the dangling link was replaced or followed"
echo keep >"$tmp/real.pdf"; chmod 640 "$tmp/real.pdf"; ln -s real.pdf "$tmp/link.pdf"
"$bin" --handout "$tmp/link.pdf" "$lesson" >/dev/null 2>"$tmp/err" || fail "item1 --handout through a link: $(cat "$tmp/err")"
[ -L "$tmp/link.pdf" ] || fail "item1: the link was replaced by a file"
head -c 4 "$tmp/real.pdf" | grep -q '%PDF' || fail "item1: the linked file did not get the PDF"
[ "$(stat -c %a "$tmp/real.pdf")" = 640 ] || fail "item1: the mode changed to $(stat -c %a "$tmp/real.pdf")"
echo keep >"$tmp/real.svg"; ln -s real.svg "$tmp/link.svg"
"$bin" --icon "$tmp/link.svg" 2>"$tmp/err" || fail "item1 --icon through a link: $(cat "$tmp/err")"
[ -L "$tmp/link.svg" ] && grep -q '<svg' "$tmp/real.svg" || fail "item1: --icon replaced the link or did not write through it"
ls "$tmp" | grep -q '\.tmp-' && fail "item1: temporary files left: $(ls "$tmp")"

# an unwritable folder is named as the problem (not a temporary file); a missing one too
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir "$tmp/ro"; chmod 755 "$tmp/ro"; chmod 755 "$tmp"; cp "$lesson" "$tmp/l.json"; chmod 644 "$tmp/l.json"
    one_line "item1 --save into a folder not ours" 1 "ro/o.json: cannot write: no permission to create a file in its folder" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --save "$tmp/ro/o.json" "$tmp/l.json"
fi
one_line "item1 --save into a missing folder" 1 "no/o.json: cannot write: its folder does not exist" \
    "$bin" --save "$tmp/no/o.json" "$lesson"

# --- item 5: --save does not swallow other commands ---------------------------------------
"$bin" --set model.scale=1 --save "$tmp/o1.json" --quiz "$lesson" >"$tmp/quiz.json" 2>"$tmp/err" ||
    fail "item5 --save --quiz: exit $?: $(cat "$tmp/err")"
[ -s "$tmp/o1.json" ] && grep -q '"question"' "$tmp/quiz.json" || fail "item5 --save --quiz: not both done"
"$bin" --save "$tmp/o2.json" --handout "$tmp/h.pdf" "$lesson" >/dev/null 2>"$tmp/err" ||
    fail "item5 --save --handout: exit $?: $(cat "$tmp/err")"
[ -s "$tmp/o2.json" ] && [ -s "$tmp/h.pdf" ] || fail "item5 --save --handout: not both written"
one_line "item5 --save --study" 2 "--study goes with the window" "$bin" --save "$tmp/o3.json" --study "$lesson"
one_line "item5 --save --seed" 2 "--seed goes with --quiz" "$bin" --save "$tmp/o3.json" --seed 3 "$lesson"
one_line "item5 --save --describe --format" 2 "go with --export" "$bin" --save "$tmp/o3.json" --describe "$lesson" --format svg
[ -e "$tmp/o3.json" ] && fail "item5: a usage error wrote $tmp/o3.json"

# --- item 8: saving over the input ------------------------------------------------------
cp lessons/causal-decoder.json "$tmp/t.json"; chmod 600 "$tmp/t.json"
one_line "item8 --save over the lesson" 2 "is the LESSON itself" "$bin" --set model.scale=1 --save "$tmp/t.json" "$tmp/t.json"
cmp -s lessons/causal-decoder.json "$tmp/t.json" || fail "item8: the lesson was changed"
[ "$(stat -c %a "$tmp/t.json")" = 600 ] || fail "item8: the mode changed"

# --- item 9: a killed handout's temporary file; stdout failures -----------------------------
sh -c 'exit 0' & dead=$!; wait "$dead"
while kill -0 "$dead" 2>/dev/null; do :; done
echo partial >"$tmp/k.pdf.tmp-$dead-deadbeef"
echo running >"$tmp/k.pdf.tmp-$$-0badc0de"
"$bin" --handout "$tmp/k.pdf" "$lesson" >/dev/null 2>"$tmp/err" || fail "item9 --handout: $(cat "$tmp/err")"
[ -e "$tmp/k.pdf.tmp-$dead-deadbeef" ] && fail "item9: the SIGKILLed handout's temporary file is still there"
[ -e "$tmp/k.pdf.tmp-$$-0badc0de" ] || fail "item9: a running process's temporary file was removed"
if [ -w /dev/full ]; then
    one_line "item9 --handout >/dev/full" 1 "--handout: cannot write the output" \
        sh -c '"$1" --handout "$2" "$3" >/dev/full' sh "$bin" "$tmp/f.pdf" "$lesson"
    one_line "item9 --export >/dev/full" 1 "--export: cannot write the output" \
        sh -c 'env -u DISPLAY "$1" --export "$2" "$3" >/dev/full' sh "$bin" "$tmp/fx" "$lesson"
fi

[ "$fails" -eq 0 ] && echo "reliability3: ok"
[ "$fails" -eq 0 ]
