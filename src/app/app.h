// app.h — the interactive window.
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct AppOptions {
    const char *lesson_path;   // lesson to open
    const char *font_path;     // --font, or NULL for fontconfig
    const char *lessons_dir;   // --lessons DIR for the picker, or NULL
    int lang;                  // Lang of lesson.h
    int width, height;         // initial window size
    bool fullscreen;
} AppOptions;

// The asset directory: $ATTNVIZ_ASSETS, else ../assets or assets next to the
// executable (SDL_GetBasePath), so build/attnviz works from any directory.
// False with a one-line error naming where it looked.
bool app_find_assets(char *out, size_t n, char *err, size_t err_len);

// Runs the window until the user quits. Returns the process exit code.
int app_run(const AppOptions *opt);

#endif
