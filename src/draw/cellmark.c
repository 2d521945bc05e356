// cellmark.c — frames on cells (see cellmark.h).
#include "cellmark.h"

// A frame of thickness t around [x, x + w) × [y, y + h), clipped to panel p (± t).
void cellmark_frame(Canvas *cv, const Layout *L, int p, int x, int y, int w, int h, int t, Rgb c)
{
    Rect q = L->panel[p];
    Rect clip = {q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t};
    Rect band = {x - t, y - t, w + 2 * t, h + 2 * t};
    if (!rect_overlap(clip, band)) return;
    paint_clip(cv, &clip);
    paint_frame(cv, c, 255, band.x, band.y, band.w, band.h, t);
    paint_clip(cv, NULL);
}

// The rectangle a highlight covers in panel p: a row, a column or one cell.
Rect cellmark_rect(const Layout *L, int p, Highlight h)
{
    const Rect q = L->panel[p];
    int x0 = h.col < 0 ? q.x : layout_col_x(L, p, h.col),
        x1 = h.col < 0 ? q.x + q.w : layout_col_x(L, p, h.col + (h.cols > 1 ? h.cols : 1));
    int y0 = h.row < 0 ? q.y : layout_row_y(L, p, h.row), y1 = h.row < 0 ? q.y + q.h : layout_row_y(L, p, h.row + 1);
    return (Rect){x0, y0, x1 - x0, y1 - y0};
}

// Frames what result cell (row, col) of panel res reads in every other panel (scene.h's
// rules); fills out[] with the framed rectangles (for placing a tooltip clear of them).
int cellmark_operands(Canvas *cv, const Layout *L, int res, int row, int col, int t, Rect *out, int max)
{
    int n = 0;
    for (int p = 0; p < L->n_panels; p++) {
        Highlight h;
        if (!scene_highlight(L, res, row, col, p, &h)) continue;
        Rect q = cellmark_rect(L, p, h);
        cellmark_frame(cv, L, p, q.x, q.y, q.w, q.h, t, THEME.hilite);
        if (n < max) out[n++] = (Rect){q.x - t, q.y - t, q.w + 2 * t, q.h + 2 * t};
    }
    return n;
}
