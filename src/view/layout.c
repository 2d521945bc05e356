// layout.c — the scene of each stage (which heatmaps) and its geometry.
//
// Screen, top to bottom: timeline of steps | batch/head tabs + status |
// header (name, shapes, formula) | heatmaps in a row with operators between |
// narration (left) and legend (right).
#include "layout.h"

#include <math.h>
#include <string.h>

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
static int even(float px) { return imax(8, 2 * (int)lrintf(px * 0.5f)); }

float panel_value(const PanelSpec *ps, int r, int c)
{
    return ps->data[(size_t)r * (size_t)ps->rs + (size_t)c * (size_t)ps->cs];
}

bool stage_has_heads(const Stage *st) { return st->t.rank == 4; }

// ---- scene: which slices a stage shows -------------------------------------

static bool key_side(const char *name)
{
    return !strcmp(name, "key_input") || !strcmp(name, "value_input") || !strcmp(name, "k_proj") ||
           !strcmp(name, "v_proj") || !strcmp(name, "k_heads") || !strcmp(name, "v_heads");
}

static bool key_columns(StageKind k)
{
    return k == STAGE_KIND_SCORES || k == STAGE_KIND_MASKED || k == STAGE_KIND_SOFTMAX ||
           k == STAGE_KIND_MASK;
}

// A 2-D slice of t at batch b, head h: (B,H,R,C) → (R,C); (B,R,C) → (R,C).
static void slice(PanelSpec *p, const Tensor *t, int b, int h)
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

static void transpose(PanelSpec *p)
{
    int t = p->rows;
    p->rows = p->cols, p->cols = t;
    t = p->rs, p->rs = p->cs, p->cs = t;
    AxisKind a = p->row_axis;
    p->row_axis = p->col_axis, p->col_axis = a;
    p->transposed = !p->transposed;
}

static PanelSpec *add(Layout *L, const Trace *tr, int stage, int b, int h, const char *op)
{
    if (L->n_panels >= LAYOUT_MAX_PANELS || stage < 0 || stage >= tr->n) return NULL;
    const Stage *st = &tr->stages[stage];
    if (!tensor_present(&st->t)) return NULL;
    PanelSpec *p = &L->spec[L->n_panels++];
    memset(p, 0, sizeof *p);
    slice(p, &st->t, b, h);
    p->stage = stage;
    p->row_axis = key_side(st->name) ? AXIS_KEY : AXIS_QUERY;
    p->col_axis = key_columns(st->kind) ? AXIS_KEY : AXIS_INDEX;
    if (st->kind == STAGE_KIND_MASK) p->row_axis = AXIS_QUERY;
    p->op_before = op;
    p->decimals = -1;
    if (st->kind == STAGE_KIND_MASK) p->mask = p->data; // 0 cells get the masked look
    if (st->kind == STAGE_KIND_MASKED) {
        int mi = trace_find(tr, "mask");
        if (mi >= 0 && st->kind == STAGE_KIND_MASKED) {
            const Tensor *m = &tr->stages[mi].t;
            PanelSpec tmp;
            slice(&tmp, m, b, 0);
            p->mask = tmp.data;
        }
    }
    return p;
}

static void add_weight(Layout *L, const Trace *tr, int stage, const char *op)
{
    const Stage *st = &tr->stages[stage];
    if (!st->weight || st->weight->rank != 2 || L->n_panels >= LAYOUT_MAX_PANELS) return;
    PanelSpec *p = &L->spec[L->n_panels++];
    memset(p, 0, sizeof *p);
    slice(p, st->weight, 0, 0);
    p->stage = stage;
    p->is_weight = true;
    p->row_axis = p->col_axis = AXIS_INDEX;
    p->op_before = op;
    p->decimals = -1;
    transpose(p); // (out, in) → Wᵀ (in, out): x·Wᵀ reads as row · column
}

