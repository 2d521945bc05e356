# window_lib.sh — the common start of the window tests under Xvfb (sourced by
# window_test.sh, picker_test.sh, window_export_test.sh; not a test itself).
#
# window_test_begin NAME TOOL...  sets B (the build dir, $BUILD or build) and
# TMP (a temporary directory removed on exit). Skips the test (exit 0) when
# xvfb-run is missing; fails (exit 1) when a TOOL or the binary is missing.
window_test_begin() {
    name=$1
    shift
    B=${BUILD:-build}
    if ! command -v xvfb-run >/dev/null 2>&1; then
        echo "$name: SKIP: xvfb-run not found (make deps installs xvfb)"
        exit 0
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

# window_test_run SECONDS: runs $TMP/inner.sh under Xvfb with B, TMP and the helpers
# (window_inner.sh) as its arguments, at most SECONDS; exits with its status.
window_test_run() {
    timeout "$1" xvfb-run -a -s "-screen 0 1280x800x24" sh "$TMP/inner.sh" "$B" "$TMP" "$WINDOW_INNER"
    rc=$?
    [ $rc -eq 124 ] && echo "$name: FAIL: timed out after $1 s"
    exit $rc
}
