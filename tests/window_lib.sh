# window_lib.sh — the common start of the window tests under Xvfb (sourced by
# window_test.sh, picker_test.sh, window_export_test.sh; not a test itself).
#
# window_test_begin NAME TOOL...  sets B (the build dir, $BUILD or build) and
# TMP (a temporary directory removed on exit). Skips the test (exit 77) when
# Xvfb is missing; fails (exit 1) when a TOOL or the binary is missing.
window_test_begin() {
    name=$1
    shift
    B=${BUILD:-build}
    if ! command -v Xvfb >/dev/null 2>&1; then
        echo "$name: SKIP: Xvfb not found (make deps installs xvfb)"
        exit 77
    fi
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || { echo "$name: $tool not found (make deps)"; exit 1; }
    done
    [ -x "$B/attnviz" ] || { echo "$name: $B/attnviz not built"; exit 1; }
    # the helpers of the part that runs under Xvfb: the inner script's third argument
    WINDOW_INNER=$(cd "$(dirname "$0")" && pwd)/window_inner.sh
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
}

# window_test_run SECONDS [SCREEN]: runs $TMP/inner.sh on its own Xvfb (SCREEN:
# 1280x800 unless given) with B, TMP and the helpers (window_inner.sh) as its
# arguments, at most SECONDS; exits with its status. Xvfb picks a free display itself
# (-displayfd): `xvfb-run -a` can give two tests started together the same one.
window_test_run() {
    Xvfb -displayfd 3 -screen 0 "${2:-1280x800}x24" -nolisten tcp 3>"$TMP/display" 2>"$TMP/xvfb.err" &
    xpid=$!
    trap 'kill "$xpid" 2>/dev/null; rm -rf "$TMP"' EXIT
    for _ in $(seq 1 200); do [ -s "$TMP/display" ] && break; sleep 0.05; done
    d=$(cat "$TMP/display")
    if [ -z "$d" ]; then
        echo "$name: FAIL: Xvfb did not start within 10 s: $(cat "$TMP/xvfb.err")"
        kill "$xpid" 2>/dev/null
        exit 1
    fi
    DISPLAY=:$d timeout "$1" sh ${WINDOW_X:-} "$TMP/inner.sh" "$B" "$TMP" "$WINDOW_INNER"
    rc=$?
    kill "$xpid" 2>/dev/null
    wait "$xpid" 2>/dev/null
    [ $rc -eq 124 ] && echo "$name: FAIL: timed out after $1 s"
    exit $rc
}