static void set_scale(PanelSpec *p, const Trace *tr, Palette pal)
{
    const Stage *st = &tr->stages[p->stage];
    p->scale.palette = pal;
    if (!p->is_weight && (st->kind == STAGE_KIND_SOFTMAX || st->kind == STAGE_KIND_MASK)) {
        p->scale.sequential = true;
        p->scale.lo = 0.0f, p->scale.hi = 1.0f;
        return;
    }
    float m = 0.0f;
    for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
            if (p->mask && p->mask[(size_t)r * (size_t)p->cols + (size_t)c] == 0.0f) continue;
            float v = fabsf(panel_value(p, r, c));
            if (isfinite(v) && v > m) m = v;
        }
    p->scale.sequential = false;
    p->scale.lo = -(m > 0.0f ? m : 1.0f);
    p->scale.hi = m > 0.0f ? m : 1.0f;
}

// Operands / weight / result of the stage, per the operation it performs.
static void build_scene(Layout *L, const Trace *tr, const View *v)
{
    L->n_panels = 0;
    L->result_panel = -1;
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    int s = v->stage, b = v->batch, h = v->head;
    const int *op = st->operands;
    int H = tr->n_heads > 0 ? tr->n_heads : 1;
    int nh = imin(H, LAYOUT_MAX_HEAD_PANELS);
    PanelSpec *p;
    switch (st->kind) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
    case STAGE_KIND_FFN_HIDDEN:
    case STAGE_KIND_FFN_OUT:
        add(L, tr, op[0], b, h, "");
        add_weight(L, tr, s, "×");
        add(L, tr, s, b, h,
            st->kind == STAGE_KIND_FFN_OUT ? "→"
            : st->bias && tensor_present(st->bias) ? "+b =" : "=");
        break;
    case STAGE_KIND_ADD_NORM:
        add(L, tr, op[0], b, h, "");
        add(L, tr, op[1], b, h, "+");
        add(L, tr, s, b, h, "→");
        break;
    case STAGE_KIND_SPLIT:
        if ((p = add(L, tr, op[0], b, h, ""))) {
            p->head_blocks = H;
            p->block_cols = p->cols / H;
        }
        for (int k = 0; k < nh; k++) add(L, tr, s, b, k, k == 0 ? "→" : "");
        break;
    case STAGE_KIND_SCORES:
        add(L, tr, op[0], b, h, "");
        if ((p = add(L, tr, op[1], b, h, "×"))) transpose(p);
        add(L, tr, s, b, h, "=");
        break;
    case STAGE_KIND_MASKED:
        add(L, tr, op[0], b, h, "");
        if (op[1] >= 0) add(L, tr, op[1], b, h, "+");
        add(L, tr, s, b, h, "→");
        break;
    case STAGE_KIND_SOFTMAX:
        add(L, tr, op[0], b, h, "");
        if ((p = add(L, tr, s, b, h, "→"))) p->row_sums = true;
        break;
    case STAGE_KIND_WEIGHTED_SUM:
        add(L, tr, op[0], b, h, "");
        add(L, tr, op[1], b, h, "×");
        add(L, tr, s, b, h, "=");
        break;
    case STAGE_KIND_CONCAT:
        for (int k = 0; k < nh; k++) add(L, tr, op[0], b, k, "");
        if ((p = add(L, tr, s, b, h, "→"))) {
            p->head_blocks = H;
            p->block_cols = p->cols / H;
        }
        break;
    default: // inputs and the mask
        add(L, tr, s, b, h, "");
        break;
    }
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *q = &L->spec[i];
        q->result = !q->is_weight && q->stage == s;
        if (q->result && (L->result_panel < 0 || q->head == h)) L->result_panel = i;
        q->shown_rows = imin(q->rows, LAYOUT_MAX_CELLS);
        q->shown_cols = imin(q->cols, LAYOUT_MAX_CELLS);
        set_scale(q, tr, v->palette);
    }
}

// ---- numbers in cells: as many decimals as the cell allows -----------------

static int int_digits(float m)
{
    int d = 1;
    for (float x = 10.0f; m >= x && d < 12; x *= 10.0f) d++;
    return d;
}

