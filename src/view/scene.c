// scene.c — a frame's panels from its stage's recipe (see scene.h).
//
// The recipes themselves (panels, formula, tooltip, derivation, narration per
// StageKind) are in the recipe_*.c family files (recipe.h). Colour scales are grouped by the tensor a panel shows: a view of a tensor
// (its heads, its concatenation, its masked copy) is coloured on the scale of
// the tensor itself, over the whole batch slice, so one value has one colour.
#include "scene.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edit.h"
#include "i18n.h"
#include "story.h"
#include "trace_ops.h"
#include "viewkind.h"







static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }




// ---- panels ---------------------------------------------------------------------------





















// ---- formulas -------------------------------------------------------------------------


















void scene_formula(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (s < 0 || s >= tr->n) return;
    recipe_of(tr->stages[s].kind)->formula(tr, s, lang, out, n);
}

// The numbers a formula uses, as a note after it (the recipe's).
static void formula_note(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    if (n) out[0] = '\0';
    const StageRecipe *r = recipe_of(tr->stages[s].kind);
    if (r->note) r->note(tr, s, lang, out, n);
}

// ---- colour scales ----------------------------------------------------------------------

// The tensor a panel's colours are measured on: a stage's own tensor, or for a
// view of another tensor (split heads, concat, masked scores) that tensor.
static int scale_root(const Trace *tr, int s)
{
    const Stage *st = &tr->stages[s];
    return recipe_of(st->kind)->view_of_operand && st->operands[0] >= 0 ? st->operands[0] : s;
}

// The largest finite |value| (and smallest positive value) of t's batch-b slice (all heads).
static void slice_range(const Tensor *t, int b, bool whole, float *absmax, float *minpos)
{
    size_t per = t->rank >= 3 && !whole ? t->size / (size_t)t->shape[0] : t->size;
    size_t off = t->rank >= 3 && !whole ? (size_t)imin(imax(b, 0), t->shape[0] - 1) * per : 0;
    float m = 0.0f, mp = INFINITY;
    for (size_t i = 0; i < per; i++) {
        float x = t->data[off + i];
        if (!isfinite(x)) continue;
        float a = fabsf(x);
        if (a > m) m = a;
        if (x > 0.0f && x < mp) mp = x;
    }
    *absmax = m, *minpos = mp;
}

bool scene_log_probs(const Trace *tr, const View *v)
{
    if (v->prob_scale == PROB_SCALE_LINEAR) return false;
    if (v->prob_scale == PROB_SCALE_LOG) return true;
    return tr->len_k > 32; // auto: long rows of near-uniform weights show structure on a log scale
}

// Is name one of the comma-separated names of a legend label ("b_Q, Q" has "Q")?
static bool label_has(const char *label, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = label;;) {
        if (!strncmp(p, name, n) && (p[n] == '\0' || p[n] == ',')) return true;
        if (!(p = strstr(p, ", "))) return false;
        p += 2;
    }
}

static bool st_is_norm(const Trace *tr, int s) { return recipe_of(tr->stages[s].kind)->norm_affine; }

