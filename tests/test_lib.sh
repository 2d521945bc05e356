# test_lib.sh — the common start of the command-line shell tests (sourced; not a
# test itself): B (the build dir, $BUILD or build), bin (its attnviz), fails and
# fail MESSAGE (counts a failure), tmp (a temporary directory removed on exit), and the
# checks several tests make: one_line (a one-line error), check_partial (a failed export).
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { printf "FAIL %s\n" "$*"; fails=$((fails + 1)); } # (printf: backslashes in a message stay)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# interrupt_export DIR SECONDS ARGS...: `attnviz --export DIR ARGS` headless, SIGINT
# SECONDS after DIR appears (at most 1 s of waiting for it); its exit status in rc.
interrupt_export() {
    dir=$1 after=$2
    shift 2
    env -u DISPLAY "$bin" --export "$dir" "$@" >/dev/null 2>"$tmp/interrupt-err" &
    pid=$!
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do [ -d "$dir" ] && break; sleep 0.05; done
    sleep "$after"
    kill -INT $pid
    wait $pid
    rc=$?
}

# shipped_lessons: every lesson in lessons/ under make test-full (ATTNVIZ_FULL=1);
# under make test a sample of its kinds: the classic lesson, cross-attention with
# padding, KV-cache decoding, FlashAttention tiles and the Chinese sentence.
shipped_lessons() {
    if [ -n "$ATTNVIZ_FULL" ] && [ "$ATTNVIZ_FULL" != 0 ]; then
        ls lessons/*.json
    else
        echo lessons/arange-2x4x4.json lessons/cross-attention-padding.json lessons/kv-cache-decoding.json \
            lessons/flash-attention-tiles.json lessons/sentence-the-cat.json
    fi
}

# one_line NAME EXPECTED-EXIT WANT-TEXT CMD...: the command's stderr is exactly one
# line containing WANT-TEXT, and it exits with EXPECTED-EXIT
one_line() {
    name=$1 want_rc=$2 want=$3; shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" -eq "$want_rc" ] || fail "$name: exit $rc, expected $want_rc ($(head -c 300 "$tmp/err"))"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: $(wc -l <"$tmp/err") lines on stderr, expected 1: $(head -c 300 "$tmp/err")"
    grep -qF -- "$want" "$tmp/err" || fail "$name: stderr lacks '$want': $(head -c 300 "$tmp/err")"
}

# check_partial DIR: after a failed export into DIR, one line on stderr ($tmp/err), no
# temporary file left, and frames.json lists exactly the PNGs there.
check_partial() { # dir
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: $(wc -l <"$tmp/err") lines on stderr: $(cat "$tmp/err")"
    ls -a "$1" | grep -q tmp && fail "$1: temporary files left: $(ls -a "$1")"
    listed=$(grep -o '"file": "[^"]*"' "$1/frames.json" 2>/dev/null | sed 's/.*: "//; s/"$//' | sort)
    present=$(cd "$1" && ls *.png 2>/dev/null | sort)
    [ "$listed" = "$present" ] || fail "$1: frames.json does not list exactly the PNGs"
}

# describe_lessons LESSON...: `attnviz --describe` of each lesson in both languages into
# $tmp, each listed in $tmp/list as "LESSON LANG FILE" (for one python to check them all);
# a lesson that fails is a failure, not listed.
describe_lessons() {
    : >"$tmp/list"
    n=0
    for lesson in "$@"; do
        n=$((n + 1))
        for lang in en zh; do
            out="$tmp/d-$n-$lang.json"
            "$bin" --describe "$lesson" --lang "$lang" >"$out" 2>"$tmp/err" || { fail "$lesson $lang: exit $? $(cat "$tmp/err")"; continue; }
            printf '%s %s %s\n' "$lesson" "$lang" "$out" >>"$tmp/list"
        done
    done
}
