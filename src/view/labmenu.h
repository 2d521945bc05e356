// labmenu.h — the what-if lab's switches (W, or the "What if…" button): the scale,
// the mask fill, the mask kind, numbers or Δ, and undo / redo / reset / save, as
// rows of buttons. Plain state and pure geometry, no SDL: the window fills it
// from the session and feeds it keys and clicks (app/lab.c), chrome.c draws it.
#ifndef ATTNVIZ_LABMENU_H
#define ATTNVIZ_LABMENU_H

#include <stdbool.h>

#include "layout.h"

typedef enum LabRow { LAB_ROW_SCALE, LAB_ROW_FILL, LAB_ROW_MASK, LAB_ROW_SHOW, LAB_ROW_ACTIONS, LAB_ROWS } LabRow;
#define LAB_MAX_OPTS 4

// Options of each row, by column.
enum { LAB_SCALE_SQRT, LAB_SCALE_ONE, LAB_SCALE_CUSTOM };
enum { LAB_FILL_1E9, LAB_FILL_1E10, LAB_FILL_INF, LAB_FILL_OTHER };
enum { LAB_MASK_NONE, LAB_MASK_CAUSAL, LAB_MASK_PADDING, LAB_MASK_TENSOR };
enum { LAB_SHOW_VALUES, LAB_SHOW_DELTA };
enum { LAB_ACT_UNDO, LAB_ACT_REDO, LAB_ACT_RESET, LAB_ACT_SAVE };

typedef struct LabMenu {
    bool open;
    int row, col;                              // the focused button (arrows move it)
    int n_opts[LAB_ROWS];
    char opt[LAB_ROWS][LAB_MAX_OPTS][40];      // button texts, in the view's language
    bool enabled[LAB_ROWS][LAB_MAX_OPTS];
    int current[LAB_ROWS];                     // the option in force (drawn pressed), -1 none
} LabMenu;

// The options as they are for this trace (scale, fill and mask from the lesson's
// numbers) and lab state. Keeps open / row / col.
void labmenu_fill(LabMenu *m, const Trace *tr, bool delta, bool can_undo, bool can_redo, Lang lang);
// Moves the focus by (dx, dy) over enabled buttons.
void labmenu_move(LabMenu *m, int dx, int dy);

typedef struct LabMenuLayout {
    Rect box, title;
    Rect label[LAB_ROWS];
    Rect button[LAB_ROWS][LAB_MAX_OPTS];
    Rect hint;
    int px, px_title;
} LabMenuLayout;

// Geometry of the menu for L's output (centred over the heatmaps).
void labmenu_layout(const LabMenu *m, const Layout *L, LabMenuLayout *out);
// The button under (x, y): true with its row and column.
bool labmenu_hit(const LabMenu *m, const LabMenuLayout *ml, int x, int y, int *row, int *col);
// The "What if…" button left of the "Lessons…" button; false when there is no room.
bool lab_button_rect(const Layout *L, Rect *out);

#endif
