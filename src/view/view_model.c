// view_model.c — the model view (View.kind VIEW_MODEL, its row of viewkind.c): every layer ×
// head as a small map of its attention weights (BertViz's model view, with attnviz's
// numbers): the grid's geometry, a click on a map, the narration, the alt text and
// --describe's maps. src/draw/modelview.c paints it.
#include "viewkind.h"

#include "i18n.h"
#include "layout_inner.h"
#include "story.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// The widest token label of attention t (keys: its keys only) at px.
static int widest_token(const View *v, const Tensor *t, int px, bool keys)
{
    char lb[64];
    int w = 0;
    for (int i = 0; i < t->shape[3]; i++) w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_KEY, i, lb, sizeof lb), px));
    for (int i = 0; i < t->shape[2] && !keys; i++) w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_QUERY, i, lb, sizeof lb), px));
    // an encoder–decoder: its rows are the source's in the encoder, the target's in the decoder
    for (int i = 0; i < (v->lesson ? v->lesson->len_q : 0) && !keys && v->lesson->cfg.decoder_layers > 0; i++)
        w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_QUERY, i, lb, sizeof lb), px));
    for (int i = 0; i < (v->lesson ? v->lesson->len_k : 0) && !keys && v->lesson->cfg.decoder_layers > 0; i++)
        w = imax(w, layout_text_w(v, panel_axis_label(v, AXIS_KEY, i, lb, sizeof lb), px));
    return w;
}

// The model view's grid in L->area: a map per layer and head, labels left and above (the
// layer and head, then the tokens). A map is as tall as the height allows and uses the width
// (up to MAP_ASPECT times its height: cells wider than tall are still a heatmap): the subword
// model's 4 × 4 maps were 70 px squares at 1280×720, the width beside the grid empty.
enum { MAP_ASPECT = 4 };
void view_model_place(Layout *L, const Trace *tr, const View *v)
{
    ModelViewLayout *M = &L->view.model;
    L->n_panels = 0, L->n_groups = 0, L->result_panel = -1;
    viewkind_heading(L, v, VIEW_MODEL, 0);
    M->layers = M->heads = 0;
    for (int l = 0; l < TRACE_MAX_LAYERS && l < (tr->n_layers > 1 ? tr->n_layers : 1); l++) {
        M->stage[l] = -1;
        for (int s = 0; s < tr->n; s++)
            if ((tr->stages[s].id == STAGE_ATTN || tr->stages[s].id == STAGE_LIN_ATTN) && // (a linear layer: its matrix form)
                (tr->stages[s].layer == l || (tr->n_layers <= 1 && l == 0)))
                M->stage[l] = s;
        if (M->stage[l] < 0) return; // (every layer has attn or lin_attn)
        M->layers = l + 1;
    }
    M->heads = imin(tr->n_heads > 0 ? tr->n_heads : 1, LAYOUT_MAX_TABS);
    const Tensor *t = &tr->stages[M->stage[0]].t;
    int n_q = t->shape[2], n_k = t->shape[3];
    for (int l = 1; l < M->layers; l++) // (an encoder–decoder's blocks: their own lengths)
        n_q = imax(n_q, tr->stages[M->stage[l]].t.shape[2]), n_k = imax(n_k, tr->stages[M->stage[l]].t.shape[3]);
    // the token labels: as large as a row is high, never under LAYOUT_MIN_TEXT_PX (the subword
    // model's were 8 px), every k-th where a row or a column is thinner than its label (the
    // maps' height is known before the labels' width: the rows' labels at most 120·s wide)
    const int gap = imax(2, (int)(10 * L->s)), lh = (int)(L->px_small * 1.6f);
    const int th = L->px_small * 14 / 10;
    const Rect a = L->area;
    const int mh = imax((a.h - lh - th - gap * M->layers) / M->layers, 4);
    M->tok_px = imax(LAYOUT_MIN_TEXT_PX, imin(L->px_small, imin(mh, a.w) / imax(n_q, 1)));
    const int tw = imin(widest_token(v, t, M->tok_px, false), (int)(120 * L->s));
    const int lw = (int)(90 * L->s) + tw + gap;
    const int mw = imax(imin((a.w - lw - gap * M->heads) / M->heads, MAP_ASPECT * mh), 4);
    const int side_h = imin(mh, mw); // (never taller than wide)
    const int pitch_y = imax(side_h / imax(n_q, 1), 1), pitch_x = imax(mw / imax(n_k, 1), 1);
    M->tok_step = imax((M->tok_px + pitch_y - 1) / pitch_y, 1);
    M->tok_step_k = imax((widest_token(v, t, M->tok_px, true) + M->tok_px / 2 + pitch_x - 1) / pitch_x, 1);
    const int gw = lw + M->heads * (mw + gap), gh = lh + th + M->layers * (side_h + gap);
    const int x0 = a.x + imax(0, (a.w - gw) / 2), y0 = a.y + imax(0, (a.h - gh) / 2);
    for (int h = 0; h < M->heads; h++) M->col_label[h] = (Rect){x0 + lw + h * (mw + gap), y0, mw, lh};
    for (int l = 0; l < M->layers; l++) {
        const int y = y0 + lh + th + l * (side_h + gap);
        M->row_label[l] = (Rect){x0, y, lw - tw - 2 * gap, side_h};
        for (int h = 0; h < M->heads; h++) M->map[l][h] = (Rect){x0 + lw + h * (mw + gap), y, mw, side_h};
    }
}