static void fit_numbers(PanelSpec *p, int cell, float s)
{
    float m = fmaxf(fabsf(p->scale.lo), fabsf(p->scale.hi));
    if (p->mask) m = fmaxf(m, 9.9f); // masked cells print short labels like −1e9
    int d0 = m >= 1000.0f ? 0 : m >= 100.0f ? 1 : 2;
    if (p->mask == p->data) d0 = 0, m = 1.0f; // the 0/1 mask itself
    int min_px = imax(9, (int)lrintf(10.0f * s));
    int max_px = even(fminf(0.36f * (float)cell, 26.0f * s));
    p->decimals = -1;
    for (int d = d0; d >= 0; d--) {
        int chars = 1 + int_digits(m) + (d > 0 ? d + 1 : 0);
        if (chars < 3) chars = 3; // "NaN"
        int px = imin(max_px, (int)((float)(cell - 4) / (0.62f * (float)chars)));
        px &= ~1;
        if (d == 0 && m < 10.0f && p->mask != p->data) break; // 0 decimals would print 0.3 as "0": show no numbers
        if (px >= min_px) {
            p->decimals = d;
            p->px_cell = px;
            return;
        }
    }
}

// ---- geometry --------------------------------------------------------------

static void place_panels(Layout *L, const Trace *tr)
{
    Rect a = L->area;
    float s = L->s;
    int lab = L->row_label_w, cap = (int)(1.5f * (float)L->px_body), colh = L->col_label_h;
    int opw = (int)(2.2f * (float)L->px_op), opw_long = (int)(3.2f * (float)L->px_op);
#define OPW(p) ((p)->op_before[0] ? (strlen((p)->op_before) > 3 ? opw_long : opw) : (int)(10 * s))
    for (int attempt = 0; attempt < 2; attempt++) {
        int sum_cols = 0, max_rows = 1, fixed = 0;
        for (int i = 0; i < L->n_panels; i++) {
            PanelSpec *p = &L->spec[i];
            int extra = p->row_sums ? 1 : 0;
            sum_cols += p->shown_cols + extra;
            max_rows = imax(max_rows, p->shown_rows);
            fixed += lab + (i > 0 ? OPW(p) : 0);
            if (p->row_sums) fixed += (int)(6 * s);
        }
        int cw = sum_cols ? (a.w - fixed) / sum_cols : 0;
        int ch = (a.h - cap - colh) / max_rows;
        int c = imin(imin(cw, ch), (int)(76 * s));
        // the weight is shown "where space allows"
        int wi = -1;
        for (int i = 0; i < L->n_panels; i++)
            if (L->spec[i].is_weight) wi = i;
        if (attempt == 0 && wi >= 0 && c < (int)(34 * s)) {
            memmove(&L->spec[wi], &L->spec[wi + 1], sizeof L->spec[0] * (size_t)(L->n_panels - wi - 1));
            L->n_panels--;
            if (L->result_panel > wi) L->result_panel--;
            continue;
        }
        if (c < 1) c = 1;
        int total = fixed + sum_cols * c;
        int x = a.x + imax(0, (a.w - total) / 2);
        int block_h = cap + colh + max_rows * c;
        int y0 = a.y + imax(0, (a.h - block_h) / 2);
        for (int i = 0; i < L->n_panels; i++) {
            PanelSpec *p = &L->spec[i];
            int gap = i > 0 ? OPW(p) : 0;
            L->op[i] = (Rect){x, y0 + cap + colh, gap, max_rows * c};
            x += gap + lab;
            int pw = p->shown_cols * c, ph = p->shown_rows * c;
            L->panel[i] = (Rect){x, y0 + cap + colh, pw, ph};
            L->caption[i] = (Rect){x - lab, y0, lab + pw + (p->row_sums ? c + (int)(6 * s) : 0), cap};
            L->cell[i] = c;
            x += pw + (p->row_sums ? c + (int)(6 * s) : 0);
            fit_numbers(p, c, s);
        }
        break;
    }
#undef OPW
    (void)tr;
}