static void build_groups(Layout *L, const Trace *tr, const View *v)
{
    // each panel's tensor (a view's root; an addend takes the result's) and its range
    // over the whole tensor, every batch: switching batch does not change what a colour means
    const void *key[LAYOUT_MAX_PANELS];
    float amax[LAYOUT_MAX_PANELS], mpos[LAYOUT_MAX_PANELS];
    ScaleKind kind_of[LAYOUT_MAX_PANELS];
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        const Stage *st = &tr->stages[p->stage];
        PanelSpec *pw = &L->spec[i];
        if (p->is_weight) { // parameters are small: measured here
            key[i] = p->is_bias ? st->bias : st->weight;
            slice_range(key[i], 0, true, &amax[i], &mpos[i]);
            kind_of[i] = SCALE_DIVERGING;
            pw->num_max = amax[i];
        } else {            // stage tensors: measured once by the core, per batch
            const Stage *rs = &tr->stages[scale_root(tr, p->stage)];
            key[i] = &rs->t;
            int B = rs->t.rank >= 3 ? imin(rs->t.shape[0], TRACE_MAX_BATCH) : 1;
            kind_of[i] = recipe_of(rs->kind)->scale;
            if (!tr->has_stats) { // a trace straight from attn_forward: measured here, every frame
                slice_range(&rs->t, 0, true, &amax[i], &mpos[i]);
                float bm, bp;
                slice_range(&rs->t, v->batch, false, &bm, &bp);
                pw->num_max = bm;
                continue;
            }
            amax[i] = 0.0f, mpos[i] = INFINITY;
            for (int b = 0; b < B; b++) amax[i] = fmaxf(amax[i], rs->absmax[b]), mpos[i] = fminf(mpos[i], rs->minpos[b]);
            pw->num_max = rs->absmax[imin(imax(v->batch, 0), B - 1)];
        }
    }
    int r = L->result_panel;
    // addends on the result's scale; not in the study mode, where the result's range is a
    // secret until answered: b_Q on its own scale before and after the reveal, not ±0.35 then ±35
    for (int i = 0; i < L->n_panels; i++)
        if (L->spec[i].addend && r >= 0 && !v->study) key[i] = key[r];
    // compared tensors share one scale (StageRecipe.compared)
    const StageRecipe *rec = r >= 0 ? recipe_of(tr->stages[L->spec[r].stage].kind) : NULL;
    int cs = rec && rec->compared && !L->spec[r].is_weight ? rec->compared(tr, L->spec[r].stage) : -1;
    if (cs >= 0 && !v->study) {
        const Stage *cr = &tr->stages[scale_root(tr, cs)];
        const void *rk = key[r];
        for (int i = 0; i < L->n_panels; i++)
            if (key[i] == rk && kind_of[i] == recipe_of(cr->kind)->scale) key[i] = &cr->t;
    }
    // a result that copies its operands' numbers side by side (MLA's keys and cache): one scale for all
    if (rec && rec->one_scale && !v->study)
        for (int i = 0; i < L->n_panels; i++)
            if (!L->spec[i].is_weight && kind_of[i] == kind_of[r]) key[i] = key[r];
    L->n_groups = 0;
    const void *gkey[LAYOUT_MAX_PANELS];
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *p = &L->spec[i];
        int g = 0;
        while (g < L->n_groups && gkey[g] != key[i]) g++;
        // a panel's base name (its title without the head) joins the group's label
        char base[64];
        if (p->is_weight) {
            snprintf(base, sizeof base, "%s", p->title);
        } else {
            snprintf(base, sizeof base, "%s", recipe_stage_text(tr, p->stage, "name", p->result, v->lang));
        }
        if (g == L->n_groups) {
            gkey[g] = key[i];
            ScaleGroup *G = &L->group[L->n_groups++];
            memset(G, 0, sizeof *G);
            snprintf(G->label, sizeof G->label, "%s", base);
            G->scale.palette = v->palette;
            // its range covers every panel coloured with it; a result the study mode
            // hides does not count (its range would tell of its values) unless it is alone
            float m = 0.0f, mp = INFINITY;
            ScaleKind kind = kind_of[i];
            bool shown = false;
            for (int j = 0; j < L->n_panels; j++) shown |= key[j] == key[i] && !(v->hide_result && L->spec[j].result);
            for (int j = 0; j < L->n_panels; j++)
                if (key[j] == key[i] && (!shown || !(v->hide_result && L->spec[j].result)))
                    m = fmaxf(m, amax[j]), mp = fminf(mp, mpos[j]);
            if (v->delta) { // differences: one diverging scale around 0 per tensor
                float a = m > 0.0f ? m : 1.0f;
                G->scale.lo = -a, G->scale.hi = a;
                char d[sizeof G->label];
                snprintf(d, sizeof d, "Δ %s", G->label);
                snprintf(G->label, sizeof G->label, "%s", d);
            } else if (kind == SCALE_MASK01) {
                G->mask01 = true;
                G->scale.sequential = true;
                G->scale.lo = 0.0f, G->scale.hi = 1.0f;
            } else if (kind == SCALE_PROBABILITY) {
                G->scale.sequential = true;
                G->scale.hi = 1.0f;
                G->scale.log = scene_log_probs(tr, v);
                if (G->scale.log) {
                    float lo = isfinite(mp) ? powf(10.0f, floorf(log10f(mp))) : 1e-3f;
                    G->scale.lo = fminf(fmaxf(lo, 1e-6f), 0.1f);
                } else {
                    G->scale.lo = 0.0f;
                }
            } else if (p->is_weight && !p->is_bias && st_is_norm(tr, p->stage)) {
                // γ scales each feature: 1 (no change) is white, deviations from it coloured
                float a = 0.0f;
                const Tensor *gt = key[i];
                for (size_t k = 0; k < gt->size; k++)
                    if (isfinite(gt->data[k])) a = fmaxf(a, fabsf(gt->data[k] - 1.0f));
                if (!(a > 0.0f)) a = 1.0f;
                G->scale.mid = 1.0f, G->scale.lo = 1.0f - a, G->scale.hi = 1.0f + a;
            } else {
                float a = m > 0.0f ? m : 1.0f;
                G->scale.lo = -a, G->scale.hi = a;
            }
        } else if (!label_has(L->group[g].label, base)) {
            ScaleGroup *G = &L->group[g];
            size_t len = strlen(G->label);
            if (len + strlen(base) + 3 < sizeof G->label) snprintf(G->label + len, sizeof G->label - len, ", %s", base);
        }
        p->group = g;
        p->scale = L->group[g].scale;
        // which special looks occur (the legend shows their swatches): only where they can
        // (a mask, NaN somewhere in the batch slice), and only until both are found
        const Stage *ds = &tr->stages[p->stage];
        int bb = ds->t.rank >= 3 ? imin(imax(v->batch, 0), ds->t.shape[0] - 1) : 0;
        bool nan_possible = p->is_weight || !tr->has_stats || ds->any_nan[bb];
        for (int rr = 0; rr < p->rows && (p->mask || p->neg_inf_masked || nan_possible); rr++) {
            for (int c = 0; c < p->cols; c++) {
                if ((p->mask && p->mask[(size_t)rr * (size_t)p->cols + (size_t)c] == 0.0f) ||
                    (p->neg_inf_masked && isinf(panel_value(p, rr, c)) && panel_value(p, rr, c) < 0)) {
                    // (a key not in the decoding cache yet is drawn empty, not masked)
                    p->any_masked |= recipe_loop_cell(tr, v, p, rr, c) != LOOP_ABSENT;
                    continue;
                }
                if (nan_possible && isnan(panel_value(p, rr, c))) p->any_nan = true;
            }
            if ((p->any_masked || !(p->mask || p->neg_inf_masked)) && (p->any_nan || !nan_possible)) break;
        }
    }
}