// A map: its layer's attention stage and its head (the window opens its walkthrough).
bool view_model_hit(const Layout *L, int x, int y, int *stage, int *head)
{
    const ModelViewLayout *M = &L->view.model;
    for (int l = 0; l < M->layers; l++)
        for (int h = 0; h < M->heads; h++)
            if (rect_contains(M->map[l][h], x, y)) return *stage = M->stage[l], *head = h, true;
    return false;
}

// What each head looks at (story.h), and at a checkpoint which changed since the last.
const char *view_model_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    return story_model_view(tr, v, v->ckpt_prev, buf, n);
}

void view_model_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    char nl[12], nh[12], bb[12], fl[12], fh[12];
    snprintf(nl, sizeof nl, "%d", L->view.model.layers), snprintf(nh, sizeof nh, "%d", L->view.model.heads);
    snprintf(bb, sizeof bb, "%d", v->batch), snprintf(fl, sizeof fl, "%d", trace_layer_at(tr, v->stage));
    snprintf(fh, sizeof fh, "%d", v->head);
    const char *args[] = {nl, nh, bb, fl, fh};
    i18n_fmt(out, n, v->lang, "alt.model_view", 5, args);
}

// Each map: its layer, head and stage, and the key each query looks at most (the token
// labels: their size, and every how many rows and columns).
void view_model_describe(FILE *f, const Layout *L, const Trace *tr, const View *v)
{
    const ModelViewLayout *M = &L->view.model;
    fprintf(f, ", \"token_px\": %d, \"token_step\": %d, \"token_step_keys\": %d", M->tok_px, M->tok_step, M->tok_step_k);
    fputs(", \"maps\": [", f);
    for (int l = 0; l < M->layers; l++)
        for (int hd = 0; hd < M->heads; hd++) {
            const Tensor *t = &tr->stages[M->stage[l]].t;
            fprintf(f, "%s{\"layer\": %d, \"head\": %d, \"stage\": \"%s\", ", l || hd ? ", " : "", l, hd,
                    tr->stages[M->stage[l]].name);
            if (tr->sliding_window > 0) // a local/global pattern: the layer's kind
                fprintf(f, "\"window\": %d, ", tr->layer_sliding[l] ? tr->sliding_window : 0);
            static const char *const KIND[] = {"self", "encoder", "decoder_self", "cross"};
            if (tr->encoder_blocks > 0) // an encoder–decoder: the block's attention
                fprintf(f, "\"attention\": \"%s\", ", KIND[trace_block(tr, l)]);
            fputs("\"argmax\": [", f);
            const int Lq = t->shape[2], Lk = t->shape[3];
            for (int i = 0; i < Lq; i++) {
                const float *row = t->data + (((size_t)v->batch * t->shape[1] + (size_t)hd) * Lq + (size_t)i) * Lk;
                int best = 0;
                for (int j = 1; j < Lk; j++)
                    if (row[j] > row[best]) best = j;
                fprintf(f, "%s%d", i ? ", " : "", best);
            }
            fputs("]}", f);
        }
    fputs("]", f);
}
