// presenter.h — the presenter window (--presenter, F5): a second top-level window
// for the teacher beside the audience window (the app's own, which shows the frame
// only). It shows what the audience sees, small; a preview of the next stage; the
// narration and the lesson's teacher's notes ("notes", lesson.h); the step list; the
// time since presenting started and the clock. Keys typed in it are the app's keys
// (they drive both windows); its own mouse events and its close button are its own.
// It has its own renderer, fonts and heatmap caches (textures belong to a renderer).
#ifndef ATTNVIZ_PRESENTER_H
#define ATTNVIZ_PRESENTER_H

#include <SDL.h>
#include <stdbool.h>
#include <stdio.h>

#include "pins.h"
#include "playback.h"
#include "trace.h"
#include "view.h"

typedef struct Presenter Presenter;

// Where the two windows go on one display of screen_w×screen_h (usable area; offsets
// from its corner): the audience window (aw×ah) on the left, the presenter window (pw×ph)
// right of it, the pair centred. The audience window keeps its size when the presenter
// window has at least PRESENTER_MIN_W beside it (the presenter's then narrower than pw
// if need be); else the presenter window is PRESENTER_MIN_W wide and the audience window
// takes the rest of the width at its own height (1280×720 alone: 832×720 beside 440×720),
// so the frame keeps its numbers and narration; below PRESENTER_AUDIENCE_MIN_W for it (a
// screen under 1248 px) the presenter window gets a third. Never on top of each other,
// never off the screen.
#define PRESENTER_MIN_W 440
#define PRESENTER_MIN_H 400
#define PRESENTER_AUDIENCE_MIN_W 800
typedef struct PresenterPlace {
    int ax, ay, aw, ah; // the audience window
    int px, py, pw, ph; // the presenter window
} PresenterPlace;
PresenterPlace presenter_place(int screen_w, int screen_h, int aw, int ah, int pw, int ph);

// Opens the presenter window w×h on the first display. With two displays or more,
// the audience window is moved to the second one and made fullscreen (desktop). With
// one (a laptop alone, or mirrored to a projector: SDL sees one display) the two are
// placed side by side (presenter_place), never on top of each other.
// NULL with one line in err on failure.
Presenter *presenter_create(SDL_Window *audience, const char *font_path, Lang lang, int w, int h, char *err,
                            size_t err_len);
