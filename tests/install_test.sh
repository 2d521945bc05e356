#!/bin/sh
# make install / make uninstall (issue 14): into a DESTDIR, the installed binary
# exports from / with the installed lessons and assets (no repository around),
# --check accepts every installed lesson, the desktop entry and the AppStream
# metainfo pass their validators, the man page renders without warnings, the
# icons (drawn by attnviz --icon) have their sizes, and uninstall removes
# every file it put there.
B=${BUILD:-build}
SAN_ARG=
[ "$B" = build/san ] && SAN_ARG=SAN=1
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
# the build's own PREFIX (nothing is rebuilt): /usr/local unless given
prefix=$(sed -n 's/#define ATTNVIZ_DATADIR "\(.*\)\/share\/attnviz"/\1/p' "$B/gen/datadir.h")
[ -n "$prefix" ] || { echo "FAIL no $B/gen/datadir.h"; exit 1; }
make --no-print-directory -s $SAN_ARG install DESTDIR="$root" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install exited $?"; }
bin="$root$prefix/bin/attnviz"
share="$root$prefix/share"
[ -x "$bin" ] || fail "no installed binary at $bin"
for l in lessons/*.json; do
    [ -f "$share/attnviz/lessons/$(basename "$l")" ] || fail "lesson $l not installed"
done
[ -f "$share/attnviz/lessons/order.txt" ] || fail "lessons/order.txt (the picker's teaching order) not installed"
[ -f "$share/attnviz/assets/lang/en.txt" ] && [ -f "$share/attnviz/assets/lang/zh.txt" ] || fail "assets not installed"

# 1. from /, with nothing of the repository in reach (ATTNVIZ_ASSETS unset)
out="$tmp/frames"
(cd / && env -u DISPLAY -u ATTNVIZ_ASSETS "$bin" --export "$out" "$share/attnviz/lessons/causal-decoder.json" >/dev/null 2>"$tmp/err") ||
    fail "installed binary could not export from /: $(cat "$tmp/err")"
[ -f "$out/frames.json" ] && [ "$(ls "$out"/*.png | wc -l)" -gt 5 ] || fail "installed export wrote no frames"
(cd / && env -u ATTNVIZ_ASSETS "$bin" --describe --lang zh "$share/attnviz/lessons/arange-2x4x4.json" >"$tmp/desc" 2>"$tmp/err") ||
    fail "installed --describe (reads the assets) failed from /: $(cat "$tmp/err")"
grep -q '缩放' "$tmp/desc" || grep -q '注意力' "$tmp/desc" || fail "installed --describe --lang zh has no Chinese text"
(cd / && "$bin" --check "$share"/attnviz/lessons/*.json >/dev/null 2>"$tmp/err") || fail "installed lessons do not --check: $(cat "$tmp/err")"
# the installed from_torch.py finds its modules beside it (from_torch_parts.py, from_torch_blocks.py,
# lesson_file.py, lesson_torch.py, torch_modules.py, torch_mla.py); needs torch
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    { (cd / && /usr/bin/python3 -B "$share/attnviz/lessons/from_torch.py" --demo "$tmp/demo.json" >/dev/null 2>"$tmp/err") &&
        "$bin" --check "$tmp/demo.json" >/dev/null 2>>"$tmp/err"; } || fail "installed from_torch.py --demo: $(tail -3 "$tmp/err")"
fi

# 1b. issue 27 item 4: files planted beside the install are never read: PREFIX/assets
# and PREFIX/../assets (bindir/../assets, bindir/../../assets) with a language file
# that rewrites the questions, and one that is /dev/zero through a link
for planted in "$root$prefix/assets" "$root$prefix/../assets"; do
    mkdir -p "$planted/lang"
    printf 'quiz.shape = PLANTED {1}\n' >"$planted/lang/en.txt"
    ln -sf /dev/zero "$planted/lang/zh.txt"
done
(cd / && env -u ATTNVIZ_ASSETS timeout 20 "$bin" --quiz --lang zh "$share/attnviz/lessons/arange-2x4x4.json" >"$tmp/quiz" 2>"$tmp/err") ||
    fail "installed --quiz with planted assets beside it: $(head -c 300 "$tmp/err")"
(cd / && env -u ATTNVIZ_ASSETS timeout 20 "$bin" --quiz "$share/attnviz/lessons/arange-2x4x4.json" >>"$tmp/quiz" 2>>"$tmp/err") ||
    fail "installed --quiz with planted assets beside it: $(head -c 300 "$tmp/err")"
grep -q PLANTED "$tmp/quiz" && fail "the installed binary read a language file planted beside the install"
rm -rf "$root$prefix/assets" "$root$prefix/../assets"

# 2. validators
desktop="$share/applications/io.github.attnviz.attnviz.desktop"
[ -f "$desktop" ] || fail "no desktop entry"
v=$(desktop-file-validate "$desktop" 2>&1) || fail "desktop-file-validate: $v"
[ -z "$v" ] || fail "desktop-file-validate says: $v"
meta="$share/metainfo/io.github.attnviz.attnviz.metainfo.xml"
appstreamcli validate --no-net "$meta" >"$tmp/as" 2>&1 || fail "appstreamcli validate: $(cat "$tmp/as")"
man1="$share/man/man1/attnviz.1"
w=$(MANWIDTH=80 man --warnings -l "$man1" 2>&1 >/dev/null)
[ -z "$w" ] || fail "man page warnings: $w"
MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -q -- "--export DIR LESSON" || fail "man page does not render the synopsis"
# the Exec line's program and the Icon name exist in the installed tree
grep -q '^Exec=attnviz ' "$desktop" || fail "desktop Exec is not attnviz"
icon=$(sed -n 's/^Icon=//p' "$desktop")
svg="$share/icons/hicolor/scalable/apps/$icon.svg"
python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag.endswith('svg')" "$svg" ||
    fail "the scalable icon is not an SVG"
for s in 16 32 48 64 128 256 512; do
    png="$share/icons/hicolor/${s}x$s/apps/$icon.png"
    [ "$(identify -format %wx%h "$png" 2>/dev/null)" = "${s}x$s" ] || fail "icon $png is not ${s}x$s"
done
# the SVG icon and the 256 px PNG are the same drawing (two backends of paint.h)
rsvg-convert -w 256 -h 256 "$svg" >"$tmp/svg256.png" 2>/dev/null || fail "rsvg-convert cannot render the icon"
ae=$(compare -metric AE "$tmp/svg256.png" "$share/icons/hicolor/256x256/apps/$icon.png" null: 2>&1)
[ "${ae%% *}" = 0 ] || fail "the SVG icon renders differently from the PNG icon ($ae pixels)"

# 3. uninstall leaves nothing behind
make --no-print-directory -s $SAN_ARG uninstall DESTDIR="$root" >"$tmp/log" 2>&1 || fail "make uninstall exited $?"
left=$(find "$root" -type f | sed "s|^$root||")
[ -z "$left" ] || fail "uninstall left: $left"
# issue 27 item 9: nor the empty folders it made (the standard bin/, share/, share/man stay)
dirs=$(find "$root$prefix" -mindepth 1 -type d | sed "s|^$root$prefix||" | sort | tr '\n' ' ')
[ "$dirs" = "/bin /share /share/man " ] || fail "uninstall left folders: $dirs"

[ "$fails" -eq 0 ] && echo "install: ok"
[ "$fails" -eq 0 ]
