#!/bin/sh
# Issue 15 ("Reliability, round two"), the command line's part; each check is
# named after the issue's item:
#  item4  --dump / --print / --describe / --check to /dev/full or over a
#         file-size limit exit 1 with one line (never a cut JSON with exit 0)
#  item5  (the converter and torch.finfo's min: from_torch_test.sh)
#  item6  --check of a 16 MiB file of zeros: rejected by counting its values
#         before parsing (peak memory under 160 MB; it was 680 MB)
#  item7  newlines in --stage, --print's stage, an unknown option, --lessons and
#         the export folder stay one escaped line
#  item10 a FIFO as the lesson: one line at once, never a blocked --check
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
lesson=lessons/arange-2x4x4.json
nl='
'


# --- item 4: write errors --------------------------------------------------------
if [ -w /dev/full ]; then
    one_line "item4 --dump >/dev/full" 1 "--dump: cannot write the output: No space left on device" \
        sh -c '"$1" --dump "$2" >/dev/full' sh "$bin" "$lesson"
    one_line "item4 --print >/dev/full" 1 "--print: cannot write the output: No space left on device" \
        sh -c '"$1" --print attn "$2" >/dev/full' sh "$bin" "$lesson"
    one_line "item4 --describe >/dev/full" 1 "--describe: cannot write the output" \
        sh -c '"$1" --describe "$2" >/dev/full' sh "$bin" "$lesson"
    one_line "item4 --check >/dev/full" 1 "--check: cannot write the output" \
        sh -c '"$1" --check "$2" >/dev/full' sh "$bin" "$lesson"
else
    fail "item4: /dev/full is not writable here"
fi
# a full disk part-way: a file-size limit of 20 KiB cuts the 1.6 MB dump (SIGXFSZ is ignored)
one_line "item4 --dump over ulimit -f" 1 "--dump: cannot write the output: File too large" \
    sh -c 'ulimit -f 40; exec "$1" --dump "$2" >"$3"' sh "$bin" tests/big/long-256.json "$tmp/cut.json"
[ "$(wc -c <"$tmp/cut.json")" -le 20480 ] || fail "item4: the file-size limit did not apply"
# still 0 when the output fits
"$bin" --dump "$lesson" >"$tmp/ok.json" 2>"$tmp/err" && [ ! -s "$tmp/err" ] || fail "item4: a good --dump failed"

# --- item 7: arguments with newlines stay one line ----------------------------------
one_line "item7 --print STAGE with a newline" 2 'no stage "a\nb"' "$bin" --print "a${nl}b" "$lesson"
one_line "item7 unknown option with a newline" 2 'unknown option "--a\nb"' "$bin" "--a${nl}b"
one_line "item7 --lessons with a newline" 2 '--lessons: "a\nb" is not a directory' "$bin" --lessons "a${nl}b"
one_line "item7 --stage with a newline" 2 'no stage "a\nb"' \
    env -u DISPLAY "$bin" --export "$tmp/st" --stage "a${nl}b" "$lesson"
one_line "item7 export folder with a newline" 1 "$tmp/no/a\\nb: cannot create the export directory" \
    env -u DISPLAY "$bin" --export "$tmp/no/a${nl}b" "$lesson"
one_line "item7 lesson name with a newline and C1" 1 'x\n\u0085y.json: cannot open' \
    "$bin" --check "$(printf 'x\n\302\205y.json')"

# --- item 6: what a file can cost --check ---------------------------------------------
# peak resident memory (KiB) of a command, its exit status and stderr in $tmp/err
peak() {
    python3 - "$tmp/err" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "wb") as err:
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
python3 -c 'import sys; sys.stdout.write("{\"title\": \"zeros\", \"x\": [" + "0," * (8 * 1024 * 1024 - 20) + "0]}")' >"$tmp/zeros.json"
set -- $(peak "$bin" --check "$tmp/zeros.json")
[ "$1" -eq 1 ] || fail "item6 16 MiB of zeros: exit $1, expected 1"
[ "$2" -lt 163840 ] || fail "item6 16 MiB of zeros: --check peaked at $2 KiB, expected under 160 MiB"
grep -q "zeros.json: more than 2097152 JSON values" "$tmp/err" || fail "item6 16 MiB of zeros: $(head -c 300 "$tmp/err")"
rm -f "$tmp/zeros.json"

# --- item 10: a FIFO is not a lesson ------------------------------------------------------
mkfifo "$tmp/fifo.json"
one_line "item10 --check FIFO" 1 "fifo.json: not a regular file (a FIFO); expected a lesson file" \
    timeout 20 "$bin" --check "$tmp/fifo.json"
one_line "item10 --dump FIFO" 1 "fifo.json: not a regular file (a FIFO)" timeout 20 "$bin" --dump "$tmp/fifo.json"
one_line "item10 --check directory" 1 "tests: not a regular file (a directory)" "$bin" --check tests

echo "reliability: $fails failures"
[ "$fails" -eq 0 ]