// The same drawing into r (a software renderer on a surface: the benchmark and the
// tests), without a window; r stays the caller's and must outlive it.
Presenter *presenter_create_offscreen(SDL_Renderer *r, const char *font_path, Lang lang, char *err, size_t err_len);
void presenter_destroy(Presenter *p);
// Whether e belongs to the presenter window (mouse, wheel, window events): the app
// leaves those to presenter_event. Keys and text are the app's, from either window.
bool presenter_owns_event(const Presenter *p, const SDL_Event *e);
// Handles one of its events; returns true when the window asked to close.
bool presenter_event(Presenter *p, const SDL_Event *e);
// Another lesson is on screen: the cached images and texts of the old one go.
void presenter_flush(Presenter *p);
// Where the pointer is over the small frame, as a fraction of the frame: the laser and
// spotlight follow it on the audience window. False when it is not over it.
bool presenter_point(const Presenter *p, float *x, float *y);
// A cell clicked on the small frame (hit-tested in the frame as drawn there): the app
// pins its tooltip on the audience window. False: none since the last call.
bool presenter_take_pin(Presenter *p, int *stage, int *panel, int *row, int *col);
// A position dragged on the presenter window's scrub bar since the last call (the
// transition's progress, 0 … 1): the app holds the transition there. False: none.
bool presenter_take_scrub(Presenter *p, float *progress);
// The window's title in lang (L switches the language of both windows).
void presenter_set_lang(Presenter *p, Lang lang);
// The elapsed timer starts over (F5: presenting from the first stage).
void presenter_restart_clock(Presenter *p);
// What the presenter window needs from the app for one frame.
typedef struct PresenterFrame {
    const Trace *tr;        // the trace on screen (lab_trace)
    const View *v;          // the audience window's view
    const Overlays *ov;     // the audience's overlays (pins, spotlight): the small frame shows them
    int audience_w, audience_h; // the audience frame's size: the small frame has its shape
    bool black;             // the audience screen is black (.)
    bool edited;            // the lesson is edited: the notes were written for the original
    unsigned gen;           // changes when the numbers change in place (an edit): caches are flushed
    const char *title;      // the lesson's title as the audience window shows it
} PresenterFrame;
// Draws one frame of the presenter window (and presents it when it is a window). At least
// PRES_WIDE_MIN_W (960 px) wide: two columns (the copy, the narration and the notes; the
// next stage and the step list); narrower: one (the next stage in words, no step list).
// No text below 12 px (narration and notes 14); the narration and the notes are wrapped
// and scroll with the wheel over them ("▼ scroll" says there is more), whole lines only.
void presenter_draw(Presenter *p, const PresenterFrame *f);
// Draws f and writes what the window shows as JSON fields, without braces ("presenter":
// {width, height, layout, texts, min_text_px (the smallest text drawn), outside (texts
// drawn past the window), cropped (texts cut by their box), clock, title, now, scrub
// ([x, y, w, h]), narration and notes ({px, lines_shown, more_lines, box, text_area,
// text})}): --describe --presenter.
void presenter_describe(Presenter *p, const PresenterFrame *f, FILE *out);
#define PRESENTER_DESCRIBE_AUDIENCE_W 1280 // the audience frame --describe --presenter shows
#define PRESENTER_DESCRIBE_AUDIENCE_H 720
// The size the small copy of an audience frame of w×h is drawn at, then scaled down:
// the audience's own (up to 4096 px wide, 4K included; wider: halved until it is not).
void presenter_copy_size(int audience_w, int audience_h, int *w, int *h);
// Where the last frame drew the small copy of the audience's frame (output pixels).
bool presenter_copy_rect(const Presenter *p, int *x, int *y, int *w, int *h);
// The notes of v's stage (its own, else its step's), NULL when the lesson has none.
const char *presenter_notes(const Trace *tr, const View *v);

// ---- presenting: the window's state for it (F5, ".", the tools, projector mode) ----------
typedef struct Presenting {
    Presenter *pres;          // the presenter window (--presenter, F5), NULL when closed
    bool black;               // "." : the audience window shows black
    PresentTools tools;       // pinned tooltips, spotlight, laser (pins.h)
    Palette palette_before;   // M: the palette projector mode replaced, back when M turns it off
    int part_next;            // projector mode: the part the next stage starts with (← enters a result)
} Presenting;
void presenting_init(Presenting *p);
// Closes the presenter window.
void presenting_close(Presenting *p);
// F5: opens the presenter window beside audience (if it is not open), the screen shown
// again (not black) and the elapsed timer from 0; false (err) when it cannot open.
bool presenting_start(Presenting *p, SDL_Window *audience, const char *font_path, Lang lang, char *err, size_t n);
// An event of the presenter window's own (its mouse, its close button): true when it was.
bool presenting_event(Presenting *p, const SDL_Event *e);
// M: projector mode on / off in v; on, it starts with the high-contrast palette; off, the
// palette from before comes back (unless C chose another meanwhile).
void presenting_toggle_projector(Presenting *p, View *v);
// The tools into the overlays (the point: the pointer on the audience window of w×h,
// mouse_in, else on the presenter window's small frame; a cell clicked there pinned), a
// scrub dragged there into pb, and the scrub bar's state for the frame.
void presenting_overlays(Presenting *p, Overlays *ov, Playback *pb, const Trace *tr, int stage, bool mouse_in, int w,
                         int h);

#endif
