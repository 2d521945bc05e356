#!/bin/sh
# The trained lessons are reproducible: lessons/train_induction.py, rerun into a temporary
# file, writes exactly the shipped lessons/induction-heads.json (the same weights, byte for
# byte, and the narration written from them). It trains for about 40 s, so it runs under
# make test-full only (ATTNVIZ_FULL=1), and needs /usr/bin/python3 with torch: skipped
# (exit 77) otherwise. See lessons/README.md, "Trained lessons".
if [ -z "$ATTNVIZ_FULL" ] || [ "$ATTNVIZ_FULL" = 0 ]; then
    echo "train_lessons_test: SKIP: retrains a model (about 40 s); runs under make test-full (ATTNVIZ_FULL=1)"
    exit 77
fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "train_lessons_test: SKIP: needs /usr/bin/python3 with torch (python3-torch)"
    exit 77
fi
. "$(dirname "$0")/test_lib.sh"

/usr/bin/python3 lessons/train_induction.py --out "$tmp/induction-heads.json" >"$tmp/train.out" 2>&1 ||
    fail "train_induction.py failed: $(tail -3 "$tmp/train.out")"
if [ -f "$tmp/induction-heads.json" ]; then
    cmp -s "$tmp/induction-heads.json" lessons/induction-heads.json ||
        fail "lessons/induction-heads.json differs from a rerun of lessons/train_induction.py: $(cmp "$tmp/induction-heads.json" lessons/induction-heads.json)"
fi
tail -8 "$tmp/train.out"

# lessons/train_textbook.py: the reversal model (about 15 s), lessons/reversal-anti-diagonal.json
/usr/bin/python3 lessons/train_textbook.py --out "$tmp/reversal-anti-diagonal.json" >"$tmp/textbook.out" 2>&1 ||
    fail "train_textbook.py failed: $(tail -3 "$tmp/textbook.out")"
if [ -f "$tmp/reversal-anti-diagonal.json" ]; then
    cmp -s "$tmp/reversal-anti-diagonal.json" lessons/reversal-anti-diagonal.json ||
        fail "lessons/reversal-anti-diagonal.json differs from a rerun of lessons/train_textbook.py: $(cmp "$tmp/reversal-anti-diagonal.json" lessons/reversal-anti-diagonal.json)"
fi
tail -4 "$tmp/textbook.out"

echo "train_lessons: $fails failures"
[ "$fails" -eq 0 ]