// ---- the what-if lab: marks of changed cells, edit targets --------------------------------

// Points each panel at the same slice of the original lesson's trace (v->ref).
static void set_refs(Layout *L, const Trace *tr, const View *v)
{
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *p = &L->spec[i];
        const Stage *st = &tr->stages[p->stage];
        int ri = trace_find(v->ref, st->name);
        const Stage *rs = ri >= 0 ? &v->ref->stages[ri] : NULL;
        const Tensor *mine = p->is_weight ? (p->is_bias ? st->bias : st->weight) : &st->t;
        const Tensor *theirs = !rs ? NULL : p->is_weight ? (p->is_bias ? rs->bias : rs->weight) : &rs->t;
        if (theirs && tensor_present(theirs) && theirs->size == mine->size)
            p->ref = theirs->data + (p->data - mine->data);
        else if (!rs && recipe_of(st->kind)->mask_look == MASK_LOOK_SELF) // a mask an edit added
            p->ref_one = true;
        else
            continue;
        for (int r = 0; r < p->rows && !p->any_changed; r++)
            for (int c = 0; c < p->cols && !p->any_changed; c++) p->any_changed = scene_cell_changed(p, r, c);
    }
}

bool scene_cell_changed(const PanelSpec *ps, int row, int col)
{
    if (!ps->ref && !ps->ref_one) return false;
    float was = ps->ref_one ? 1.0f : ps->ref[(size_t)row * (size_t)ps->rs + (size_t)col * (size_t)ps->cs];
    return trace_value_changed(was, panel_value(ps, row, col));
}

bool scene_edit_target(const Layout *L, const Trace *tr, const View *v, int p, int row, int col, int *tensor,
                       size_t *index)
{
    (void)tr;
    if (p < 0 || p >= L->n_panels || v->delta) return false;
    const PanelSpec *ps = &L->spec[p];
    if (row < 0 || col < 0 || row >= ps->rows || col >= ps->cols || ps->edit_tensor < 0) return false;
    *tensor = ps->edit_tensor; // the panel says what it edits (recipe_add_stage, recipe_add_param)
    *index = ps->edit_base + (size_t)row * (size_t)ps->edit_rs + (size_t)col * (size_t)ps->edit_cs;
    return true;
}

