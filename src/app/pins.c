// pins.c — pinned tooltips, spotlight and laser: the state and its mouse rules.
#include "pins.h"

#include <string.h>

void tools_init(PresentTools *t)
{
    memset(t, 0, sizeof *t);
    t->drag = -1;
}

static bool in_box(const PinBox *b, int x, int y)
{
    return b->w > 0 && x >= b->x && x < b->x + b->w && y >= b->y && y < b->y + b->h;
}

bool tools_press_box(PresentTools *t, int stage, int x, int y)
{
    for (int i = t->n - 1; i >= 0; i--) { // the last drawn is on top
        if (t->pin[i].stage != stage || !in_box(&t->box[i], x, y)) continue;
        t->drag = i;
        t->drag_dx = x - t->box[i].x, t->drag_dy = y - t->box[i].y;
        return true;
    }
    return false;
}

static void remove_pin(PresentTools *t, int i)
{
    memmove(&t->pin[i], &t->pin[i + 1], (size_t)(t->n - i - 1) * sizeof t->pin[0]);
    memmove(&t->box[i], &t->box[i + 1], (size_t)(t->n - i - 1) * sizeof t->box[0]);
    t->n--;
    t->box[t->n] = (PinBox){0, 0, 0, 0};
}

bool tools_toggle_pin(PresentTools *t, const Layout *L, int stage, int x, int y)
{
    int p, row, col;
    if (!layout_hit_cell(L, x, y, &p, &row, &col)) return false;
    tools_toggle_cell(t, stage, p, row, col);
    return true;
}

void tools_toggle_cell(PresentTools *t, int stage, int p, int row, int col)
{
    for (int i = 0; i < t->n; i++) {
        const Pin *q = &t->pin[i];
        if (q->stage == stage && q->panel == p && q->row == row && q->col == col) {
            remove_pin(t, i);
            return;
        }
    }
    if (t->n == PINS_MAX) remove_pin(t, 0);
    t->pin[t->n] = (Pin){stage, p, row, col, -1.0f, -1.0f};
    t->box[t->n] = (PinBox){0, 0, 0, 0};
    t->n++;
}

void tools_drag(PresentTools *t, int x, int y, int w, int h)
{
    // drag: -1 once X cleared the pins during the drag; w, h: a minimised window's size
    if (t->drag < 0 || t->drag >= t->n || w <= 0 || h <= 0) return;
    t->pin[t->drag].x = (float)(x - t->drag_dx) / (float)w;
    t->pin[t->drag].y = (float)(y - t->drag_dy) / (float)h;
}

void tools_release(PresentTools *t)
{
    t->drag = -1;
}

int tools_clear(PresentTools *t)
{
    int n = t->n;
    t->n = 0;
    t->drag = -1;
    memset(t->box, 0, sizeof t->box);
    return n;
}

void tools_overlays(PresentTools *t, Overlays *ov, float point_x, float point_y)
{
    ov->pins = t->pin;
    ov->n_pins = t->n;
    ov->pin_boxes = t->box;
    ov->spotlight = t->spotlight;
    ov->laser = t->laser;
    ov->point_x = point_x, ov->point_y = point_y;
}
