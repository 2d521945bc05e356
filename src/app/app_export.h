// app_export.h — E in the window: the format chosen with the next key, then the whole
// lesson as frames, a handout or a video, a few frames a loop on its own surface
// (export.h), with its progress over the frame. Its state is ExportUI's.
#ifndef ATTNVIZ_APP_EXPORT_H
#define ATTNVIZ_APP_EXPORT_H

#include <SDL.h>
#include <stdbool.h>

#include "export.h"
#include "session.h"
#include "text.h"
#include "toast.h"
#include "view.h"

typedef struct ExportUI {
    ExportJob *job;        // an export in progress, drawn a few frames per loop; NULL: none
    bool choose;           // E pressed: the next key picks the format
    ExportTarget target;   // where it draws: its own surface, renderer, fonts and heatmap
                           // cache at the size of E, whatever the window does meanwhile
    View view;             // what it exports (the view when the format was chosen)
    TextMeasure measure;   // the view's text measures, with the target's fonts
    char dir[1200];
    char title[LESSON_MAX_TEXT + 64];
} ExportUI;

// What E exports: the window's lesson and view now, at its output size.
typedef struct ExportFrom {
    const Session *session;
    const View *view;
    const char *font_path;
    int w, h;              // the window's output pixels
    bool browser;          // the page: the formats it makes (PNG frames, MP4, GIF)
    bool studying;         // the study mode: no export (it would show every answer)
} ExportFrom;

// E: asks for the format (a toast), unless an export runs or the study mode is on.
void export_ui_ask(ExportUI *x, const ExportFrom *from, Toast *t);
// The key after E picks the format (1 PNG frames, 2 handout, 3 MP4, 4 GIF, 5 SVG frames,
// 6 PDF frames, 7 worksheet; anything else cancels; in the page what it makes).
void export_ui_choose_key(ExportUI *x, SDL_Keycode sym, const ExportFrom *from, Toast *t);
// Esc while an export runs: stops it and removes what it wrote (its folder); a notice says so.
void export_ui_stop(ExportUI *x, Lang lang, Toast *t);
// Draws export frames for at most budget seconds; ends the export when it is done
// (where the files are, or what failed, in t, in lang).
void export_ui_update(ExportUI *x, double budget, Lang lang, Toast *t);
// Finishes a running export now (before the lesson changes or the window closes).
void export_ui_complete(ExportUI *x, Lang lang, Toast *t);
// Whether something is at path (a name already taken).
bool app_file_exists(const char *path);

#endif
