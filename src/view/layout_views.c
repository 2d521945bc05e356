// layout_views.c — the geometry of the views that are not a stage's panels: the model
// view (a map per layer and head, token labels) and the head view (lines from each query
// to each key), and hit-testing the model view's maps. (layout.c lays out a stage's
// panels and calls these for View.kind VIEW_MODEL / View.kind VIEW_HEADS.)
#include "layout.h"
#include "layout_inner.h"

#include <math.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// The widest token label of attention t (keys: its keys only) at px.
static int widest_token(const View *v, const Tensor *t, int px, bool keys)
{
    char lb[64];
    int w = 0;
    for (int i = 0; i < t->shape[3]; i++) w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_KEY, i, lb, sizeof lb), px));
    for (int i = 0; i < t->shape[2] && !keys; i++) w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_QUERY, i, lb, sizeof lb), px));
    return w;
}

// The model view's grid in L->area: a square map per layer and head, labels left and above
// (the layer and head, then the tokens).
void layout_place_model_view(Layout *L, const Trace *tr, const View *v)
{
    L->n_panels = 0, L->n_groups = 0, L->result_panel = -1;
    L->mv_layers = L->mv_heads = 0;
    for (int l = 0; l < TRACE_MAX_LAYERS && l < (tr->n_layers > 1 ? tr->n_layers : 1); l++) {
        L->mv_stage[l] = -1;
        for (int s = 0; s < tr->n; s++)
            if (tr->stages[s].id == STAGE_ATTN && (tr->stages[s].layer == l || (tr->n_layers <= 1 && l == 0))) L->mv_stage[l] = s;
        if (L->mv_stage[l] < 0) return; // (every layer has attn)
        L->mv_layers = l + 1;
    }
    L->mv_heads = imin(tr->n_heads > 0 ? tr->n_heads : 1, LAYOUT_MAX_TABS);
    const Tensor *t = &tr->stages[L->mv_stage[0]].t;
    const int n_tok = imax(t->shape[2], t->shape[3]), tw = imin(widest_token(v, t, L->px_small, false), (int)(80 * L->s));
    const int gap = imax(2, (int)(10 * L->s)), lh = (int)(L->px_small * 1.6f), th = L->px_small * 14 / 10;
    const int lw = (int)(90 * L->s) + tw + gap;
    const Rect a = L->area;
    int side = imin((a.w - lw - gap * L->mv_heads) / L->mv_heads, (a.h - lh - th - gap * L->mv_layers) / L->mv_layers);
    side = imax(side, 4);
    // the token labels: as large as a row is high (at most px_small; from 8 px every k-th,
    // a key's label no wider than its columns)
    const int pitch = imax(side / imax(n_tok, 1), 1);
    L->mv_tok_px = imin(L->px_small, imax(8, pitch * 9 / 10));
    L->mv_tok_step = imax((L->mv_tok_px * 11 / 10 + pitch - 1) / pitch, (widest_token(v, t, L->mv_tok_px, true) + pitch - 1) / pitch);
    L->mv_tok_step = imax(L->mv_tok_step, 1);
    const int gw = lw + L->mv_heads * (side + gap), gh = lh + th + L->mv_layers * (side + gap);
    const int x0 = a.x + imax(0, (a.w - gw) / 2), y0 = a.y + imax(0, (a.h - gh) / 2);
    for (int h = 0; h < L->mv_heads; h++) L->mv_col_label[h] = (Rect){x0 + lw + h * (side + gap), y0, side, lh};
    for (int l = 0; l < L->mv_layers; l++) {
        const int y = y0 + lh + th + l * (side + gap);
        L->mv_row_label[l] = (Rect){x0, y, lw - tw - 2 * gap, side};
        for (int h = 0; h < L->mv_heads; h++) L->mv_map[l][h] = (Rect){x0 + lw + h * (side + gap), y, side, side};
    }
}


// The head view in L->area: the query tokens in a column at the left third, the keys at
// the right third, a row each (at most the area's height: the rows shrink to 3 px).
void layout_place_head_view(Layout *L, const Trace *tr, const View *v)
{
    L->n_panels = 0, L->n_groups = 0, L->result_panel = -1;
    L->hv_stage = trace_find_near(tr, v->stage, "attn");
    if (L->hv_stage < 0) // (the model's own stages: the first layer's)
        for (int s = 0; s < tr->n && L->hv_stage < 0; s++)
            if (tr->stages[s].id == STAGE_ATTN) L->hv_stage = s;
    if (L->hv_stage < 0) return;
    const Tensor *t = &tr->stages[L->hv_stage].t;
    L->hv_layer = tr->stages[L->hv_stage].layer > 0 ? tr->stages[L->hv_stage].layer : 0;
    L->hv_n = t->shape[2];
    const Rect a = L->area;
    L->hv_dy = imax(3, imin((int)(34 * L->s), (a.h - L->col_label_h) / imax(1, imax(t->shape[2], t->shape[3]))));
    L->hv_y0 = a.y + L->col_label_h + L->hv_dy / 2;
    L->hv_xq = a.x + a.w / 3, L->hv_xk = a.x + a.w * 2 / 3;
}

bool layout_hit_model_view(const Layout *L, int x, int y, int *layer, int *head)
{
    for (int l = 0; l < L->mv_layers; l++)
        for (int h = 0; h < L->mv_heads; h++)
            if (rect_contains(L->mv_map[l][h], x, y)) return *layer = l, *head = h, true;
    return false;
}
