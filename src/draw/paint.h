// paint.h — the theme's colours and the primitives every pixel of a frame goes
// through: filled rectangles (with alpha), frames, lines, the masked look's
// hatching, the clip rectangle, text (measured, aligned, wrapped, ellipsized to
// a width) and retained RGBA images (large heatmaps). render.c, chrome.c,
// picker_draw.c, heatmap.c and the overlays draw only through these functions.
//
// The primitives draw nothing themselves: they append commands to the canvas's
// DrawList (drawlist.h) with every position resolved (text is measured with the
// fonts here). paint_flush replays the list with the canvas's backend and
// empties it: paint_sdl.c (an SDL_Renderer: the window, or a software renderer
// on a surface for PNG export and tests) or paint_vec.c (SVG, PDF; the renderer
// then only measures text). render_frame flushes at its end; whoever draws more
// on a canvas (chrome, the study box, the presenter window) flushes before it
// presents or reads the pixels.
#ifndef ATTNVIZ_PAINT_H
#define ATTNVIZ_PAINT_H

#include <SDL.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "colormap.h"
#include "drawlist.h"
#include "layout.h"
#include "text.h"

struct HeatmapCache;
struct PaintVec;

// Where a frame is drawn: the renderer, the fonts (and their text cache),
// optionally the cache of heatmap images (heatmap.h; NULL draws them as
// rectangles: the same pixels, slower for large lessons), the vector backend
// (NULL: the renderer draws) and the list the primitives append to. The caller
// owns all of them; the list is reused frame after frame.
typedef struct Canvas {
    SDL_Renderer *r;
    Fonts *fonts;
    struct HeatmapCache *heatmaps;
    struct PaintVec *vec; // NULL: draw with r; else SVG / PDF (r measures)
    DrawList *list;       // the commands recorded since the last paint_flush
} Canvas;

// Replays the commands recorded on cv with its backend and empties the list.
// False when the list ran out of memory (what was kept is drawn).
bool paint_flush(Canvas *cv);
// Vector backend: what follows is drawn in the r->w × r->h area at (r->x, r->y)
// of the page as if it were the whole output (a frame placed on a handout's
// page; paint_vec_viewport); NULL: the whole page again. What was recorded
// before is drawn first, where it was meant to be.
void paint_viewport(Canvas *cv, const Rect *r);
// The replayers (paint_sdl.c; paint_vec.h has the vector one).
void paint_sdl_replay(SDL_Renderer *r, Fonts *fonts, DrawList *dl);

// The interface's colours, in one table. Data colours (heatmaps, heads, the
// masked and NaN looks) come from colormap.h.
typedef struct Theme {
    Rgb bg;           // the page
    Rgb ink;          // text
    Rgb muted;        // secondary text, operators, labels
    Rgb accent;       // the current step, tab, result names, frames of dialogs
    Rgb accent_light; // past steps, the shape badge, the picker's selection
    Rgb slot;         // future steps, tabs, progress bars
    Rgb empty;        // a cell that has not appeared yet
    Rgb grid;         // the lines between cells: a 0 (white) cell keeps its edges
    Rgb narr_bg;      // narration and legend boxes
    Rgb hilite;       // what is being computed / read
    Rgb pad_ink;      // labels of padding keys (struck through)
    Rgb greyed;       // an invalid lesson in the picker
    Rgb error_ink;    // why a lesson cannot be opened
    Rgb invalid_bg;   // the picker's selection on an invalid lesson
    Rgb white;        // text on accent, dialog and tooltip boxes
    Rgb black;        // shadows and the scrim under dialogs (with alpha)
    Rgb tip_bg;       // tooltips
    Rgb toast_bg;     // the toast
    Rgb dot_here;     // the other stages' dots of the current step
    Rgb dot_other;    // the stages' dots of other steps
    Rgb changed;      // the corner mark of a cell an edit changed (outlined in white)
    Rgb selected;     // the frame of the cell selected for editing
} Theme;

extern const Theme THEME;

// base pixels at UI scale s, rounded, at least 1.
int paint_px(float s, float base);

