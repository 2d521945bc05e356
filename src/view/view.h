// view.h — everything one frame depends on besides the trace: which stage,
// batch and head, how far its animation has run, palette, overlays, hover.
// The window fills it from events and playback; an export fills it directly.
// render_frame reads no clock: the same View gives the same pixels.
#ifndef ATTNVIZ_VIEW_H
#define ATTNVIZ_VIEW_H

#include <stdbool.h>

#include "colormap.h"
#include "lesson.h"

typedef struct View {
    int stage;           // index into Trace.stages
    int batch, head;     // which slice of (B, H, ...) tensors
    float anim;          // linear progress of the transition into `stage`: 0 start, 1 settled
    Palette palette;
    bool show_values;    // numbers printed in cells
    bool hover;          // mouse_x/y valid (renderer output pixels)
    int mouse_x, mouse_y;
    Lang lang;
    bool help;           // the help overlay listing every key
    bool playing;        // status bar shows play/pause and the speed
    float speed;         // playback speed factor (1 = normal)
    const char *toast;   // a short message at the bottom (NULL = none)
    float toast_alpha;   // 0..1
    const Lesson *lesson; // tokens, title, narration (may be NULL)
    const struct Picker *picker; // window only: the "Lessons…" button and, when open, the
                                 // lesson picker overlay (picker.h); NULL = neither
} View;

// A View on stage 0, settled, default palette, values on.
void view_init(View *v, const Lesson *ls, Lang lang);

#endif
