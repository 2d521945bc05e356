// assets.h — where the app's data files are (lang/en.txt, lang/zh.txt, and
// lessons/ beside them), for the window, --export and the default lesson.
#ifndef ATTNVIZ_ASSETS_H
#define ATTNVIZ_ASSETS_H

#include <stdbool.h>
#include <stddef.h>

// The asset directory: $ATTNVIZ_ASSETS (explicit), else inside the install
// prefix relative to the executable (SDL_GetBasePath): ../share/attnviz/assets
// beside its bin/ (a DESTDIR install, a moved tree); else, for build/attnviz and
// build/san/attnviz (and the test programs), the source checkout's assets (only when ../ to ../../../ is the
// checkout: its Makefile and src/ are there, owned by root, this user or the
// binary's owner); else the data directory compiled in from the Makefile's PREFIX.
// Nothing else beside an install is read (a folder planted at PREFIX/../assets is not).
// False with a one-line error naming where it looked.
bool assets_find(char *out, size_t n, char *err, size_t err_len);

// The lesson the window opens when none is given: lessons/arange-2x4x4.json beside
// the assets (the installed one, or the checkout's), never the working directory's.
// False with the reason in out when there are no assets.
bool assets_default_lesson(char *out, size_t n);

#endif