void layout_compute(Layout *L, const Trace *tr, const View *v, int w, int h)
{
    memset(L, 0, sizeof *L);
    L->w = w, L->h = h;
    float s = fminf((float)w / 1280.0f, (float)h / 720.0f);
    if (s < 0.5f) s = 0.5f;
    if (s > 4.0f) s = 4.0f;
    L->s = s;
    L->px_title = even(24 * s);
    L->px_body = even(20 * s);
    L->px_small = even(16 * s);
    L->px_formula = even(26 * s);
    L->px_op = even(34 * s);
    L->px_help = even(22 * s);
    int m = (int)lrintf(10 * s), gap = (int)lrintf(6 * s);

    // timeline: one slot per step present in the trace
    L->timeline = (Rect){m, m, w - 2 * m, (int)(48 * s)};
    for (int st = 0; st < STEP_COUNT; st++)
        if (trace_step_count(tr, (StepId)st) > 0) L->step_id[L->n_steps++] = (StepId)st;
    for (int i = 0; i < L->n_steps; i++) {
        int x0 = L->timeline.x + L->timeline.w * i / L->n_steps;
        int x1 = L->timeline.x + L->timeline.w * (i + 1) / L->n_steps;
        L->step_rect[i] = (Rect){x0 + 1, L->timeline.y, x1 - x0 - 2, L->timeline.h};
    }

    // tabs: batch and head selectors, status on the right
    int ty = L->timeline.y + L->timeline.h + gap, th = (int)(36 * s);
    L->tabs = (Rect){m, ty, w - 2 * m, th};
    int tw = (int)(40 * s), lw = (int)(86 * s), x = m;
    L->batch_label = (Rect){x, ty, lw, th};
    x += lw;
    L->n_batch_tabs = imin(tr->batch > 0 ? tr->batch : 1, LAYOUT_MAX_TABS);
    for (int i = 0; i < L->n_batch_tabs; i++, x += tw + 2) L->batch_tab[i] = (Rect){x, ty, tw, th};
    x += (int)(24 * s);
    L->head_label = (Rect){x, ty, lw, th};
    x += lw;
    L->n_head_tabs = imin(tr->n_heads > 0 ? tr->n_heads : 1, LAYOUT_MAX_TABS);
    for (int i = 0; i < L->n_head_tabs; i++, x += tw + 2) L->head_tab[i] = (Rect){x, ty, tw, th};
    x += (int)(16 * s);
    L->status = (Rect){x, ty, imax(0, w - m - x), th};

    // header: stage name + shapes, then the formula
    int hy = ty + th + gap;
    L->header = (Rect){m, hy, w - 2 * m, (int)(L->px_title * 1.4f + L->px_formula * 1.4f)};

    // bottom: narration and legend
    int bh = (int)(118 * s);
    int by = h - m - bh;
    int legend_w = imin((int)(330 * s), (w - 2 * m) / 3);
    L->narration = (Rect){m, by, w - 2 * m - legend_w - gap, bh};
    L->legend = (Rect){w - m - legend_w, by, legend_w, bh};

    // heatmaps in between
    int ay = L->header.y + L->header.h + gap;
    L->area = (Rect){m, ay, w - 2 * m, imax(0, by - gap - ay)};
    L->row_label_w = (int)(46 * s);
    L->col_label_h = (int)(L->px_small * 1.3f);
    build_scene(L, tr, v);
    place_panels(L, tr);
}

bool layout_cell_rect(const Layout *L, int p, int row, int col, Rect *out)
{
    if (p < 0 || p >= L->n_panels) return false;
    const PanelSpec *ps = &L->spec[p];
    if (row < 0 || col < 0 || row >= ps->shown_rows || col >= ps->shown_cols) return false;
    int c = L->cell[p];
    *out = (Rect){L->panel[p].x + col * c, L->panel[p].y + row * c, c, c};
    return true;
}

bool layout_hit_cell(const Layout *L, int x, int y, int *p, int *row, int *col)
{
    for (int i = 0; i < L->n_panels; i++) {
        if (!rect_contains(L->panel[i], x, y) || L->cell[i] <= 0) continue;
        *p = i;
        *row = (y - L->panel[i].y) / L->cell[i];
        *col = (x - L->panel[i].x) / L->cell[i];
        return *row < L->spec[i].shown_rows && *col < L->spec[i].shown_cols;
    }
    return false;
}

int layout_hit_step(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_steps; i++)
        if (rect_contains(L->step_rect[i], x, y)) return (int)L->step_id[i];
    return -1;
}

int layout_hit_batch(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_batch_tabs; i++)
        if (rect_contains(L->batch_tab[i], x, y)) return i;
    return -1;
}

int layout_hit_head(const Layout *L, int x, int y)
{
    for (int i = 0; i < L->n_head_tabs; i++)
        if (rect_contains(L->head_tab[i], x, y)) return i;
    return -1;
}