void scene_build(Layout *L, const Trace *tr, const View *v)
{
    L->n_panels = 0;
    L->result_panel = -1;
    L->n_groups = 0;
    L->input.rows = 0;
    L->formula[0] = L->formula_note[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    recipe_of(st->kind)->panels(L, tr, v);
    for (int i = 0; i < L->n_panels; i++) {
        PanelSpec *q = &L->spec[i];
        if (v->delta) { // a difference is a number everywhere (no masked look), and the
            q->mask = NULL; // operands' differences do not combine by the stage's operators
            q->op[0] = '\0';
            // but a score masked before or after the edit is masked (trace_diff: −∞)
            if (!q->is_weight && tr->stages[q->stage].kind == STAGE_KIND_MASKED) q->neg_inf_masked = true;
        }
        q->result = !q->is_weight && q->stage == v->stage && !(q->folded && q->fold_row != v->loop); // (S_{t−1}: read)
        q->two_decimals = !q->is_weight && tr->stages[q->stage].kind == STAGE_KIND_POS_BIAS;
        if (q->result && (L->result_panel < 0 || q->head == v->head)) L->result_panel = i;
        q->shown_rows = q->rows;
        q->shown_cols = q->cols;
        q->strip_dec = 0;
    }
    build_groups(L, tr, v);
    if (v->ref && !v->delta) set_refs(L, tr, v);
    L->input = L->n_panels > 0 ? L->spec[0] : (PanelSpec){0};
    scene_formula(tr, v->stage, v->lang, L->formula, sizeof L->formula);
    formula_note(tr, v->stage, v->lang, L->formula_note, sizeof L->formula_note);
    // what the frame leaves out or colours unusually, said next to the formula
    char extra[120] = "", a[16], b[16], c[16];
    int H = tr->n_heads, nh = imin(H, LAYOUT_MAX_HEAD_PANELS);
    AnimKind anim = recipe_of(st->kind)->anim;
    if ((anim == ANIM_SPLIT || anim == ANIM_CONCAT) && H > nh) {
        int k0 = imin(v->head / nh * nh, H - nh);
        snprintf(a, sizeof a, "%d", k0), snprintf(b, sizeof b, "%d", k0 + nh - 1), snprintf(c, sizeof c, "%d", H);
        const char *args[] = {a, b, c};
        i18n_fmt(extra, sizeof extra, v->lang, "fx.heads_shown", 3, args);
    } else if (recipe_of(st->kind)->scale == SCALE_PROBABILITY && scene_log_probs(tr, v)) {
        i18n_fmt(extra, sizeof extra, v->lang, "fx.log_scale", 0, NULL);
    }
    if (v->delta) { // "Δscores = scores(edited) − scores(original)", the stage's formula beside it
        char was[sizeof L->formula + 4];
        snprintf(was, sizeof was, "(%s)", L->formula);
        const char *sym = recipe_symbol(tr, v->stage, v->lang), *args[] = {sym};
        i18n_fmt(L->formula, sizeof L->formula, v->lang, "fx.delta", 1, args);
        snprintf(L->formula_note, sizeof L->formula_note, "%s", was);
    }
    if (v->loop >= 0 && !v->delta) { // one step of the loop: what it does, instead of the note
        char step[sizeof L->formula_note];
        recipe_loop_text(tr, v, step, sizeof step);
        if (step[0]) snprintf(L->formula_note, sizeof L->formula_note, "%s", step);
    }
    if (extra[0]) {
        size_t len = strlen(L->formula_note);
        snprintf(L->formula_note + len, sizeof L->formula_note - len, "%s%s", len ? "  " : "", extra);
    }
}

// ---- highlight rules --------------------------------------------------------------------

bool scene_highlight(const Layout *L, int r, int row, int col, int p, Highlight *out)
{
    if (r < 0 || r >= L->n_panels || p < 0 || p >= L->n_panels || p == r) return false;
    const PanelSpec *res = &L->spec[r], *ps = &L->spec[p];
    if (!res->result) return false;
    switch (ps->reads) {
    case READS_ROW:
        if (row >= ps->rows) return false;
        *out = (Highlight){row, -1, 1};
        return true;
    case READS_COL:
        if (col >= ps->cols) return false;
        *out = (Highlight){ps->vector ? 0 : -1, col, 1};
        return true;
    case READS_CELL:
        if (row >= ps->rows || col >= ps->cols) return false;
        *out = (Highlight){row, col, 1};
        return true;
    case READS_HEAD_SRC: {
        int c = res->head * res->cols + col;
        if (res->head < 0 || row >= ps->rows || c >= ps->cols) return false;
        *out = (Highlight){row, c, 1};
        return true;
    }
    case READS_TILE: { // one query row of a key block: what a running max / sum cell has seen last
        int bk = ps->tile_cols, c0 = col * bk;
        if (bk <= 0 || row >= ps->rows || c0 >= ps->cols) return false;
        *out = (Highlight){row, c0, imin(bk, ps->cols - c0)};
        return true;
    }
    case READS_HEAD_DST:
        if (ps->cols <= 0 || col / ps->cols != ps->head || row >= ps->rows) return false;
        *out = (Highlight){row, col % ps->cols, 1};
        return true;
    default:
        return false;
    }
}

// ---- key padding ------------------------------------------------------------------------


// ---- description ------------------------------------------------------------------------

const char *scene_scale_name(const ScaleGroup *g)
{
    if (g->mask01) return "mask";
    if (g->scale.sequential) return g->scale.log ? "log" : "sequential";
    return "diverging";
}

static void put(char *out, size_t n, size_t *len, const char *s)
{
    if (*len + 1 >= n) return;
    size_t k = strlen(s);
    if (k > n - 1 - *len) k = n - 1 - *len;
    memcpy(out + *len, s, k);
    *len += k;
    out[*len] = '\0';
}

static void num_text(float x, char *buf, size_t n)
{
    if (fabsf(x) != 0.0f && (fabsf(x) < 0.01f || fabsf(x) >= 1e5f))
        snprintf(buf, n, "%.2g", (double)x);
    else
        snprintf(buf, n, "%.2f", (double)x);
}

void scene_alt(const Layout *L, const Trace *tr, const View *v, char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return;
    const Stage *st = &tr->stages[v->stage];
    char line[400], a[96], b[32], c[32], d[32];
    snprintf(a, sizeof a, "%d", v->batch);
    snprintf(b, sizeof b, "%d", v->head);
    const char *args0[] = {recipe_stage_text(tr, v->stage, "title", true, v->lang), L->formula, a, b};
    i18n_fmt(line, sizeof line, v->lang, stage_has_heads(st) || recipe_of(st->kind)->anim == ANIM_CONCAT ? "alt.intro_head" : "alt.intro",
             4, args0);
    put(out, n, &len, line);
    const char *sep = v->lang == LANG_ZH ? "" : " "; // between sentences: a space, none in Chinese
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        const ScaleGroup *g = &L->group[p->group];
        snprintf(a, sizeof a, "%d×%d", p->rows, p->cols);
        num_text(g->scale.lo, b, sizeof b);
        num_text(g->scale.hi, c, sizeof c);
        snprintf(d, sizeof d, "%d", i + 1);
        const char *args[] = {p->title, a, b, c, d};
        i18n_fmt(line, sizeof line, v->lang,
                 g->mask01 ? "alt.panel_mask" : p->result ? "alt.panel_result" : "alt.panel", 5, args);
        put(out, n, &len, sep);
        put(out, n, &len, line);
    }
    // masked cells filled with the fill (the mask's own zeros are described with its panel)
    bool masked = false, nan = false;
    for (int i = 0; i < L->n_panels; i++) {
        masked |= L->spec[i].any_masked && !L->group[L->spec[i].group].mask01;
        nan |= L->spec[i].any_nan;
    }
    if (masked) {
        recipe_fill_text(recipe_masked_value(tr, v->stage), a, sizeof a);
        const char *args[] = {a};
        i18n_fmt(line, sizeof line, v->lang, "alt.masked", 1, args);
        put(out, n, &len, sep);
        put(out, n, &len, line);
    }
    if (nan) {
        put(out, n, &len, sep);
        put(out, n, &len, i18n_get(v->lang, "alt.nan"));
    }
}