// A w×h rectangle at (x, y) in colour col with opacity a (255 = replaces the
// pixels). Nothing for w ≤ 0 or h ≤ 0.
void paint_fill(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h);
// The outline of thickness t just inside the w×h rectangle at (x, y).
void paint_frame(Canvas *cv, Rgb col, uint8_t a, int x, int y, int w, int h, int t);
// A 1-px line from the centre of pixel (x1, y1) to that of (x2, y2).
void paint_line(Canvas *cv, Rgb col, uint8_t a, int x1, int y1, int x2, int y2);
// A right triangle in the top-right corner of the w×h box at (x, y), legs n px:
// the mark of a changed cell (white outline, THEME.changed inside).
void paint_corner_mark(Canvas *cv, int x, int y, int w, int n);
// The masked look's diagonal hatching inside the w×h box at (x, y) (nothing
// when it is smaller than 16 px either way), within the clip rectangle in force,
// which it leaves as it was; s is the UI scale (line thickness).
void paint_hatch(Canvas *cv, int x, int y, int w, int h, uint8_t a, float s);
// Drawing is limited to q from now on; NULL = the whole output.
void paint_clip(Canvas *cv, const Rect *q);
// Limits what follows to q as well (inside the clip in force) until paint_pop.
void paint_push(Canvas *cv, Rect q);
void paint_pop(Canvas *cv);
// The output's size in pixels.
void paint_size(Canvas *cv, int *w, int *h);
// The whole output in colour col (ignores the clip rectangle).
void paint_clear(Canvas *cv, Rgb col);

// ---- text (one line unless said; sizes are in pixels) -------------------------

// Size of s as it would be drawn.
void paint_text_size(Canvas *cv, FontFace face, int px, const char *s, int *w, int *h);
// s with its top-left (ALIGN_LEFT), top-centre or top-right at (x, y). Returns the width drawn.
int paint_text(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, int x, int y, TextAlign align,
               const char *s);
// s centred in the box (both axes).
void paint_text_centered(Canvas *cv, FontFace face, int px, Rgb col, uint8_t a, Rect box, const char *s);
// s wrapped to the box's width, the size lowered by 2 px at a time (down to
// min_px) until it fits the height; never drawn past the box. Returns the height used.
int paint_text_wrapped(Canvas *cv, FontFace face, int px, int min_px, Rgb col, uint8_t a, Rect box,
                       const char *s);
// Size of s wrapped at wrap_w (and at its '\n'); false for an empty string or
// when it cannot be drawn.
// Width of s on one line (measured, not drawn).
int paint_text_width(Canvas *cv, FontFace face, int px, const char *s);
// Height of s wrapped at wrap_w (measured, not drawn).
int paint_text_wrapped_height(Canvas *cv, FontFace face, int px, int wrap_w, const char *s);
bool paint_text_block_size(Canvas *cv, FontFace face, int px, int wrap_w, const char *s, int *w, int *h);
// s wrapped at wrap_w with its top-left at (x, y), whole.
void paint_text_block(Canvas *cv, FontFace face, int px, int wrap_w, Rgb col, uint8_t a, int x, int y,
                      const char *s);
// s itself when it is at most max_w wide at px; else its longest prefix (whole
// code points, fewer than n − 4 bytes) that fits with "…" after it, written
// into buf (n bytes); "…" alone when none fits. s itself when n < 8. (Widths
// are taken to grow with the prefix: it measures a few cuts, not every one.)
const char *paint_fit_text(Canvas *cv, FontFace face, int px, const char *s, int max_w, char *buf, size_t n);

// ---- retained images (heatmap.c) ------------------------------------------------


// Writes the top-left area of a locked image: rgba rows of `pitch` bytes, 4 bytes a pixel.
typedef void (*PaintPixelsFn)(unsigned char *rgba, int pitch, const void *ctx);

// Makes room for w×h pixels: an image too small is made anew (w and h rounded
// up to 64, never smaller than before) and its pixels are lost. Returns 1 when
// made anew, 0 when it was large enough, -1 when it cannot be made (img is then
// empty and the caller draws otherwise).
int paint_image_reserve(Canvas *cv, PaintImage *img, int w, int h);
// Rewrites the top-left w×h pixels with fill; false when the image cannot be written.
// (A command of cv's list still to be replayed that draws img is replayed first.)
bool paint_image_fill(Canvas *cv, PaintImage *img, int w, int h, PaintPixelsFn fill, const void *ctx);
// Copies the top-left w×h pixels, opaque and unscaled, with their top-left at (x, y).
void paint_image_draw(Canvas *cv, const PaintImage *img, int w, int h, int x, int y);
// The top-left w×h pixels scaled to fill dst (the presenter's small copy of a frame).
void paint_image_draw_scaled(Canvas *cv, const PaintImage *img, int w, int h, Rect dst);
void paint_image_free(PaintImage *img);
// The SDL backend's textures that hold an image (paint_sdl.c; paint.c's images call them):
// a w×h streaming RGBA32 texture (NULL when it cannot be made), its top-left w×h pixels
// written with fill (false when it cannot be locked), freed.
void *paint_sdl_texture_create(SDL_Renderer *r, int w, int h);
bool paint_sdl_texture_fill(void *tex, int w, int h, PaintPixelsFn fill, const void *ctx);
void paint_sdl_texture_free(void *tex);

#endif
