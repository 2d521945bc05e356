// labmenu.c — the what-if lab's switches (see labmenu.h).
#include "labmenu.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"
#include "picker.h"
#include "scene.h"

static void set(LabMenu *m, int row, int col, const char *text, bool enabled)
{
    snprintf(m->opt[row][col], sizeof m->opt[row][col], "%s", text);
    m->enabled[row][col] = enabled;
    if (col + 1 > m->n_opts[row]) m->n_opts[row] = col + 1;
}

void labmenu_fill(LabMenu *m, const Trace *tr, bool delta, bool can_undo, bool can_redo, Lang lang)
{
    memset(m->n_opts, 0, sizeof m->n_opts);
    char buf[40];
    float sq = sqrtf((float)tr->d_k);
    snprintf(buf, sizeof buf, "√d_k = %.6g", (double)sq); // (recipe_scale_text's rounding: the frame's)
    set(m, LAB_ROW_SCALE, LAB_SCALE_SQRT, buf, true);
    set(m, LAB_ROW_SCALE, LAB_SCALE_ONE, i18n_get(lang, "lab.scale_one"), true);
    bool custom = tr->scale != sq && tr->scale != 1.0f;
    if (custom) {
        char num[24];
        recipe_scale_text(tr, num, sizeof num);
        const char *args[] = {num};
        i18n_fmt(buf, sizeof buf, lang, "lab.scale_is", 1, args);
    }
    set(m, LAB_ROW_SCALE, LAB_SCALE_CUSTOM, custom ? buf : i18n_get(lang, "lab.scale_custom"), true);
    m->current[LAB_ROW_SCALE] = tr->scale == sq ? LAB_SCALE_SQRT : tr->scale == 1.0f ? LAB_SCALE_ONE : LAB_SCALE_CUSTOM;

    set(m, LAB_ROW_FILL, LAB_FILL_1E9, "−1e9", true);
    set(m, LAB_ROW_FILL, LAB_FILL_1E10, "−1e10", true);
    set(m, LAB_ROW_FILL, LAB_FILL_INF, "−∞", true);
    float f = tr->mask_fill;
    m->current[LAB_ROW_FILL] = f == -1e9f ? LAB_FILL_1E9 : f == -1e10f ? LAB_FILL_1E10 : isinf(f) && f < 0 ? LAB_FILL_INF : LAB_FILL_OTHER;
    if (m->current[LAB_ROW_FILL] == LAB_FILL_OTHER) {
        recipe_fill_text(f, buf, sizeof buf);
        set(m, LAB_ROW_FILL, LAB_FILL_OTHER, buf, false);
    }

    set(m, LAB_ROW_MASK, LAB_MASK_NONE, i18n_get(lang, "lab.mask_none"), true);
    set(m, LAB_ROW_MASK, LAB_MASK_CAUSAL, i18n_get(lang, "lab.mask_causal"), tr->len_q == tr->len_k);
    set(m, LAB_ROW_MASK, LAB_MASK_PADDING, i18n_get(lang, "lab.mask_padding"), true);
    static const int kind_col[] = {[MASK_NONE] = LAB_MASK_NONE, [MASK_CAUSAL] = LAB_MASK_CAUSAL,
                                   [MASK_TENSOR] = LAB_MASK_TENSOR, [MASK_KEY_PADDING] = LAB_MASK_PADDING};
    m->current[LAB_ROW_MASK] = tr->mask_kind >= 0 && tr->mask_kind <= MASK_KEY_PADDING ? kind_col[tr->mask_kind] : -1;
    if (tr->mask_kind == MASK_TENSOR) set(m, LAB_ROW_MASK, LAB_MASK_TENSOR, i18n_get(lang, "lab.mask_tensor"), false);

    set(m, LAB_ROW_SHOW, LAB_SHOW_VALUES, i18n_get(lang, "lab.show_values"), true);
    set(m, LAB_ROW_SHOW, LAB_SHOW_DELTA, i18n_get(lang, "lab.show_delta"), true);
    m->current[LAB_ROW_SHOW] = delta ? LAB_SHOW_DELTA : LAB_SHOW_VALUES;

    set(m, LAB_ROW_ACTIONS, LAB_ACT_UNDO, i18n_get(lang, "lab.undo"), can_undo);
    set(m, LAB_ROW_ACTIONS, LAB_ACT_REDO, i18n_get(lang, "lab.redo"), can_redo);
    set(m, LAB_ROW_ACTIONS, LAB_ACT_RESET, i18n_get(lang, "lab.reset"), can_undo);
    set(m, LAB_ROW_ACTIONS, LAB_ACT_SAVE, i18n_get(lang, "lab.save"), true);
    m->current[LAB_ROW_ACTIONS] = -1;
    assert(m->row >= 0 && m->row < LAB_ROWS); // labmenu_move wraps it; lab.c sets a hit row
    // the rows' buttons change with the trace (a tensor mask or an odd fill adds the last one)
    if (m->col < 0 || m->col >= m->n_opts[m->row]) m->col = 0;
}

