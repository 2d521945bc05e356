// panel.c — the functions of panel.h.
#include "panel.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expview.h"
#include "i18n.h"

bool rect_contains(Rect r, int x, int y)
{
    return x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h;
}

bool rect_overlap(Rect a, Rect b)
{
    return a.w > 0 && a.h > 0 && b.w > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
           a.y < b.y + b.h && b.y < a.y + a.h;
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

float panel_value(const PanelSpec *ps, int r, int c)
{
    assert(r >= 0 && r < ps->rows && c >= 0 && c < ps->cols); // a cell of the panel (callers loop over its rows, cols)
    const size_t at = (size_t)r * (size_t)ps->rs + (size_t)c * (size_t)ps->cs;
    if (ps->diff_b && ps->diff_dec >= 0) {
        const float a = ps->diff_a[at], b = ps->diff_b[at];
        if (isfinite(a) && isfinite(b)) return (float)panel_shown_difference(a, b, ps->diff_dec);
    }
    return ps->data[at];
}

double panel_shown_difference(float a, float b, int d)
{
    // a float times 10^d (d ≤ 8: 27 bits) is exact in a double, so rint rounds it as printf's
    // "%.*f" does (ties to even); the difference is a whole number of units of the last digit
    const double u = pow(10.0, d);
    return (rint((double)b * u) - rint((double)a * u)) / u;
}

bool stage_has_heads(const Stage *st) { return st->t.rank == 4; }

// ---- slices ----------------------------------------------------------------------

// A 2-D slice of t at batch b, head h: (B,H,R,C) → (R,C); (B,R,C) → (R,C).
void panel_slice(PanelSpec *p, const Tensor *t, int b, int h)
{
    int R = 1, C = 1;
    size_t off = 0;
    p->head = -1;
    if (t->rank == 4) {
        int B = t->shape[0], H = t->shape[1];
        R = t->shape[2], C = t->shape[3];
        b = imin(imax(b, 0), B - 1), h = imin(imax(h, 0), H - 1);
        off = ((size_t)b * (size_t)H + (size_t)h) * (size_t)R * (size_t)C;
        p->head = h;
    } else if (t->rank == 3) {
        R = t->shape[1], C = t->shape[2];
        b = imin(imax(b, 0), t->shape[0] - 1);
        off = (size_t)b * (size_t)R * (size_t)C;
    } else if (t->rank == 2) {
        R = t->shape[0], C = t->shape[1];
    } else if (t->rank == 1) {
        C = t->shape[0];
    }
    p->data = t->data + off;
    p->rows = R, p->cols = C, p->rs = C, p->cs = 1;
}

void panel_transpose(PanelSpec *p)
{
    int t = p->rows;
    p->rows = p->cols, p->cols = t;
    t = p->rs, p->rs = p->cs, p->cs = t;
    t = p->edit_rs, p->edit_rs = p->edit_cs, p->edit_cs = t;
    AxisKind a = p->row_axis;
    p->row_axis = p->col_axis, p->col_axis = a;
    p->transposed = !p->transposed;
}

AxisKind panel_key_axis(const Trace *tr, int layer)
{
    return trace_block(tr, layer) == BLOCK_DECODER_SELF ? AXIS_QUERY : AXIS_KEY;
}

AxisKind panel_query_axis(const Trace *tr, int layer)
{
    return trace_block(tr, layer) == BLOCK_ENCODER ? AXIS_KEY : AXIS_QUERY;
}

const char *panel_axis_label(const View *v, AxisKind a, int i, char *buf, size_t n)
{
    const Lesson *ls = v ? v->lesson : NULL;
    const char *t = NULL;
    if (ls && a == AXIS_VOCAB) t = lesson_vocab_label(ls, i);
    if (ls && ls->vocab && (a == AXIS_QUERY || a == AXIS_KEY)) t = lesson_token_label(ls, v->batch, i); // the batch's own
    if (t) return strcmp(t, " ") == 0 ? "\xE2\x90\xA3" : t; // a language model's token; the space token drawn ␣
    if (a == AXIS_EXP_ROW || a == AXIS_EXP_ROW2) return expview_row_label(v ? v->exp : NULL, a == AXIS_EXP_ROW2 && v && v->exp ? v->exp->row2 + i : i);
    if (a == AXIS_EXP_BLANK) return "";
    if (a == AXIS_EXP_SUM) {
        static const char *const KEY[] = {"ui.exp_sum_heads", "ui.exp_sum_rest", "ui.exp_sum_logit"};
        return i >= 0 && i < 3 ? i18n_get(v ? v->lang : LANG_EN, KEY[i]) : "?";
    }
    if (ls && a == AXIS_PATCH && ls->q_tokens && i + 1 < ls->len_q) return ls->q_tokens[i + 1]; // patch i + 1
    if (ls && a == AXIS_QUERY && ls->q_tokens && i < ls->len_q) return ls->q_tokens[i];
    if (ls && a == AXIS_KEY && ls->k_tokens && i < ls->len_k) return ls->k_tokens[i];
    snprintf(buf, n, "%d", i);
    return buf;
}
