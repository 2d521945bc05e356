#!/bin/sh
# sysroot.sh — the libraries the browser build links, built for WebAssembly from
# Debian's source packages with Debian's emscripten, into a sysroot under build/
# (make web calls it; a finished sysroot is reused until this script, emscripten or
# the package versions change).
#
#   sh src/web/sysroot.sh OUT      OUT/{include,lib} when done; OUT/stamp names what was built
#
# A finished sysroot is also kept in the user's cache, keyed by its stamp:
# ${ATTNVIZ_CACHE:-${XDG_CACHE_HOME:-~/.cache}/attnviz}/web-sysroot-KEY. A clean clone
# on the same machine (CI's) copies it from there in seconds instead of building it
# again (about 20 minutes on 2 cores). ATTNVIZ_CACHE=off builds without the cache.
#
# Offline by design: emscripten's own ports (-sUSE_SDL=2 …) download from the
# internet; here every library is `apt-get source` of the Debian package (with
# Debian's patches applied), configured for emscripten and installed into OUT.
set -eu
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
SRC=$OUT/src
PREFIX=$OUT
JOBS=${JOBS:-2}
PKGS="zlib freetype harfbuzz libsdl2 libsdl2-ttf libspng cjson pixman cairo"
say() { printf 'sysroot: %s\n' "$*"; }

# Debian's source packages need a deb-src line; added only when none is there.
if ! apt-get source --print-uris zlib >/dev/null 2>&1; then
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then # deb822 (Debian 12's default)
        list=/etc/apt/sources.list.d/attnviz-deb-src.sources
        say "no deb-src entry in apt's sources: adding $list (Debian's source packages)"
        sed -n 's/^Types:.*\bdeb\b.*/Types: deb-src/p; /^\(URIs\|Suites\|Components\|Signed-By\):/p; /^$/p' \
            /etc/apt/sources.list.d/debian.sources | $SUDO tee "$list" >/dev/null
    else                                                  # one-line sources.list
        list=/etc/apt/sources.list.d/attnviz-deb-src.list
        say "no deb-src entry in apt's sources: adding $list (Debian's source packages)"
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list | $SUDO tee "$list" >/dev/null
    fi
    $SUDO apt-get update -qq
fi

