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
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
}
