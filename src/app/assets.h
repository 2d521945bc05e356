// assets.h — where the app's data files are (lang/en.txt, lang/zh.txt, and
// lessons/ beside them), for the window, --export and the default lesson.
#ifndef ATTNVIZ_ASSETS_H
#define ATTNVIZ_ASSETS_H

#include <stdbool.h>
#include <stddef.h>

// The asset directory: $ATTNVIZ_ASSETS, else ../assets or assets next to the
// executable (SDL_GetBasePath), so build/attnviz works from any directory; an
// installed one finds ../share/attnviz/assets beside its bin/, else the data
// directory compiled in from the Makefile's PREFIX.
// False with a one-line error naming where it looked.
bool assets_find(char *out, size_t n, char *err, size_t err_len);

#endif
