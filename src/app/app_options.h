// app_options.h — what the program that opens the window gives it: the options (from
// the command line or the page's address) and the callbacks of its embedding (the page
// downloads saved files and fetches the Chinese font). Read by every part of the window.
#ifndef ATTNVIZ_APP_OPTIONS_H
#define ATTNVIZ_APP_OPTIONS_H

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
    int view;                  // ViewKind of view.h: --model-view, --head-view open in that view
    const struct SessionEdits *edits; // --set edits applied on opening (NULL: none)
    const char *stage;         // --stage NAME: open at this stage (NULL: the first)
    int batch, head;           // --batch, --head: the slice shown first
    bool head_set;             // --head given (else the stage opens on its narration's head)
    // The browser build (src/web): frames come from the browser's main loop, so a
    // frame never waits or sleeps, and one with nothing new to show is not drawn;
    // the window's size is in output pixels (the page scales the canvas for HiDPI
    // screens itself, so SDL does not).
    bool browser;
} AppOptions;

// Called with the path of every file the user asked for once it is complete
// (S's frame, E's folder or handout, the lab's saved lesson); NULL: nothing. The
// browser build hands each to the browser as a download.
extern void (*app_on_saved)(const char *path);
// Called when Chinese is asked for (L) and no Chinese font is loaded; true when
// one is on its way (the browser fetches it only then; once it is in place the
// page calls app_fonts_reload and switches). NULL: the usual "no Chinese font".
extern bool (*app_fetch_font)(void);
// Called on F5 in the browser (one canvas: the presenter is a second browser window, which
// the page opens and keeps in step); true when it is open. NULL: F5 says there is none.
extern bool (*app_open_presenter)(void);
// Called when a lesson to open is not in the files (the page: the shipped lessons but the
// default are fetched when opened, issue 39); true when its fetch began: "Downloading…" shows,
// then the page opens it (app_open) or says why not (app_lesson_fetch_failed). NULL: the usual
// "cannot open" error.
extern bool (*app_fetch_lesson)(const char *path);
#endif
