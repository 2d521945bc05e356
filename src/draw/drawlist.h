// drawlist.h — a frame as a list of draw commands. paint.h's primitives do not
// draw: they append commands here (positions already resolved: text measured,
// aligned and cropped where it goes), and one small replayer per backend draws
// the list — paint_sdl.c with an SDL_Renderer (the window, PNG exports, the
// tests' software surfaces) and paint_vec.c as SVG or PDF. Tests can read the
// commands where pixels are not the point.
//
// No SDL here: the list is plain data (a browser build, a test, a describer
// can walk it). The list keeps its memory between frames (draw_list_clear
// keeps the capacity), so a frame that has been drawn once allocates nothing.
//
//   DrawList dl;
//   draw_list_init(&dl);
//   Canvas cv = {renderer, fonts, heatmaps, NULL, &dl};
//   render_frame(&cv, ...);   // records, then paint_flush replays and clears
//   draw_list_free(&dl);
#ifndef ATTNVIZ_DRAWLIST_H
#define ATTNVIZ_DRAWLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geom.h" // Rect, Rgb

// The faces of the interface's fonts (text.h finds the files).
typedef enum FontFace { FONT_SANS, FONT_BOLD, FONT_MONO, FONT_FACE_COUNT } FontFace;
typedef enum TextAlign { ALIGN_LEFT, ALIGN_CENTER, ALIGN_RIGHT } TextAlign;

// A picture the backend keeps between frames (the SDL backend: a streaming RGBA32
// texture), w×h pixels of room. Zeroed = none yet; the owner frees it.
typedef struct PaintImage {
    void *handle;
    int w, h;
    bool mem;     // handle is w×h RGBA pixels in memory (the vector backend)
} PaintImage;


typedef enum DrawOp {
    DRAW_CLEAR, // the whole output in col (ignores the clip; the vector backend also drops it)
    DRAW_CLIP,  // the clip rectangle is r from now on (none: no clip)
    DRAW_PUSH,  // limit what follows to r as well (inside the clip in force) until DRAW_POP
    DRAW_POP,
    DRAW_FILL,  // r in col with opacity a
    DRAW_FRAME, // the outline of thickness t just inside r
    DRAW_LINE,  // from the centre of pixel (r.x, r.y) to that of (x2, y2), 1 px wide
    DRAW_TEXT,  // the text block (wrapped at wrap_w when > 0) with its top-left at (r.x, r.y);
                // r.w, r.h > 0: cropped to that box (the vector backend: r.w + px wide)
    DRAW_IMAGE, // the top-left x2 × y2 pixels of img, opaque, scaled to r (mostly 1:1)
} DrawOp;

typedef struct DrawCmd {
    DrawOp op;
    uint8_t a;     // opacity, 255 = replaces the pixels
    bool none;     // DRAW_CLIP: no clip rectangle
    Rgb col;
    Rect r;
    int x2, y2, t; // DRAW_LINE's end (t: 1); DRAW_FRAME's thickness; DRAW_IMAGE's source size (x2, y2)
    FontFace face; // DRAW_TEXT
    int px, wrap_w;
    uint32_t text; // offset of the NUL-terminated UTF-8 in DrawList.text
    const PaintImage *img; // DRAW_IMAGE (the image outlives the list's replay)
} DrawCmd;

#define DRAW_PUSH_MAX 16

// What a replayer keeps of the pushes still open when a flush ends (a flush may come
// between a push and its pop: an image refilled inside it): the clip before each.
typedef struct DrawClips {
    int depth;                       // pushes open
    bool on[DRAW_PUSH_MAX];          // a clip was in force before push k
    Rect before[DRAW_PUSH_MAX];      // and it was this
    bool empty[DRAW_PUSH_MAX];       // push k left nothing to draw in
} DrawClips;

typedef struct DrawList {
    DrawCmd *cmd;
    size_t n, cap;
    char *text; // every DRAW_TEXT's string, one after another
    size_t text_n, text_cap;
    bool oom;   // a command could not be kept (out of memory): the frame is incomplete
    DrawClips clips; // the SDL replayer's open pushes, from one flush to the next
} DrawList;

void draw_list_init(DrawList *dl);
void draw_list_free(DrawList *dl);
// Empties the list, keeping its memory (and clearing oom; pushes still open stay open).
void draw_list_clear(DrawList *dl);
// Appends c; false (and oom set) when there is no memory for it.
bool draw_list_push(DrawList *dl, DrawCmd c);
// Appends a DRAW_TEXT command for s (copied into the list).
bool draw_list_push_text(DrawList *dl, DrawCmd c, const char *s);
// The string of a DRAW_TEXT command.
const char *draw_list_str(const DrawList *dl, const DrawCmd *c);
// Whether a command still to be replayed draws img (an image must not be
// refilled or freed under it).
bool draw_list_uses_image(const DrawList *dl, const PaintImage *img);
// A short name of op ("fill", "text", …), for tests and dumps.
const char *draw_op_name(DrawOp op);

#endif