void labmenu_move(LabMenu *m, int dx, int dy)
{
    if (dy) {
        m->row = (m->row + dy + LAB_ROWS) % LAB_ROWS;
        if (m->col >= m->n_opts[m->row]) m->col = m->n_opts[m->row] - 1;
    }
    for (int k = 0; dx && k < LAB_MAX_OPTS; k++) { // the next enabled button that way
        int n = m->n_opts[m->row];
        m->col = (m->col + dx + n) % n;
        if (m->enabled[m->row][m->col]) break;
    }
    if (m->col < 0) m->col = 0;
}

void labmenu_layout(const LabMenu *m, const Layout *L, LabMenuLayout *o)
{
    memset(o, 0, sizeof *o);
    float s = L->s;
    o->px = L->px_body;
    o->px_title = L->px_title;
    int pad = (int)lrintf(18 * s), gap = (int)lrintf(8 * s);
    int row_h = o->px * 2 + (int)lrintf(6 * s);
    int btn_w = 0;
    // buttons as wide as the widest text; the row labels ("Scale", "缩放") in a fixed column
    for (int r = 0; r < LAB_ROWS; r++)
        for (int c = 0; c < m->n_opts[r]; c++) {
            int w = layout_text_width_est(m->opt[r][c], o->px) + 2 * gap;
            if (w > btn_w) btn_w = w;
        }
    int label_w = (int)lrintf(150 * s);
    int bw = pad * 2 + label_w + LAB_MAX_OPTS * (btn_w + gap);
    if (bw > L->w - 2 * gap) { // narrow windows: smaller buttons
        btn_w = (L->w - 2 * gap - 2 * pad - label_w) / LAB_MAX_OPTS - gap;
        bw = L->w - 2 * gap;
    }
    int bh = pad * 2 + o->px_title * 2 + LAB_ROWS * (row_h + gap) + o->px * 2;
    o->box = (Rect){(L->w - bw) / 2, L->area.y + (L->area.h - bh) / 2, bw, bh};
    if (o->box.y < gap) o->box.y = gap;
    o->title = (Rect){o->box.x + pad, o->box.y + pad, bw - 2 * pad, o->px_title * 3 / 2};
    int y = o->title.y + o->px_title * 2;
    for (int r = 0; r < LAB_ROWS; r++, y += row_h + gap) {
        o->label[r] = (Rect){o->box.x + pad, y, label_w - gap, row_h};
        for (int c = 0; c < m->n_opts[r]; c++)
            o->button[r][c] = (Rect){o->box.x + pad + label_w + c * (btn_w + gap), y, btn_w, row_h};
    }
    o->hint = (Rect){o->box.x + pad, y, bw - 2 * pad, o->px * 3 / 2};
}

bool labmenu_hit(const LabMenu *m, const LabMenuLayout *ml, int x, int y, int *row, int *col)
{
    for (int r = 0; r < LAB_ROWS; r++)
        for (int c = 0; c < m->n_opts[r]; c++)
            if (rect_contains(ml->button[r][c], x, y)) {
                *row = r, *col = c;
                return true;
            }
    return false;
}

bool lab_button_rect(const Layout *L, Rect *out)
{
    Rect p;
    if (!picker_button_rect(L, &p)) return false;
    int bw = (int)lrintf(108 * L->s), gap = (int)lrintf(10 * L->s);
    if (L->status.w < 2 * bw + gap + (int)lrintf(160 * L->s)) return false; // (the status keeps "? help")
    *out = (Rect){p.x - gap - bw, p.y, bw, p.h};
    return true;
}