// The generic narration that is true for this lesson: without a bias, without
// scaling, with no mask, with −∞ or a small fill (a suffix of its narr.* key).
static const char *narration_variant(const Trace *tr, int s)
{
    const StageRecipe *r = recipe_of(tr->stages[s].kind);
    return r->narration ? r->narration(tr, s) : "";
}

const char *scene_step_key(const Trace *tr, StepId step, char *buf, size_t n)
{
    // the scores step is labelled by what it computes: QKᵀ/√dₖ, QKᵀ/s or QKᵀ
    const char *suffix = "";
    if (step == STEP_SCORES)
        suffix = tr->scale == 1.0f ? "_noscale" : !recipe_scale_is_sqrt_dk(tr) ? "_custom" : tr->alibi ? "_alibi" : "";
    if (step == STEP_ADD_NORM && tr->norm_first) suffix = "_prenorm"; // the residual sum alone: its norm comes later
    snprintf(buf, n, "step.%s%s", step_name(step), suffix);
    return buf;
}

// The lesson whose text narrates v (NULL: the narration is generated): an edited lesson's
// text was written about the original numbers, so the narration is the generated one,
// true for the numbers on screen (and text typed in: the lesson's narration is about its
// own input; or weights of another checkpoint: the lesson's text is about the trained ones)
static const Lesson *narration_lesson(const View *v)
{
    return v->edited || (v->lesson && (v->lesson->typed || v->lesson->other_weights)) ? NULL : v->lesson;
}

int scene_stage_head(const Trace *tr, const View *v, int chosen)
{
    if (chosen >= 0) return chosen;
    if (v->lesson && v->lesson->other_weights && !v->edited && v->ckpt_prev && v->stage >= 0 && v->stage < tr->n &&
        viewkind_of(v->kind)->narrated_head) { // a checkpoint: the head that changed most (its narration's)
        const int h = story_changed_head(tr, v, v->ckpt_prev, tr->stages[v->stage].layer);
        return h >= 0 ? h : v->head;
    }
    const Lesson *ls = narration_lesson(v);
    int h = ls && viewkind_of(v->kind)->narrated_head ? lesson_stage_head(ls, tr, v->stage) : -1;
    return h >= 0 && h < tr->n_heads ? h : v->head;
}

void scene_narration_stages(const Trace *tr, const View *v, int *from, int *to)
{
    *from = 0, *to = tr->n;
    if (viewkind_of(v->kind)->narration_fixed && v->stage >= 0 && v->stage < tr->n) *from = v->stage, *to = v->stage + 1;
}

