# test_lib.sh — the common start of the command-line shell tests (sourced; not a
# test itself): B (the build dir, $BUILD or build), bin (its attnviz), fails and
# fail MESSAGE (counts a failure), tmp (a temporary directory removed on exit).
B=${BUILD:-build}
bin="$B/attnviz"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
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