# The versions Debian has now and emscripten's: the stamp changes when one of them (or
# this script) does. (Read after the deb-src entry exists: before, showsrc finds nothing.)
versions=$(for p in $PKGS; do apt-cache showsrc "$p" 2>/dev/null | sed -n 's/^Version: //p' | sort -rV | head -1; done | tr '\n' ' ')
emver=$(emcc --version 2>/dev/null | head -1)
stamp="$(cksum < "$0" | cut -d' ' -f1) $versions$emver"
if [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$stamp" ]; then exit 0; fi
rm -rf "$OUT/include" "$OUT/lib" "$OUT/stamp" "$SRC"

CACHE=${ATTNVIZ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnviz}
KEY=$(printf '%s' "$stamp" | cksum | cut -d' ' -f1)
CACHED=$CACHE/web-sysroot-$KEY
if [ "$CACHE" != off ] && [ -f "$CACHED/stamp" ] && [ "$(cat "$CACHED/stamp")" = "$stamp" ]; then
    say "copying the sysroot built before from $CACHED"
    cp -R "$CACHED/include" "$CACHED/lib" "$OUT/" && cp "$CACHED/stamp" "$OUT/stamp" && exit 0
    rm -rf "$OUT/include" "$OUT/lib" "$OUT/stamp"
    say "the copy failed: building it"
fi
mkdir -p "$SRC" "$OUT/include" "$OUT/lib"
cd "$SRC"
for p in $PKGS; do
    say "apt-get source $p"
    # the newest version, else an older one still on the mirror (a security update's
    # files can be missing from it for a while)
    got=no
    for v in $(apt-cache showsrc "$p" | sed -n 's/^Version: //p' | sort -rV); do
        if apt-get source -qq "$p=$v" >/dev/null 2>&1; then got=yes; break; fi
        rm -rf "$SRC/$p"-[0-9]*/ "$SRC/$p"_[0-9]*
    done
    # the Debian diff missing from the mirror (pixman_0.42.2-1.diff.gz answered 404): the
    # upstream tarball Debian builds from (its .orig.tar), without Debian's changes — said
    if [ $got = no ] && apt-get source -qq --tar-only "$p" >/dev/null 2>&1; then
        say "$p: Debian's diff is not on the mirror: building its upstream tarball (.orig.tar) as it is"
        tar xf "$(ls "$SRC/$p"_*.orig.tar.* | head -1)" && got=yes
    fi
    [ $got = yes ] || { apt-get source "$p" >&2; echo "sysroot: apt-get source $p failed" >&2; exit 1; }
done
dir() { for d in "$SRC"/$1-[0-9]*/; do [ -d "$d" ] && { echo "${d%/}"; return; }; done; echo "no source of $1" >&2; exit 1; }

export CFLAGS="-O2"
# emcc links through node scripts that need acorn, which Debian ships here
export NODE_PATH=/usr/share/nodejs
EMCMAKE="emcmake cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$PREFIX -DCMAKE_PREFIX_PATH=$PREFIX -DCMAKE_FIND_ROOT_PATH=$PREFIX -DBUILD_SHARED_LIBS=OFF"

# zlib, cJSON, libspng: a few C files each, compiled as they are.
lib_of_files() { # NAME SRCDIR FILES… (headers are installed by the caller)
    name=$1 d=$2; shift 2
    mkdir -p "$SRC/obj-$name"
    objs=
    for f in "$@"; do
        o="$SRC/obj-$name/$(basename "$f" .c).o"
        emcc $CFLAGS -I"$d" -I"$PREFIX/include" -c "$d/$f" -o "$o"
        objs="$objs $o"
    done
    emar rcs "$PREFIX/lib/lib$name.a" $objs
}
say zlib
Z=$(dir zlib)
CFLAGS="$CFLAGS -DHAVE_UNISTD_H" lib_of_files z "$Z" adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c \
    infback.c inffast.c inflate.c inftrees.c trees.c uncompr.c zutil.c
cp "$Z/zlib.h" "$Z/zconf.h" "$PREFIX/include/"
say cjson
J=$(dir cjson)
lib_of_files cjson "$J" cJSON.c
mkdir -p "$PREFIX/include/cjson" && cp "$J/cJSON.h" "$PREFIX/include/cjson/"
say libspng
S=$(dir libspng)
CFLAGS="$CFLAGS -DSPNG_STATIC -DSPNG_DISABLE_OPT" lib_of_files spng "$S/spng" spng.c
cp "$S/spng/spng.h" "$PREFIX/include/"

# FreeType, then HarfBuzz on it (SDL_ttf shapes with both): CMake, static, no other formats.
cmake_lib() { # NAME SRCDIR CMAKE-OPTIONS…
    name=$1 d=$2; shift 2
    say "$name"
    $EMCMAKE -S "$d" -B "$SRC/build-$name" "$@" >"$SRC/build-$name.log" 2>&1 &&
        cmake --build "$SRC/build-$name" -j "$JOBS" >>"$SRC/build-$name.log" 2>&1 &&
        cmake --install "$SRC/build-$name" >>"$SRC/build-$name.log" 2>&1 ||
        { tail -30 "$SRC/build-$name.log" >&2; echo "sysroot: $name failed to build (log: $SRC/build-$name.log)" >&2; exit 1; }
}
cmake_lib freetype "$(dir freetype)" -DHAVE_UNISTD_H=1 -DHAVE_FCNTL_H=1 -DFT_DISABLE_BZIP2=ON -DFT_DISABLE_PNG=ON -DFT_DISABLE_BROTLI=ON \
    -DFT_DISABLE_HARFBUZZ=ON -DFT_REQUIRE_ZLIB=ON -DZLIB_LIBRARY="$PREFIX/lib/libz.a" -DZLIB_INCLUDE_DIR="$PREFIX/include"
cmake_lib harfbuzz "$(dir harfbuzz)" -DHB_HAVE_FREETYPE=ON -DHB_BUILD_SUBSET=OFF -DHB_HAVE_GLIB=OFF -DHB_HAVE_ICU=OFF \
    -DHB_BUILD_UTILS=OFF -DFREETYPE_LIBRARY="$PREFIX/lib/libfreetype.a" -DFREETYPE_INCLUDE_DIRS="$PREFIX/include/freetype2"
# SDL: the browser's canvas, events and WebGL; no threads (plain static hosts
# cannot serve the headers SharedArrayBuffer needs).
cmake_lib sdl2 "$(dir libsdl2)" -DSDL_SHARED=OFF -DSDL_STATIC=ON -DSDL_PTHREADS=OFF -DSDL_TEST=OFF -DSDL2_DISABLE_SDL2MAIN=ON
cmake_lib sdl2_ttf "$(dir libsdl2-ttf)" -DSDL2TTF_VENDORED=OFF -DSDL2TTF_HARFBUZZ=ON -DSDL2TTF_SAMPLES=OFF \
    -DBUILD_SHARED_LIBS=OFF -DSDL2_DIR="$PREFIX/lib/cmake/SDL2" \
    -DFREETYPE_LIBRARY="$PREFIX/lib/libfreetype.a" -DFREETYPE_INCLUDE_DIRS="$PREFIX/include/freetype2" \
    -Dharfbuzz_LIBRARY="$PREFIX/lib/libharfbuzz.a" -Dharfbuzz_INCLUDE_DIR="$PREFIX/include/harfbuzz"
# pixman, then cairo on it (the page's PDF frames, handout and worksheet: paint_pdf.c):
# autotools, static, no SIMD paths; of cairo only the PDF surface and FreeType fonts (no
# fontconfig: the app's own font files; no X11, PNG, threads, scripts). Debian's patches
# touch configure.ac (02_am-maintainer-mode.patch): make would run automake 1.15 again
# (ACLOCAL=true … keeps the configure script the tarball ships).
NO_AUTOTOOLS="ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true"
autotools_lib() { # NAME SRCDIR MAKE-SUBDIR TARGET "INSTALL-TARGETS" "CFLAGS" CONFIGURE-OPTIONS…
    name=$1 d=$2 sub=$3 target=$4 install=$5 cflags=$6; shift 6
    say "$name"
    (cd "$d" && emconfigure ./configure --host=wasm32-unknown-emscripten --prefix="$PREFIX" --disable-shared \
        --enable-static "$@" CFLAGS="$cflags" CPPFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib" \
        PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig" PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" &&
        emmake make -j "$JOBS" -C "$sub" "$target" $NO_AUTOTOOLS && emmake make -C "$sub" $install $NO_AUTOTOOLS) \
        >"$SRC/build-$name.log" 2>&1 ||
        { tail -30 "$SRC/build-$name.log" >&2; echo "sysroot: $name failed to build (log: $SRC/build-$name.log)" >&2; exit 1; }
}
P=$(dir pixman)
autotools_lib pixman "$P" pixman libpixman-1.la install "$CFLAGS" --disable-openmp --disable-loongson-mmi --disable-mmx --disable-sse2 --disable-ssse3 \
    --disable-vmx --disable-arm-simd --disable-arm-neon --disable-arm-a64-neon --disable-arm-iwmmxt --disable-arm-iwmmxt2 \
    --disable-mips-dspr2 --disable-gcc-inline-asm --disable-gtk --disable-libpng
C=$(dir cairo)
cp "$P/config.sub" "$P/config.guess" "$C/build/" # (cairo 1.16's config.sub predates emscripten; pixman's knows it)
autotools_lib cairo "$C" src libcairo.la \
    "install-libLTLIBRARIES install-cairoincludeHEADERS install-nodist_cairoincludeHEADERS" \
    "$CFLAGS -DCAIRO_NO_MUTEX=1" --disable-gtk-doc --disable-valgrind --enable-xlib=no --enable-xlib-xrender=no \
    --enable-xcb=no --enable-xlib-xcb=no --enable-xcb-shm=no --enable-qt=no --enable-quartz=no --enable-win32=no \
    --enable-os2=no --enable-beos=no --enable-drm=no --enable-gallium=no --enable-png=no --enable-gl=no \
    --enable-glesv2=no --enable-glesv3=no --enable-cogl=no --enable-directfb=no --enable-vg=no --enable-egl=no \
    --enable-glx=no --enable-wgl=no --enable-script=no --enable-ft=yes --enable-fc=no --enable-ps=no --enable-pdf=yes \
    --enable-svg=no --enable-test-surfaces=no --enable-tee=no --enable-xml=no --enable-pthread=no --enable-gobject=no \
    --enable-trace=no --enable-interpreter=no --enable-symbol-lookup=no ax_cv_c_float_words_bigendian=no \
    FREETYPE_CFLAGS="-I$PREFIX/include/freetype2" FREETYPE_LIBS="-L$PREFIX/lib -lfreetype -lz" \
    pixman_CFLAGS="-I$PREFIX/include/pixman-1" pixman_LIBS="-L$PREFIX/lib -lpixman-1"
printf '%s\n' "$stamp" > "$OUT/stamp"
say "done: $OUT"
# into the cache: copied to a new folder beside it, then renamed (a run that stops half
# way leaves no half a sysroot there; an older sysroot of this key is replaced whole)
if [ "$CACHE" != off ] && mkdir -p "$CACHE" 2>/dev/null; then
    tmp=$(mktemp -d "$CACHE/.web-sysroot-XXXXXX") &&
        cp -R "$OUT/include" "$OUT/lib" "$OUT/stamp" "$tmp/" &&
        rm -rf "$CACHED" && mv "$tmp" "$CACHED" && say "kept in $CACHED" ||
        { rm -rf "$tmp"; say "could not keep it in $CACHE (the next clean clone builds it again)"; }
fi