const char *scene_narration(const Trace *tr, const View *v, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (v->stage < 0 || v->stage >= tr->n) return buf;
    const Stage *st = &tr->stages[v->stage];
    if (v->delta) {
        i18n_fmt(buf, n, v->lang, "narr.delta", 0, NULL);
        return buf;
    }
    const ViewKindInfo *vk = viewkind_of(v->kind);
    if (vk->narration) return vk->narration(tr, v, buf, n); // a glance's own
    const Lesson *ls = narration_lesson(v);
    const char *text = ls ? lesson_stage_text(ls, tr, v->stage, v->lang) : NULL;
    char lead[240]; // one step of a loop: the narration starts with that step's numbers
    recipe_loop_narration(tr, v, lead, sizeof lead);
    if (text && lead[0]) {
        snprintf(buf, n, "%s %s", lead, text);
        return buf;
    }
    if (text) return text;
    const StageRecipe *r = recipe_of(st->kind);
    if (r->story && r->story(tr, v, buf, n)) return buf; // written from the numbers
    char key[64], a[16], b[16], c[16], d[16], e[16], f[16];
    snprintf(key, sizeof key, "narr.%s%s", STAGE_INFO[st->id].name, narration_variant(tr, v->stage));
    snprintf(a, sizeof a, "%d", recipe_of(st->kind)->anim == ANIM_SPLIT && st->operands[0] >= 0 ? tr->stages[st->operands[0]].t.shape[2]
                                                                                     : tr->d_model);
    snprintf(b, sizeof b, "%d", tr->n_heads);
    snprintf(c, sizeof c, "%d", st->t.rank == 4 ? st->t.shape[3] : tr->d_k);
    // {4}: the K/V heads; {5}: the sliding window or a bottom-right causal mask's offset
    // Lk − Lq (or the query heads sharing a K/V head)
    snprintf(d, sizeof d, "%d", tr->n_kv_heads > 0 ? tr->n_kv_heads : tr->n_heads);
    snprintf(e, sizeof e, "%d", recipe_of(st->kind)->mask_look == MASK_LOOK_SELF
                                    ? (st->id == STAGE_WINDOW_MASK ? tr->sliding_window
                                       : tr->mask_kind == MASK_CAUSAL ? tr->causal_offset : tr->window)
                                : tr->n_heads / (tr->n_kv_heads > 0 ? tr->n_kv_heads : tr->n_heads));
    snprintf(f, sizeof f, "%d", tr->sink_tokens); // {6}: StreamingLLM's kept first tokens
    const char *args[] = {a, b, c, d, e, f};
    size_t len = 0;
    if (lead[0]) len = (size_t)snprintf(buf, n, "%s ", lead), len = len < n ? len : n;
    if (v->lesson && v->lesson->other_weights && !v->edited) { // a checkpoint of training: its numbers first
        char generic[LESSON_MAX_TEXT];
        i18n_fmt(generic, sizeof generic, v->lang, key, 6, args);
        return story_checkpoint(tr, v, v->ckpt_prev, generic, buf, n);
    }
    i18n_fmt(buf + len, n - len, v->lang, key, 6, args);
    return buf;
}

// ---- derivations: the recipe's -----------------------------------------------------------

static int deriv_width(const Trace *tr, int s)
{
    const StageRecipe *r = recipe_of(tr->stages[s].kind);
    return r->deriv_width ? r->deriv_width(tr, s) : 0;
}

bool scene_has_derivation(const Trace *tr, int s)
{
    if (s < 0 || s >= tr->n) return false;
    int w = deriv_width(tr, s);
    // long sequences keep their room for the heatmaps (the tooltip still derives a cell)
    return w > 0 && w <= SCENE_DERIV_MAX_VALUES && tr->len_q <= 32 && tr->len_k <= 32;
}

static double deriv_shown(const Derivation *d, const DerivLine *l, int j, double *half);

void scene_derivation_text(const Derivation *d, int i, int j, char *buf, size_t n)
{
    const DerivLine *l = &d->line[i];
    if (l->n == 1) j = 0;
    double x = (double)l->v[j];
    if (l->rel == DERIV_SUB && isfinite(x)) { // the difference of the two numbers as written
        double h, a = deriv_shown(d, &d->line[l->a], j, &h), b = deriv_shown(d, &d->line[l->b], 0, &h);
        if (isfinite(a - b)) x = a - b;
    }
    if (!isfinite(x) || fabs(x) >= 1e5) { // ∞, NaN, a masked score's −1e9
        tip_number_dec(l->v[j], l->dec, buf, n);
        return;
    }
    // fixed point, as the cells write numbers: a line's values share their last digit
    snprintf(buf, n, "%.*f", l->dec, x == 0.0 ? 0.0 : x);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) memmove(buf, buf + 1, strlen(buf)); // "-0.00"
}

// Element j of line l as written (its decimals), and half a unit of its last digit;
// a non-finite one as it is (half 0).
static double deriv_shown(const Derivation *d, const DerivLine *l, int j, double *half)
{
    char b[48];
    double v, lo, hi;
    if (l->n == 1) j = 0;
    scene_derivation_text(d, (int)(l - d->line), j, b, sizeof b);
    if (!isfinite(l->v[j]) || !tip_eval(b, &v, &lo, &hi)) {
        *half = 0.0;
        return (double)l->v[j];
    }
    *half = (hi - lo) / 2.0;
    return v;
}

static bool deriv_uses_b(DerivRel r)
{
    return r == DERIV_PRODUCT || r == DERIV_ADD || r == DERIV_SUB || r == DERIV_DIV || r == DERIV_VAR || r == DERIV_NORM ||
           r == DERIV_RMS;
}

