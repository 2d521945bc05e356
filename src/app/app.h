// app.h — the interactive window.
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include <stdbool.h>

typedef struct AppOptions {
    const char *lesson_path;   // lesson to open
    const char *font_path;     // --font, or NULL for fontconfig
    const char *lessons_dir;   // --lessons DIR for the picker, or NULL
    int lang;                  // Lang of lesson.h
    int width, height;         // initial window size
    bool fullscreen;
    bool study;                // --study: open in the study mode
    bool presenter;            // --presenter: open the presenter window too (presenter.h)
    bool projector;            // --projector: projector mode (View.projector)
    const struct SessionEdits *edits; // --set edits applied on opening (NULL: none)
} AppOptions;

// Runs the window until the user quits. Returns the process exit code.
int app_run(const AppOptions *opt);

#endif
