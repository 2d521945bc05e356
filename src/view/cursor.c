// cursor.c — the cell cursor (see cursor.h).
#include "cursor.h"

#include "layout.h"

static int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

static bool has_cells(const Layout *L, int p)
{
    return p >= 0 && p < L->n_panels && L->spec[p].rows > 0 && L->spec[p].cols > 0;
}

bool cursor_start(CellCursor *c, const Layout *L)
{
    int p = has_cells(L, L->result_panel) ? L->result_panel : -1;
    for (int i = 0; i < L->n_panels && p < 0; i++)
        if (has_cells(L, i)) p = i;
    *c = (CellCursor){p >= 0, p < 0 ? 0 : p, 0, 0};
    return c->on;
}

void cursor_clamp(CellCursor *c, const Layout *L)
{
    if (!c->on) return;
    if (!has_cells(L, c->panel)) {
        int row = c->row, col = c->col;
        if (!cursor_start(c, L)) return;
        c->row = row, c->col = col;
    }
    const PanelSpec *ps = &L->spec[c->panel];
    c->row = clampi(c->row, 0, ps->rows - 1);
    c->col = clampi(c->col, 0, ps->cols - 1);
}

bool cursor_move(CellCursor *c, const Layout *L, int drow, int dcol)
{
    cursor_clamp(c, L);
    if (!c->on) return false;
    const PanelSpec *ps = &L->spec[c->panel];
    int r = clampi(c->row + drow, 0, ps->rows - 1), k = clampi(c->col + dcol, 0, ps->cols - 1);
    bool moved = r != c->row || k != c->col;
    c->row = r, c->col = k;
    return moved;
}

void cursor_next_panel(CellCursor *c, const Layout *L, int dir)
{
    cursor_clamp(c, L);
    if (!c->on) return;
    for (int i = 1; i <= L->n_panels; i++) {
        int p = ((c->panel + dir * i) % L->n_panels + L->n_panels) % L->n_panels;
        if (!has_cells(L, p)) continue;
        c->panel = p;
        cursor_clamp(c, L);
        return;
    }
}

bool cursor_pointed_cell(const Layout *L, const Overlays *ov, int *p, int *row, int *col)
{
    if (!ov) return false;
    if (ov->cursor) {
        if (!has_cells(L, ov->cursor_panel)) return false;
        const PanelSpec *ps = &L->spec[ov->cursor_panel];
        if (ov->cursor_row < 0 || ov->cursor_row >= ps->rows || ov->cursor_col < 0 || ov->cursor_col >= ps->cols)
            return false;
        *p = ov->cursor_panel, *row = ov->cursor_row, *col = ov->cursor_col;
        return true;
    }
    return ov->hover && layout_hit_cell(L, ov->mouse_x, ov->mouse_y, p, row, col);
}