// Whether element j of line i follows from the lines it reads, all as written.
// An operand as written; *mag: the largest read, for float32's own rounding of them.
static double deriv_op(const Derivation *d, const DerivLine *l, int j, double *mag)
{
    double h, x = deriv_shown(d, l, j, &h);
    *mag = fmax(*mag, fabs(x));
    return x;
}
#define SHOWN(L_, J_) deriv_op(d, (L_), (J_), &mag)
static bool deriv_holds(const Derivation *d, int i, int j)
{
    const DerivLine *l = &d->line[i], *A = &d->line[l->a], *B = &d->line[l->b], *C = &d->line[l->c];
    double hw, want = deriv_shown(d, l, j, &hw), comp = 0.0, mag = 0.0;
    switch (l->rel) {
    case DERIV_GIVEN: return true;
    case DERIV_PRODUCT: comp = SHOWN(A, j) * SHOWN(B, j); break;
    case DERIV_SUM:
    case DERIV_MEAN:
        for (int k = 0; k < A->n; k++) comp += SHOWN(A, k);
        if (l->rel == DERIV_MEAN) comp /= A->n;
        break;
    case DERIV_VAR: {
        double m = SHOWN(B, 0);
        for (int k = 0; k < A->n; k++) {
            double x = SHOWN(A, k) - m;
            comp += x * x;
        }
        comp /= A->n;
        break;
    }
    case DERIV_MAX:
        comp = -INFINITY;
        for (int k = 0; k < A->n; k++) {
            double x = SHOWN(A, k);
            if (x > comp || isnan(x)) comp = x;
        }
        break;
    case DERIV_DIV_K: comp = SHOWN(A, j) / l->k; break;
    case DERIV_ADD_K: comp = SHOWN(A, j) + l->k; break;
    case DERIV_ADD: comp = SHOWN(A, j) + SHOWN(B, j); break;
    case DERIV_SUB: comp = SHOWN(A, j) - SHOWN(B, 0); break;
    case DERIV_EXP: comp = exp(SHOWN(A, j)); break;
    case DERIV_DIV: comp = SHOWN(A, j) / SHOWN(B, 0); break;
    case DERIV_NORM: comp = (SHOWN(A, j) - SHOWN(B, 0)) / sqrt(SHOWN(C, 0) + l->k); break;
    case DERIV_MEANSQ:
        for (int k = 0; k < A->n; k++) comp += SHOWN(A, k) * SHOWN(A, k);
        comp /= A->n;
        break;
    case DERIV_RMS: comp = SHOWN(A, j) / sqrt(SHOWN(B, 0) + l->k); break;
    }
    if (isnan(comp) || isnan(want)) return isnan(comp) && isnan(want);
    if (isinf(comp) || isinf(want)) return comp == want;
    // within half the last digit written, and float32's rounding of what the core computed
    double flt = 4.0 * (double)FLT_EPSILON * fmax(mag, fmax(fabs(want), fabs(comp)));
    return fabs(comp - want) <= hw * (1.0 + 1e-9) + flt;
}
#undef SHOWN

static bool deriv_line_holds(const Derivation *d, int i)
{
    for (int j = 0; j < d->line[i].n; j++)
        if (!deriv_holds(d, i, j)) return false;
    return true;
}

// Each line's decimals: the result's as the tooltip's (TIP_DECIMALS); the lines a line
// reads get more until it follows from them as written (from the last line up; a max
// has its row's decimals).
static void deriv_fit(Derivation *d)
{
    for (int i = 0; i < d->n_lines; i++) d->line[i].dec = TIP_DECIMALS;
    for (int pass = 0; pass < 4; pass++) {
        bool changed = false;
        for (int i = d->n_lines - 1; i >= 0; i--) {
            DerivLine *l = &d->line[i];
            if (l->rel == DERIV_GIVEN) continue;
            // a max has its row's decimals; a difference is that of its operands as written, with theirs
            int *da = &d->line[l->a].dec, *db = &d->line[l->b].dec;
            if (l->rel == DERIV_MAX && l->dec != *da) {
                l->dec = *da = l->dec > *da ? l->dec : *da;
                changed = true;
            }
            if (l->rel == DERIV_SUB && (l->dec != *da || l->dec != *db)) {
                int m = l->dec > *da ? l->dec : *da;
                l->dec = *da = *db = m > *db ? m : *db;
                changed = true;
            }
            while (!deriv_line_holds(d, i)) {
                int ops[3] = {l->a, deriv_uses_b(l->rel) ? l->b : -1, l->rel == DERIV_NORM ? l->c : -1};
                bool raised = false;
                for (int k = 0; k < 3; k++)
                    if (ops[k] >= 0 && d->line[ops[k]].dec < TIP_MAX_DECIMALS) d->line[ops[k]].dec++, raised = true;
                if (!raised) break;
                changed = true;
            }
        }
        if (!changed) break;
    }
}

bool scene_derivation_adds_up(const Derivation *d, char *why, size_t n)
{
    for (int i = 0; i < d->n_lines; i++)
        for (int j = 0; j < d->line[i].n; j++)
            if (!deriv_holds(d, i, j)) {
                char b[48];
                scene_derivation_text(d, i, j, b, sizeof b);
                if (why) snprintf(why, n, "line %d \"%s\" value %d (%s) does not follow from the lines it reads", i,
                                  d->line[i].label, j, b);
                return false;
            }
    return true;
}

bool scene_derivation(const Layout *L, const Trace *tr, const View *v, int row, int col, Derivation *d)
{
    memset(d, 0, sizeof *d);
    if (v->delta || !scene_has_derivation(tr, v->stage) || L->result_panel < 0) return false;
    const PanelSpec *res = &L->spec[L->result_panel];
    if (row < 0 || row >= res->rows) return false;
    d->row = row, d->col = -1;
    const StageRecipe *r = recipe_of(tr->stages[v->stage].kind);
    if (!r->derive || !r->derive(L, tr, v, row, col, d)) return false;
    deriv_fit(d);
    return true;
}

