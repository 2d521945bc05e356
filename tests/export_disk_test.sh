#!/bin/sh
# --export on a full disk and into a read-only directory (split from export_test.sh):
# a full 150 KiB tmpfs and a read-only mount give one line on stderr and exit 1, and
# what was written is complete and listed. Needs root to mount (CI is root): skipped
# (exit 77) otherwise.
. "$(dirname "$0")/test_lib.sh" # B, bin, fails, fail, tmp
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
lesson=lessons/arange-2x4x4.json

# a full 150 KiB tmpfs and a read-only mount (needs root; CI is root)
if [ "$(id -u)" != 0 ]; then
    echo "export_disk_test: SKIP: mounting a small tmpfs needs root (CI is root)"
    exit 77
fi
mkdir -p "$tmp/full"
if ! mount -t tmpfs -o size=150k tmpfs "$tmp/full" 2>/dev/null; then
    echo "export_disk_test: SKIP: cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?)"
    exit 77
fi
env -u DISPLAY "$bin" --export "$tmp/full/out" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "full disk: exit $rc, expected 1"
grep -q "No space left on device" "$tmp/err" || fail "full disk: message '$(cat "$tmp/err")'"
check_partial "$tmp/full/out"
mkdir "$tmp/full/ro" && mount -o remount,ro "$tmp/full" 2>/dev/null || fail "cannot remount read-only"
env -u DISPLAY "$bin" --export "$tmp/full/ro" "$lesson" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "not writable: Read-only file system" "$tmp/err" || fail "read-only dir: exit $rc, '$(cat "$tmp/err")'"
umount "$tmp/full"

echo "export disk: $fails failures"
[ "$fails" -eq 0 ]
