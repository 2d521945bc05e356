#!/bin/sh
# The trained lessons are reproducible: lessons/train_induction.py, train_textbook.py,
# train_tiny_lm.py, train_grammar.py, train_vit.py and train_encdec.py, rerun into a temporary directory, write
# exactly the shipped lessons/induction-heads.json, reversal-anti-diagonal.json, tiny-lm-fortunes.json,
# grammar-agreement.json, vision-digits.json and encoder-decoder-reversal.json (the same weights and checkpoints,
# byte for byte, and the narration written from them). They train for about 35 s, 15 s, 90 s, 85 s, 15 s and 10 s
# on an idle machine
# (about 5 min together), so this runs under make
# test-full only (ATTNVIZ_FULL=1), and needs /usr/bin/python3 with torch: skipped (exit 77)
# otherwise. The tiny language model also needs its text, Debian's fortunes-min: without it
# that lesson is skipped (said in the output), the others still checked. And the first 200
# steps of lessons/train_subword_lm.py (below). See lessons/README.md, "Trained lessons".
if [ -z "$ATTNVIZ_FULL" ] || [ "$ATTNVIZ_FULL" = 0 ]; then
    echo "train_lessons_test: SKIP: retrains six models (about 5 min); runs under make test-full (ATTNVIZ_FULL=1)"
    exit 77
fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "train_lessons_test: SKIP: needs /usr/bin/python3 with torch (python3-torch)"
    exit 77
fi
# The shipped lessons were trained with ATen's AVX2 kernels and OpenBLAS's Haswell kernels
# (an AVX2 machine's): pinned here, so a CPU with AVX-512 (whose kernels round otherwise)
# reproduces them too. Needs OpenBLAS as the BLAS (Debian's reference BLAS rounds otherwise).
export ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell
if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "train_lessons_test: SKIP: the lessons were trained with AVX2 kernels; this CPU has none"
    exit 77
fi
case "$(readlink -f /usr/lib/"$(uname -m)"-linux-gnu/libblas.so.3 2>/dev/null)" in
*openblas*) ;;
*) echo "train_lessons_test: SKIP: the BLAS is not OpenBLAS (apt-get install libopenblas0-pthread; make bench installs it)"
   exit 77 ;;
esac
. "$(dirname "$0")/test_lib.sh"

# retrain SCRIPT LESSON LINES: lessons/SCRIPT rerun into $tmp writes exactly lessons/LESSON
# (its last LINES lines of output shown: what it measured)
retrain() {
    /usr/bin/python3 "lessons/$1" --out "$tmp/$2" >"$tmp/$1.out" 2>&1 || fail "$1 failed: $(tail -3 "$tmp/$1.out")"
    if [ -f "$tmp/$2" ]; then
        cmp -s "$tmp/$2" "lessons/$2" || fail "lessons/$2 differs from a rerun of lessons/$1: $(cmp "$tmp/$2" "lessons/$2")"
    fi
    tail -"$3" "$tmp/$1.out"
}

retrain train_induction.py induction-heads.json 8
retrain train_textbook.py reversal-anti-diagonal.json 4   # the reversal model (about 15 s)
retrain train_grammar.py grammar-agreement.json 5         # the grammar model (its sentences are generated)
retrain train_encdec.py encoder-decoder-reversal.json 3    # the encoder–decoder (nn.Transformer, about 10 s)
# tiny-lm-fortunes.json: trained on /usr/share/games/fortunes/{fortunes,literature,riddles}
if [ -f /usr/share/games/fortunes/riddles ] && [ -f /usr/share/games/fortunes/literature ] &&
    [ -f /usr/share/games/fortunes/fortunes ]; then
    retrain train_tiny_lm.py tiny-lm-fortunes.json 4
else
    echo "train_lessons_test: tiny-lm-fortunes.json not retrained: its text is missing (apt-get install fortunes-min)"
fi

# vision-digits.json: scikit-learn's 8×8 digits (python3-sklearn, which make test-full installs)
if /usr/bin/python3 -c "import sklearn" 2>/dev/null; then
    retrain train_vit.py vision-digits.json 3   # the vision transformer (about 1 min)
else
    echo "train_lessons_test: vision-digits.json not retrained: scikit-learn is missing (apt-get install python3-sklearn)"
fi
# lessons/train_subword_lm.py (4 layers, lessons/subword-lm-fortunes.json) trains for about
# 22 min, too long to rerun here; its first 200 steps are rerun (the same seeds, batches and
# schedule as the full run that wrote the lesson, whose log printed the same sha256 at step
# 200): the weights' sha256 equals the committed tests/ref/subword_lm_digest.txt (written by
# `--digest 200` with the pins above)
if [ -f /usr/share/games/fortunes/people ] && [ -f /usr/share/games/fortunes/riddles ]; then
    want=$(cat tests/ref/subword_lm_digest.txt)
    if ! got=$(/usr/bin/python3 lessons/train_subword_lm.py --digest 200 2>&1); then
        fail "train_subword_lm.py --digest failed: $got"
    elif [ "$got" != "$want" ]; then
        fail "train_subword_lm.py: the first 200 steps give weights $got, tests/ref/subword_lm_digest.txt says $want"
    else
        echo "train_subword_lm.py: the first 200 steps give the committed weights ($want)"
    fi
else
    echo "train_lessons_test: train_subword_lm.py's first steps not rerun: its text is missing (apt-get install fortunes)"
fi

echo "train_lessons: $fails failures"
[ "$fails" -eq 0 ]