int scene_derivation_row(const Layout *L, const Trace *tr, const View *v)
{
    if (L->result_panel < 0) return 0;
    const PanelSpec *res = &L->spec[L->result_panel];
    if (v->loop >= 0) // inside a loop: the step's own row
        for (int r = 0; r < res->rows; r++)
            if (recipe_loop_cell(tr, v, res, r, 0) == LOOP_NOW) return r;
    for (int r = 0; r < res->rows; r++)
        for (int c = 0; c < res->cols; c++)
            if (isnan(panel_value(res, r, c))) return r;
    return 0;
}

bool scene_strip(const Layout *L, const Trace *tr, const View *v, Derivation *d)
{
    if (L->deriv.w <= 0 || L->result_panel < 0 || v->hide_result) return false;
    return scene_derivation(L, tr, v, scene_derivation_row(L, tr, v), 0, d);
}

// ---- one value, one rounding ------------------------------------------------------------

// Whether line l of d writes out row `row` (or, for a transposed operand, column `col`)
// of panel p: the same numbers.
static bool line_restates(const DerivLine *l, const PanelSpec *p, int row, int col)
{
    bool as_row = p->cols == l->n && row >= 0 && row < p->rows, as_col = p->rows == l->n && col >= 0 && col < p->cols;
    for (int j = 0; j < l->n && (as_row || as_col); j++) {
        float x = l->v[j];
        if (as_row && !(panel_value(p, row, j) == x || (isnan(x) && isnan(panel_value(p, row, j))))) as_row = false;
        if (as_col && !(panel_value(p, j, col) == x || (isnan(x) && isnan(panel_value(p, j, col))))) as_col = false;
    }
    return as_row || as_col;
}

int scene_strip_line_panel(const Layout *L, const Derivation *d, int i)
{
    const DerivLine *l = &d->line[i];
    if (l->rel != DERIV_GIVEN && !l->result) return -1;
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        bool same = l->n == 1 ? l->result && p == L->result_panel && d->col >= 0 && d->col < ps->cols &&
                                    d->row < ps->rows && panel_value(ps, d->row, d->col) == l->v[0]
                              : line_restates(l, ps, d->row, d->col);
        if (same) return p;
    }
    return -1;
}

static void note_add(Layout *L, const char *note)
{
    size_t len = strlen(L->formula_note);
    snprintf(L->formula_note + len, sizeof L->formula_note - len, "%s%s", len ? "  " : "", note);
}

// The strip writes a panel's numbers with more digits than its cells can (they would not
// fit): said in the note, once.
static void note_strip_digits(Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    if (!scene_strip(L, tr, v, &d)) return;
    for (int i = 0; i < d.n_lines; i++) {
        int p = scene_strip_line_panel(L, &d, i);
        if (p < 0 || L->image[p] || L->spec[p].decimals < 0 || L->spec[p].decimals >= d.line[i].dec) continue;
        char a[16], b[16], note[240];
        snprintf(a, sizeof a, "%d", d.line[i].dec), snprintf(b, sizeof b, "%d", L->spec[p].decimals);
        const char *args[] = {L->spec[p].title, a, b};
        i18n_fmt(note, sizeof note, v->lang, "fx.strip_digits", 3, args);
        note_add(L, note);
        return;
    }
}

void scene_note_rounding(Layout *L, const Trace *tr, const View *v)
{
    if (v->hide_result || v->delta) return;
    note_strip_digits(L, tr, v);
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        int dc = ps->decimals, ds = L->sum_decimals[p];
        if (!ps->row_sums || L->image[p] || dc < 0 || ds < 0) continue;
        for (int r = 0; r < ps->rows; r++) {
            double shown = 0.0, exact = 0.0, k = pow(10.0, dc), ks = pow(10.0, ds);
            for (int j = 0; j < ps->cols; j++) {
                float x = panel_value(ps, r, j);
                exact += (double)x, shown += round((double)x * k) / k;
            }
            if (!isfinite(exact) || lround(shown * ks) == lround(exact * ks)) continue;
            // the first such row, named as its axis labels it
            char d[16], row[96], idx[16], lab[48], add[32], sum[32], note[240];
            const char *name = panel_axis_label(v, ps->row_axis, r, lab, sizeof lab);
            snprintf(d, sizeof d, "%d", dc), snprintf(idx, sizeof idx, "%d", r);
            if (name == lab) { // an index
                snprintf(row, sizeof row, "%s", idx);
            } else { // "2 (“sat”)", as a question names a position
                const char *ra[] = {idx, name};
                i18n_fmt(row, sizeof row, v->lang, "quiz.token", 2, ra);
            }
            snprintf(add, sizeof add, "%.*f", ds, shown), snprintf(sum, sizeof sum, "%.*f", ds, exact);
            const char *args[] = {d, row, add, sum};
            i18n_fmt(note, sizeof note, v->lang, "fx.sum_rounded", 4, args);
            note_add(L, note);
            return;
        }
    }
}
