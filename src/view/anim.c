// anim.c — the timing of a stage's transition (see anim.h).
#include "anim.h"

#include "playback.h"

AnimFrame anim_frame(const Trace *tr, const View *v)
{
    AnimFrame a = {ANIM_FADE, ease_in_out_cubic(v->anim)};
    if (v->stage >= 0 && v->stage < tr->n) a.kind = recipe_of(tr->stages[v->stage].kind)->anim;
    return a;
}

float anim_cell_progress(AnimKind k, float e, int row, int c, int rows, int cols)
{
    switch (k) {
    case ANIM_ROWS:
    case ANIM_SOFTMAX:
        return ease_stagger(e, row, rows, 0.35f);
    case ANIM_CELLS:
        return ease_stagger(e, row * cols + c, rows * cols, 0.75f);
    case ANIM_SPLIT:
    case ANIM_CONCAT:
    case ANIM_MASK:
        return 1.0f;
    default:
        return e;
    }
}

bool anim_cell_shown(const Layout *L, const Trace *tr, const View *v, int p, int row, int col)
{
    if (p >= 0 && p < L->n_panels && tr->n > 0) { // a later step's cell: not computed yet; a key not cached yet
        LoopCell lc = recipe_loop_cell(tr, v, &L->spec[p], row, col < 0 ? 0 : col);
        if (lc == LOOP_ABSENT || (v->loop >= 0 && lc == LOOP_LATER)) return false;
    }
    if (p < 0 || p >= L->n_panels || !L->spec[p].result || v->anim >= 1.0f || tr->n == 0) return true;
    const PanelSpec *ps = &L->spec[p];
    AnimKind k = recipe_of(tr->stages[v->stage].kind)->anim;
    float e = ease_in_out_cubic(v->anim);
    if (col < 0) return anim_cell_progress(k, e, row, 0, ps->rows, 1) >= 1.0f; // the Σ: once its row is done
    return anim_cell_progress(k, e, row, col, ps->rows, ps->cols) >= 1.0f;
}

bool anim_computing_cell(AnimKind k, float e, const PanelSpec *ps, int *row, int *c)
{
    if (ps->rows <= 0 || ps->cols <= 0 || (k != ANIM_ROWS && k != ANIM_SOFTMAX && k != ANIM_CELLS)) return false;
    int n = k == ANIM_CELLS ? ps->rows * ps->cols : ps->rows;
    int idx = (int)(e * (float)n);
    if (idx >= n) idx = n - 1;
    *row = k == ANIM_CELLS ? idx / ps->cols : idx;
    *c = k == ANIM_CELLS ? idx % ps->cols : -1;
    return true;
}
