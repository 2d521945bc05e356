// pins.h — the presenter's tools on the audience window: pinned tooltips (click a cell
// to pin its derivation, several at once, dragged by their box, X clears them), the
// spotlight (H) and the laser dot (Ctrl+L). The state lives here; render_frame draws
// it from Overlays (view.h), so S-saves and the presenter window's copy show it too.
#ifndef ATTNVIZ_PINS_H
#define ATTNVIZ_PINS_H

#include <stdbool.h>

#include "layout.h"
#include "view.h"

typedef struct PresentTools {
    Pin pin[PINS_MAX];
    int n;
    PinBox box[PINS_MAX];   // where the audience frame drew each pin's box (render_frame fills it)
    int drag;               // the pin whose box is being dragged, -1 none
    int drag_dx, drag_dy;   // the pointer's offset in that box
    bool spotlight, laser;
} PresentTools;

void tools_init(PresentTools *t);
// A press at (x, y) on a pin's box (of this stage): starts dragging it. True when it was one.
bool tools_press_box(PresentTools *t, int stage, int x, int y);
// A click at (x, y): a cell of L pins its tooltip, or unpins it when pinned. With all
// PINS_MAX in use the oldest goes. False when (x, y) is on no cell.
bool tools_toggle_pin(PresentTools *t, const Layout *L, int stage, int x, int y);
// The same for cell (row, col) of panel p (a click on the presenter window's small frame).
void tools_toggle_cell(PresentTools *t, int stage, int p, int row, int col);
// The pointer at (x, y) of a w×h frame while dragging: the box follows.
void tools_drag(PresentTools *t, int x, int y, int w, int h);
void tools_release(PresentTools *t);
// X: every pin goes. Returns how many there were.
int tools_clear(PresentTools *t);
// Into ov: the pins, where to report their boxes, the spotlight and laser switches and
// the point (a fraction of the frame, < 0: none).
void tools_overlays(PresentTools *t, Overlays *ov, float point_x, float point_y);

#endif
