// view_heads.c — the head view (View.kind VIEW_HEADS, its row of viewkind.c): the stage's
// layer's head View.head as lines from each query token to each key token, as strong as its
// weight (BertViz's head view): its geometry, narration, alt text and --describe's lines.
// src/draw/headview.c paints it.
#include "viewkind.h"

#include "i18n.h"
#include "json_out.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// The query tokens in a column at the left third of L->area, the keys at the right third,
// a row each (at most the area's height: the rows shrink to 3 px).
void view_heads_place(Layout *L, const Trace *tr, const View *v)
{
    HeadViewLayout *H = &L->view.heads;
    L->n_panels = 0, L->n_groups = 0, L->result_panel = -1;
    H->stage = trace_find_near(tr, v->stage, "attn");
    if (H->stage < 0) // (the model's own stages: the first layer's)
        for (int s = 0; s < tr->n && H->stage < 0; s++)
            if (tr->stages[s].id == STAGE_ATTN) H->stage = s;
    H->layer = H->stage >= 0 && tr->stages[H->stage].layer > 0 ? tr->stages[H->stage].layer : 0;
    viewkind_heading(L, v, VIEW_HEADS, H->layer);
    if (H->stage < 0) return;
    const Tensor *t = &tr->stages[H->stage].t;
    H->n = t->shape[2];
    const Rect a = L->area;
    H->dy = imax(3, imin((int)(34 * L->s), (a.h - L->col_label_h) / imax(1, imax(t->shape[2], t->shape[3]))));
    H->y0 = a.y + L->col_label_h + H->dy / 2;
    H->xq = a.x + a.w / 3, H->xk = a.x + a.w * 2 / 3;
}

const char *view_heads_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    (void)tr;
    i18n_fmt(buf, n, v->lang, "narr.head_view", 0, NULL);
    return buf;
}

void view_heads_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    (void)tr;
    char lb[12], hb[12], bb[12];
    snprintf(lb, sizeof lb, "%d", L->view.heads.layer), snprintf(hb, sizeof hb, "%d", v->head);
    snprintf(bb, sizeof bb, "%d", v->batch);
    const char *args[] = {lb, hb, bb};
    i18n_fmt(out, n, v->lang, "alt.head_view", 3, args);
}

// The lines: each query's keys with a weight from 0.01 (as drawn).
void view_heads_describe(FILE *f, const Layout *L, const Trace *tr, const View *v)
{
    const HeadViewLayout *H = &L->view.heads;
    if (H->stage < 0) return;
    const Tensor *t = &tr->stages[H->stage].t;
    const int Lq = t->shape[2], Lk = t->shape[3], nh = t->shape[1];
    fprintf(f, ", \"head_view\": {\"stage\": \"%s\", \"layer\": %d, \"head\": %d, \"lines\": [",
            tr->stages[H->stage].name, H->layer, v->head);
    bool first = true;
    for (int i = 0; i < Lq; i++)
        for (int j = 0; j < Lk; j++) {
            const float wt = t->data[((((size_t)v->batch * nh + (size_t)v->head) * Lq) + (size_t)i) * Lk + (size_t)j];
            if (!(wt >= 0.01f)) continue;
            fprintf(f, "%s[%d, %d, ", first ? "" : ", ", i, j);
            json_write_float(f, wt);
            fputc(']', f);
            first = false;
        }
    fputs("]}", f);
}
