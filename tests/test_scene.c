// test_scene.c — the picture never contradicts the numbers: the rules of the
// stage recipes (scene.h), checked on every lesson, both languages, several
// sizes, first and last batch and head. SDL-free: the view layer only.
//   - a tensor and every view of it share one colour scale (Q and its heads,
//     head outputs and concat, scores and masked scores);
//   - every panel has a legend row stating its range, and every finite value of
//     a panel lies inside it;
//   - formulas name the lesson's own terms: "+ b" exactly when there is a bias,
//     the key input in cross-attention, z for the FFN after a LayerNorm, never
//     "+ mask", masked_fill exactly when there is a mask;
//   - every term is shown: the weight and the bias as panels at every size,
//     γ and β for a LayerNorm;
//   - what a result cell reads (hover / animation highlight) is inside the
//     operand panels, and split / concat map to the right source cell.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"
#include "compare.h"
#include "compare_text.h"
#include "explain.h"
#include "i18n.h"
#include "layout.h"
#include "recipe.h"
#include "scene.h"
#include "story.h"
#include "utf8.h"
#include "view.h"
#include "viewkind.h"

#include "pure_support.h"


static glob_t lesson_files(void)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    glob("tests/ref/*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/big/*.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 10);
    return g;
}

// The stage a panel's values come from, through views (split, concat, masking).
static int root_of(const Trace *tr, int s)
{
    StageKind k = tr->stages[s].kind;
    return k == STAGE_KIND_SPLIT || k == STAGE_KIND_CONCAT || k == STAGE_KIND_MASKED ? tr->stages[s].operands[0] : s;
}

static void check_frame(const char *file, const Trace *tr, const View *v, const Layout *L)
{
    const Stage *st = &tr->stages[v->stage];
    char where[300];
    snprintf(where, sizeof where, "%s stage %s (%s, batch %d, head %d, %dx%d)", file, st->name,
             v->lang == LANG_ZH ? "zh" : "en", v->batch, v->head, L->w, L->h);
    if (L->n_panels < 1) fail_msg("%s: no panels", where);
    if (!L->formula[0]) fail_msg("%s: no formula", where);
    if (strstr(L->formula, "+ mask")) fail_msg("%s: \"+ mask\" in \"%s\"", where, L->formula);
    // issue 22 item 6: every symbol defined (the decode formula divided by an "s"), and a
    // head in a title is not written with the product's "·" ("Q · h0" read as Q times h0)
    if (strstr(L->formula, " / s)") || strstr(L->formula, " / s +")) fail_msg("%s: undefined s in \"%s\"", where, L->formula);
    for (int p = 0; p < L->n_panels; p++) {
        if (strstr(L->spec[p].title, " · ")) fail_msg("%s: title \"%s\"", where, L->spec[p].title);
        // the tooltip names a cell as its panel does (the softmax's operand "scores" was
        // masked_scores in its tooltip), and has no empty last line
        char tip[2048], want[80];
        explain_cell(tr, v, L, p, 0, 0, tip, sizeof tip);
        size_t tl = strlen(tip);
        if (tl && tip[tl - 1] == '\n') fail_msg("%s: %s's tooltip ends with an empty line", where, L->spec[p].title);
        if (st->kind == STAGE_KIND_SOFTMAX && p == 0 && v->lang == LANG_EN) {
            snprintf(want, sizeof want, "%s[", tr->mask_kind ? "masked_scores" : "scores");
            if (strncmp(tip, want, strlen(want)) != 0 || strncmp(L->spec[p].title, want, strlen(want) - 1) == 0) {
                // the title says "scores" (no mask) or "masked scores"; the tooltip the same
                bool masked_title = strncmp(L->spec[p].title, "masked", 6) == 0;
                if (masked_title != (strncmp(tip, "masked_scores[", 14) == 0))
                    fail_msg("%s: panel \"%s\" but its tooltip says \"%.40s\"", where, L->spec[p].title, tip);
            }
        }
    }
    assert_true(L->n_groups >= 1 && L->n_groups <= L->n_panels);
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        if (ps->group < 0 || ps->group >= L->n_groups) fail_msg("%s: panel %d has no legend row", where, p);
        const ScaleGroup *g = &L->group[ps->group];
        if (!(isfinite(g->scale.lo) && isfinite(g->scale.hi) && g->scale.lo < g->scale.hi))
            fail_msg("%s: panel %s range [%g, %g]", where, ps->title, (double)g->scale.lo, (double)g->scale.hi);
        if (memcmp(&g->scale, &ps->scale, sizeof g->scale) != 0)
            fail_msg("%s: panel %s is not drawn on its legend's scale", where, ps->title);
        if (!ps->title[0] || !ps->source[0]) fail_msg("%s: panel %d has no title or source", where, p);
        // every value it colours lies inside the stated range (NaN and masked cells have their own looks)
        for (int r = 0; r < ps->rows; r++)
            for (int c = 0; c < ps->cols; c++) {
                float x = panel_value(ps, r, c);
                bool masked = ps->mask && ps->mask[(size_t)r * (size_t)ps->cols + (size_t)c] == 0.0f;
                if (masked || !isfinite(x) || g->mask01) continue;
                if (x < g->scale.lo - 1e-6f * fabsf(g->scale.lo) && !g->scale.log)
                    fail_msg("%s: %s[%d,%d] = %g below its range %g", where, ps->title, r, c, (double)x,
                             (double)g->scale.lo);
                if (x > g->scale.hi + 1e-6f * fabsf(g->scale.hi))
                    fail_msg("%s: %s[%d,%d] = %g above its range %g", where, ps->title, r, c, (double)x,
                             (double)g->scale.hi);
            }
        // panels showing one tensor (or a view of it) share one group, and so do the terms of a
        // sum with its result; others do not
        for (int q = 0; q < p; q++) {
            const PanelSpec *qs = &L->spec[q];
            bool same = !ps->is_weight && !qs->is_weight && root_of(tr, ps->stage) == root_of(tr, qs->stage);
            if (ps->is_weight && qs->is_weight) same = ps->stage == qs->stage && ps->is_bias == qs->is_bias;
            bool pr = ps->addend || ps->result, qr = qs->addend || qs->result;
            if ((ps->addend && qr) || (qs->addend && pr)) same = true;
            // the tensor the result is compared with shares the result's scale (issue 22 item 2)
            const StageRecipe *rec = recipe_of(st->kind);
            int cs = rec->compared ? rec->compared(tr, v->stage) : -1;
            if (cs >= 0) {
                bool pc = pr || (!ps->is_weight && root_of(tr, ps->stage) == root_of(tr, cs));
                bool qc = qr || (!qs->is_weight && root_of(tr, qs->stage) == root_of(tr, cs));
                if (pc && qc) same = true;
            }
            if (rec->one_scale && !ps->is_weight && !qs->is_weight) same = true; // (MLA's keys and cache: copies)
            if (same != (ps->group == qs->group))
                fail_msg("%s: panels %s and %s %s one colour scale", where, qs->title, ps->title,
                         same ? "must share" : "must not share");
        }
    }
    // nothing covers anything: panels, their captions and the derivation strip
    for (int p = 0; p < L->n_panels; p++)
        for (int q = 0; q < L->n_panels; q++) {
            if (q != p && rect_overlap(L->panel[p], L->panel[q]))
                fail_msg("%s: panels %s and %s overlap", where, L->spec[p].title, L->spec[q].title);
            if (q != p && rect_overlap(L->caption[p], L->panel[q]))
                fail_msg("%s: the caption of %s covers %s", where, L->spec[p].title, L->spec[q].title);
            if (rect_overlap(L->deriv, L->panel[q])) fail_msg("%s: the derivation covers %s", where, L->spec[q].title);
        }
    // formulas name the lesson's own terms
    bool bias = st->bias && tensor_present(st->bias);
    switch (st->kind) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
    case STAGE_KIND_FFN_HIDDEN:
    case STAGE_KIND_FFN_SUM: {
        const char *b = recipe_param_symbol(tr, v->stage, true);
        if ((strstr(L->formula, b) != NULL) != bias)
            fail_msg("%s: bias %s %s in \"%s\"", where, b, bias ? "missing" : "shown without a bias", L->formula);
        int weights = 0, biases = 0;
        for (int p = 0; p < L->n_panels; p++) weights += L->spec[p].is_weight && !L->spec[p].is_bias,
                                              biases += L->spec[p].is_weight && L->spec[p].is_bias;
        if (weights != 1 || biases != (bias ? 1 : 0))
            fail_msg("%s: %d weight and %d bias panels (bias: %d)", where, weights, biases, bias);
        // the operand as the lesson names it: key / value in cross-attention, z after a LayerNorm
        const char *x = recipe_symbol(tr, st->operands[0], v->lang);
        char want[64];
        snprintf(want, sizeof want, "%s·", x);
        if (!strstr(L->formula, want)) fail_msg("%s: \"%s\" lacks its operand %s", where, L->formula, x);
        if (!strcmp(st->name, "k_proj") && trace_find(tr, "key_input") >= 0 && strcmp(x, "key"))
            fail_msg("%s: cross-attention K reads %s", where, x);
        if (st->kind == STAGE_KIND_FFN_HIDDEN && trace_find(tr, "residual_norm") >= 0 && strcmp(x, "z"))
            fail_msg("%s: the FFN reads %s, not z = LayerNorm(s)", where, x);
        if (st->kind == STAGE_KIND_FFN_HIDDEN && tr->norm_first && strcmp(x, "n₂"))
            fail_msg("%s: a pre-norm FFN reads %s, not n₂ = norm(s)", where, x);
        if (!strcmp(st->name, "q_proj") && tr->norm_first && strcmp(x, "n₁"))
            fail_msg("%s: pre-norm attention reads %s, not n₁ = norm(x)", where, x);
        break;
    }
    case STAGE_KIND_NORM: {
        int gb = 0;
        for (int p = 0; p < L->n_panels; p++) gb += L->spec[p].is_weight && L->spec[p].vector;
        if (tr->norm_rms) { // RMSNorm: γ, no β, the mean of the squares
            if (gb != 1 || !strstr(L->formula, "γ") || strstr(L->formula, "β") || !strstr(L->formula, "²) + ε"))
                fail_msg("%s: RMSNorm without γ or ε, or with β: \"%s\" (%d vectors)", where, L->formula, gb);
        } else if (gb != 2 || !strstr(L->formula, "γ") || !strstr(L->formula, "β") || !strstr(L->formula, "var + ε"))
            fail_msg("%s: LayerNorm without γ, β or ε: \"%s\" (%d vectors)", where, L->formula, gb);
        break;
    }
    case STAGE_KIND_MASKED:
        if ((strstr(L->formula, "masked_fill") != NULL) != (st->operands[1] >= 0))
            fail_msg("%s: \"%s\" for a lesson %s a mask", where, L->formula, st->operands[1] >= 0 ? "with" : "without");
        break;
    case STAGE_KIND_SCORES: {
        bool one = tr->scale == 1.0f;
        if ((strchr(L->formula, '/') != NULL) == one)
            fail_msg("%s: scale %g but \"%s\"", where, (double)tr->scale, L->formula);
        break;
    }
    default:
        break;
    }
    // highlight rules land inside the operand panels; split and concat map to the copied cell
    int r = L->result_panel;
    if (r >= 0) {
        const PanelSpec *res = &L->spec[r];
        for (int i = 0; i < res->rows; i += res->rows > 8 ? res->rows / 4 : 1)
            for (int j = 0; j < res->cols; j += res->cols > 8 ? res->cols / 4 : 1)
                for (int p = 0; p < L->n_panels; p++) {
                    Highlight h;
                    if (!scene_highlight(L, r, i, j, p, &h)) continue;
                    const PanelSpec *ps = &L->spec[p];
                    assert_true(h.row < ps->rows && h.col < ps->cols);
                    if (h.row >= 0 && h.col >= 0 && (ps->reads == READS_HEAD_SRC || ps->reads == READS_HEAD_DST))
                        if (panel_value(ps, h.row, h.col) != panel_value(res, i, j) &&
                            !(isnan(panel_value(ps, h.row, h.col)) && isnan(panel_value(res, i, j))))
                            fail_msg("%s: %s[%d,%d] does not come from %s[%d,%d]", where, res->title, i, j, ps->title,
                                     h.row, h.col);
                }
    }
}

static void test_scene_rules(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    static const int sizes[][2] = {{1280, 720}, {800, 600}, {1920, 1080}};
    int frames = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        const Trace *tr = &ses->trace;
        const Lesson *ls = &ses->lesson;
        bool big = tr->len_q * tr->len_k > 4096;
        for (int lang = 0; lang < LANG_COUNT; lang++)
            for (int bh = 0; bh < (big ? 1 : 2); bh++)
                for (int z = 0; z < (big ? 1 : 3); z++) {
                    View v;
                    view_init(&v, ls, (Lang)lang);
                    v.batch = bh ? tr->batch - 1 : 0;
                    v.head = bh ? tr->n_heads - 1 : 0;
                    for (int s = 0; s < tr->n; s++) {
                        v.stage = s;
                        Layout L;
                        layout_compute(&L, tr, &v, sizes[z][0], sizes[z][1]);
                        check_frame(g.gl_pathv[f], tr, &v, &L);
                        frames++;
                    }
                }
        session_destroy(ses);
    }
    globfree(&g);
    assert_true(frames > 500);
}

// Projector mode at the sizes projectors have (1024x768, 1280x720, 1920x1080, 3840x2160):
// every number of every stage of every shipped lesson is at least the projector's
// minimum, 1/48 of the height (12 / 15 / 22 / 45 px), with the decimals it has at the
// usual size; only a stage whose panels do not fit so together is shown in parts: the
// operands (together or one by one), then the result alone. The classic lesson is never
// split (issue 35: 33 frames for its 13 stages, x·Wᵀ + b = Q never seen together), and
// the operators between its panels are at least as large as its numbers. Only a tensor
// too large for such numbers even alone keeps the usual minimum (counted; the classic
// lesson has none at any size).
static void test_projector(void **state)
{
    (void)state;
    static const struct { int w, h, px, rows; } size[] = {
        {1024, 768, 12, 5}, {1280, 720, 15, 5}, {1920, 1080, 22, 5}, {3840, 2160, 45, 5}};
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t z = 0; z < sizeof size / sizeof size[0]; z++) {
        int W = size[z].w, H = size[z].h, want = size[z].px;
        int splits = 0, frames = 0, small = 0, classic_frames = 0;
        for (size_t f = 0; f < g.gl_pathc; f++) {
            Session *ses = open_session(g.gl_pathv[f]);
            const Trace *tr = &ses->trace;
            View v;
            view_init(&v, &ses->lesson, LANG_EN);
            v.projector = true;
            bool classic = strstr(g.gl_pathv[f], "arange-2x4x4") != NULL;
            for (int st = 0; st < tr->n; st++) {
                v.stage = st;
                v.part = 0;
                int parts = layout_projector_parts(tr, &v, W, H);
                bool split = parts > 1;
                splits += split;
                int operands = 0, all = 0; // one by one: every operand once
                for (int part = 0; part < parts; part++) {
                    v.part = part;
                    Layout L, whole;
                    layout_compute(&L, tr, &v, W, H);
                    assert_int_equal(L.split, split);
                    View plain = v;
                    plain.projector = false, plain.part = 0;
                    layout_compute(&whole, tr, &plain, W, H);
                    if (split) assert_int_equal(L.n_parts, parts);
                    assert_true(L.px_small > whole.px_small); // axis labels and legend larger too
                    if (split && parts == 2 && part == 0) { // the operands: every panel but the result, in order
                        assert_int_equal(L.result_panel, -1);
                        assert_int_equal(L.n_panels, whole.n_panels - 1);
                    } else if (split && part < parts - 1) { // one operand (and the vectors under it)
                        assert_int_equal(L.result_panel, -1);
                        assert_true(L.n_panels >= 1);
                        operands += L.n_panels;
                    } else if (split) { // the result alone
                        assert_int_equal(L.n_panels, 1);
                        assert_int_equal(L.result_panel, 0);
                        assert_string_equal(L.spec[0].title, whole.spec[whole.result_panel].title);
                    } else {
                        assert_int_equal(L.n_panels, whole.n_panels);
                    }
                    all = whole.n_panels;
                    // the numbers need cells of about twice their size: about 5 rows fit under
                    // the header. A taller (or wider) tensor, too large even alone, keeps its numbers
                    // at the usual minimum (counted)
                    bool large = false;
                    for (int p = 0; p < L.n_panels; p++) large |= L.spec[p].rows > size[z].rows || L.spec[p].cols > 6;
                    for (int p = 0; p < L.n_panels; p++) {
                        int px = L.spec[p].px_cell;
                        if (L.spec[p].decimals < 0 || L.image[p]) continue; // (checked by the count below)
                        if (L.spec[p].row_sums && L.sum_decimals[p] >= 0) px = px < L.sum_px[p] ? px : L.sum_px[p];
                        if (px >= want) continue;
                        if (classic)
                            fail_msg("%s at %dx%d: stage %s part %d panel %s: numbers of %d px", g.gl_pathv[f], W, H,
                                     tr->stages[st].name, part, L.spec[p].title, px);
                        small++;
                        if (!large) // (a vector under a tall weight shares its cells)
                            fail_msg("%s at %dx%d: stage %s part %d panel %s (%dx%d): numbers of %d px", g.gl_pathv[f],
                                     W, H, tr->stages[st].name, part, L.spec[p].title, L.spec[p].rows,
                                     L.spec[p].cols, px);
                    }
                    if (classic && L.n_panels > 1) { // operators scale with the numbers
                        int num = 0;
                        for (int p = 0; p < L.n_panels; p++) num = num > L.spec[p].px_cell ? num : L.spec[p].px_cell;
                        if (L.px_op < num)
                            fail_msg("%s at %dx%d: stage %s: operators of %d px beside numbers of %d px", g.gl_pathv[f],
                                     W, H, tr->stages[st].name, L.px_op, num);
                    }
                    classic_frames += classic;
                    int with_numbers = 0;
                    for (int p = 0; p < L.n_panels; p++) with_numbers += L.spec[p].decimals >= 0 && !L.image[p];
                    if (split && with_numbers != L.n_panels)
                        fail_msg("%s at %dx%d: stage %s part %d: a panel without numbers", g.gl_pathv[f], W, H,
                                 tr->stages[st].name, part);
                    frames++;
                }
                if (parts > 2) assert_int_equal(operands, all - 1);
            }
            session_destroy(ses);
        }
        assert_int_equal(classic_frames, 13); // the classic lesson: a frame a stage, none split
        print_message("projector mode at %dx%d: %d frames, %d split, %d panels under %d px (beside a tensor of more "
                      "than %d rows or 6 columns)\n", W, H, frames, splits, small, want, size[z].rows);
        assert_true(frames > 100);
    }
    globfree(&g);
}

// Numbers wherever they fit at the usual minimum size (issue 35, item 7: at 1920x1080 the
// induction lesson's layer-1 softmax, 12×12 in 60×40 px cells, showed none: its numbers
// were held to 36 % of the cell's height, 14 px, under the 16 px minimum). Every shipped
// lesson and stage at 1280x720, 1920x1080 and 3840x2160, and a language model's backward view
// (issue 38: its 12×12 gradients showed colours only where "−0.03" had no room): a panel drawn
// as cells without numbers has cells too small for its numbers with their usual decimals at the
// minimum size (their width, 0.62 em a digit and the air layout_fit_numbers leaves, or half the
// cell's height), numbers all under 1 even without the 0 before the point ("−.03").
static void test_numbers_where_they_fit(void **state)
{
    (void)state;
    static const int size[][2] = {{1280, 720}, {1920, 1080}, {3840, 2160}};
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    int checked = 0, grads = 0, bare = 0;
    char err[600];
    for (size_t z = 0; z < sizeof size / sizeof size[0]; z++)
        for (size_t f = 0; f < g.gl_pathc; f++) {
            Session *ses = open_session(g.gl_pathv[f]);
            const Trace *tr = &ses->trace;
            const int n_fwd = tr->n;
            if (ses->lesson.cfg.vocab_size > 0) assert_true(session_set_backward(ses, true, err, sizeof err));
            View v;
            view_init(&v, &ses->lesson, LANG_EN);
            for (int st = 0; st < tr->n; st++) {
                v.stage = st;
                Layout L;
                layout_compute(&L, tr, &v, size[z][0], size[z][1]);
                int min_px = layout_min_number_px(L.s);
                for (int p = 0; p < L.n_panels; p++) {
                    const PanelSpec *ps = &L.spec[p];
                    if (L.image[p] || ps->two_decimals) continue; // (ALiBi's bias: 2 decimals or none)
                    checked++;
                    grads += st >= n_fwd && ps->decimals >= 0;
                    bare += ps->bare_point;
                    if (ps->bare_point) assert_true(ps->decimals == 2 && ps->num_max < 1.0f);
                    if (ps->decimals >= 0) continue;
                    int w = L.cell_wq[p] / LAYOUT_Q, h = L.cell_hq[p] / LAYOUT_Q;
                    float m = ps->mask ? fmaxf(ps->num_max, 9.9f) : ps->num_max;
                    int digits = 1;
                    for (float x = 10.0f; m >= x && digits < 12; x *= 10.0f) digits++;
                    int d = ps->mask == ps->data ? 0 : m >= 1000.0f ? 0 : m >= 100.0f ? 1 : 2;
                    int chars = 1 + digits + (d > 0 ? d + 1 : 0) - (m < 1.0f && ps->mask != ps->data ? 1 : 0);
                    int margin = w >= 60 ? w / 8 : 4;
                    bool fits = (float)(w - margin) / (0.62f * (float)(chars < 3 ? 3 : chars)) >= (float)min_px &&
                                2 * min_px <= (w < h ? w : h);
                    if (fits)
                        fail_msg("%s at %dx%d: stage %s panel %s: %dx%d px cells and no numbers (%d chars fit at %d px)",
                                 g.gl_pathv[f], size[z][0], size[z][1], tr->stages[st].name, ps->title, w, h, chars,
                                 min_px);
                }
            }
            session_destroy(ses);
        }
    globfree(&g);
    print_message("%d panels checked, %d of the backward view's with numbers; %d written \"−.03\"\n",
                  checked, grads, bare);
    assert_true(checked > 1000 && grads > 100 && bare > 0);
}

// Whether r lies inside a.
static bool rect_inside(Rect r, Rect a) { return r.x >= a.x && r.y >= a.y && r.x + r.w <= a.x + a.w && r.y + r.h <= a.y + a.h; }

// A stage laid out in two rows (layout_place_panels_in_rows): every panel keeps its numbers at
// the usual minimum, operators and captions cover nothing, everything stays in the area, and a
// click on a cell finds that cell (check_frame: panels, captions and the strip do not overlap).
static void check_two_rows(const Layout *L, const char *what)
{
    int min_px = layout_min_number_px(L->s);
    for (int p = 0; p < L->n_panels; p++) {
        if (L->image[p] || L->spec[p].decimals < 0 || L->spec[p].px_cell < min_px)
            fail_msg("%s: panel %s without numbers of %d px (%d)", what, L->spec[p].title, min_px, L->spec[p].px_cell);
        if (!rect_inside(L->panel[p], L->area) || !rect_inside(L->caption[p], L->area) || !rect_inside(L->op[p], L->area))
            fail_msg("%s: panel %s outside the area", what, L->spec[p].title);
        for (int q = 0; q < L->n_panels; q++) { // (panels, captions and the strip: check_frame)
            if (q != p && L->op[p].w > 0 && rect_overlap(L->op[p], L->panel[q]))
                fail_msg("%s: the operator of %s covers %s", what, L->spec[p].title, L->spec[q].title);
            if (q > p && rect_overlap(L->caption[p], L->caption[q]))
                fail_msg("%s: captions of %s and %s overlap", what, L->spec[p].title, L->spec[q].title);
        }
        int hp, hr, hc;
        Rect c;
        assert_true(layout_cell_rect(L, p, L->spec[p].rows - 1, L->spec[p].cols - 1, &c));
        assert_true(layout_hit_cell(L, c.x + c.w / 2, c.y + c.h / 2, &hp, &hr, &hc));
        assert_int_equal(hp, p);
        assert_int_equal(hr, L->spec[p].rows - 1);
        assert_int_equal(hc, L->spec[p].cols - 1);
    }
}

// Whether L's panels are in two rows: a panel (not a vector under its parameter) below the first.
static bool in_two_rows(const Layout *L)
{
    for (int p = 1; p < L->n_panels; p++)
        if (!L->spec[p].stacked && L->panel[p].y != L->panel[0].y) return true;
    return false;
}

// Issue 35 item 7: llama-block's SwiGLU (n₂ · W₁ᵀ ⊙ g = h, 5×8 panels) showed no numbers in one
// row of 32 columns; where two rows give every panel numbers at the usual minimum it is laid
// out in two (a 4:3 projector, 1280×1024). At 1280×720 the area (404 px) cannot hold the 13
// rows of two rows at 26 px (plus two captions): it stays in one row, unchanged. Every stage of
// every lesson laid out in two rows keeps its numbers, nothing overlapping, inside the area.
static void test_two_rows_where_one_drops_numbers(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/llama-block.json");
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    v.stage = trace_find(&ses->trace, "ffn_hidden");
    assert_true(v.stage >= 0);
    Layout L;
    static const int tall[][2] = {{1280, 960}, {1280, 1024}}; // (1024×768: the legend band, its names stacked since the small-window fix, leaves too little)
    for (int z = 0; z < 2; z++) {
        layout_compute(&L, &ses->trace, &v, tall[z][0], tall[z][1]);
        assert_int_equal(L.n_panels, 4);
        assert_true(in_two_rows(&L));
        check_frame("lessons/llama-block.json", &ses->trace, &v, &L);
        check_two_rows(&L, "llama-block ffn_hidden");
        // the second row opens with its operator (⊙), left of g's labels
        assert_true(L.op[2].w > 0 && L.op[2].x + L.op[2].w <= L.panel[2].x);
    }
    layout_compute(&L, &ses->trace, &v, 1280, 720);
    assert_false(in_two_rows(&L));
    session_destroy(ses);

    static const int size[][2] = {{800, 600}, {1024, 768}, {1280, 720}, {1280, 1024}, {1920, 1080}};
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    int two = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        ses = open_session(g.gl_pathv[f]);
        view_init(&v, &ses->lesson, LANG_EN);
        for (size_t z = 0; z < sizeof size / sizeof size[0]; z++)
            for (int st = 0; st < ses->trace.n; st++) {
                v.stage = st;
                layout_compute(&L, &ses->trace, &v, size[z][0], size[z][1]);
                if (!in_two_rows(&L)) continue;
                char what[160];
                snprintf(what, sizeof what, "%s at %dx%d, stage %s", g.gl_pathv[f], size[z][0], size[z][1],
                         ses->trace.stages[st].name);
                check_frame(g.gl_pathv[f], &ses->trace, &v, &L);
                check_two_rows(&L, what);
                two++;
            }
        session_destroy(ses);
    }
    globfree(&g);
    assert_true(two >= 20);
}

// Issue 42 item 8: a vision transformer's attention stage shows, beside its panels, [CLS]'s row of
// attn over the image's patches for the head shown and the heads' mean, on attn's colour scale;
// its patches' rows are labelled 1 … N (row 0 is patch 1, not [CLS]); its probs' bars and columns
// are the classes. Another lesson's attention has no such picture.
static void test_vision_cls_overlay(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/vision-digits.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    v.stage = trace_find(tr, "l1.attn");
    v.batch = 3, v.head = 2;
    assert_true(v.stage >= 0);
    Layout L;
    layout_compute(&L, tr, &v, 1280, 720);
    const VisionOverlay *o = &L.vision;
    assert_true(o->r.w > 0 && o->r.x >= L.area.x + L.area.w); // beside the panels, not over them
    assert_int_equal(o->height, 8), assert_int_equal(o->patch, 2);
    assert_ptr_equal(o->pixels, ses->lesson.in.query.data + 3 * 64);
    const Tensor *a = &tr->stages[v.stage].t; // (B, H, 17, 17)
    const int H = a->shape[1], Lk = a->shape[3];
    for (int n = 0; n < Lk - 1; n++) {
        float mean = 0.0f;
        for (int h = 0; h < H; h++) mean += a->data[(((size_t)3 * H + h) * Lk) * Lk + 1 + n];
        assert_true(o->att[0][n] == a->data[(((size_t)3 * H + 2) * Lk) * Lk + 1 + n]);
        assert_true(fabsf(o->att[1][n] - mean / (float)H) < 1e-7f);
        // each patch on attn's scale: the colour of its cell in the panel
        const Rgb c = colormap_value(&o->scale, o->att[0][n]), d = colormap_value(&L.group[L.spec[L.result_panel].group].scale, o->att[0][n]);
        assert_true(c.r == d.r && c.g == d.g && c.b == d.b);
    }
    assert_non_null(strstr(o->label[1], "2"));
    // the patches' axis: row 0 is patch 1
    char b[16];
    v.stage = trace_find(tr, "patches");
    layout_compute(&L, tr, &v, 1280, 720);
    assert_int_equal(L.vision.r.w, 0);
    assert_int_equal(L.spec[0].row_axis, AXIS_PATCH);
    assert_string_equal(panel_axis_label(&v, AXIS_PATCH, 0, b, sizeof b), "1");
    assert_string_equal(panel_axis_label(&v, AXIS_QUERY, 0, b, sizeof b), "CLS");
    assert_string_equal(panel_axis_label(&v, AXIS_VOCAB, 7, b, sizeof b), "7");
    v.stage = trace_find(tr, "probs");
    layout_compute(&L, tr, &v, 1280, 720);
    assert_true(L.bars.r.w > 0 && L.bars.n == 10);
    session_destroy(ses);
    ses = open_session("lessons/induction-heads.json");
    view_init(&v, &ses->lesson, LANG_EN);
    v.stage = trace_find(&ses->trace, "l1.attn");
    layout_compute(&L, &ses->trace, &v, 1280, 720);
    assert_int_equal(L.vision.r.w, 0);
    session_destroy(ses);
}

// Lays out stage `name` of ses at 1280x720 into L; returns its formula.
static const char *formula_of(Session *ses, View *v, Layout *L, const char *name)
{
    v->stage = trace_find(&ses->trace, name);
    assert_true(v->stage >= 0);
    layout_compute(L, &ses->trace, v, 1280, 720);
    return L->formula;
}

// The teacher's examples from the issue, exactly.
static void test_teacher_examples(void **state)
{
    (void)state;
    Session *ses;
    View v;
    Layout L;
#define OPEN(path) (ses = open_session(path), view_init(&v, &ses->lesson, LANG_EN))
#define tr (ses->trace)
    // one quantity, one colour: Q and Q · h1 on the head split of the classic lesson
    OPEN("lessons/arange-2x4x4.json");
    v.stage = trace_find(&tr, "q_heads");
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_int_equal(L.n_groups, 1);
    const Tensor *q = &tr.stages[trace_find(&tr, "q_proj")].t;
    float qmax = 0.0f; // over the whole tensor, both batches
    for (size_t k = 0; k < q->size; k++) qmax = fmaxf(qmax, fabsf(q->data[k]));
    assert_float_equal(L.group[0].scale.hi, qmax, 1e-6);
    Rgb a = colormap_value(&L.spec[0].scale, -7.38f), b = colormap_value(&L.spec[2].scale, -7.38f);
    assert_memory_equal(&a, &b, sizeof a);
    v.batch = 1; // switching batch does not change what a colour means
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_float_equal(L.group[0].scale.hi, qmax, 1e-6);
    v.batch = 0;
    // projections: x and W each state their own range; the bias is on Q's scale (it is added into Q)
    v.stage = trace_find(&tr, "q_proj");
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_int_equal(L.n_groups, 3); // x, W_Qᵀ, b_Q with Q
    assert_int_equal(L.spec[2].group, L.spec[L.result_panel].group);
    assert_true(L.spec[2].addend && L.spec[2].is_bias);
    assert_string_equal(L.group[L.spec[2].group].label, "b_Q, Q"); // the legend names both
    assert_string_equal(L.formula, "Q = x·W_Qᵀ + b_Q");
    assert_string_equal(formula_of(ses, &v, &L, "masked_scores"), "masked_scores = scores");
    session_destroy(ses);
    // no biases: no "+ b_V"
    OPEN("lessons/sentence-the-cat.json");
    assert_string_equal(formula_of(ses, &v, &L, "v_proj"), "V = x·W_Vᵀ");
    session_destroy(ses);
    // cross-attention: K from the key input
    OPEN("lessons/cross-attention-padding.json");
    assert_string_equal(formula_of(ses, &v, &L, "k_proj"), "K = key·W_Kᵀ + b_K");
    assert_string_equal(formula_of(ses, &v, &L, "masked_scores"), "masked_scores = scores.masked_fill(mask == 0, −1e10)");
    for (int p = 0; p < L.n_panels; p++) assert_true(strcmp(L.spec[p].op, "+") != 0);
    // padded keys are marked (batch 1 pads its last two keys)
    assert_false(recipe_key_is_padding(&tr, 0, 4));
    assert_true(recipe_key_is_padding(&tr, 1, 4));
    session_destroy(ses);
    // the FFN reads z = LayerNorm(s); its output shows b₂, the residual, γ and β
    OPEN("lessons/dk-dv-residual-ffn.json");
    assert_string_equal(formula_of(ses, &v, &L, "ffn_hidden"), "h = relu(z·W₁ᵀ + b₁)");
    assert_string_equal(formula_of(ses, &v, &L, "ffn_sum"), "f = h·W₂ᵀ + b₂ + z");
    assert_int_equal(L.n_panels, 5);
    v.stage = trace_find(&tr, "ffn_out");
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_non_null(strstr(L.formula, "y = LayerNorm(f)"));
    // the tooltip of an FFN output cell has every LayerNorm term
    char tip[1024];
    explain_cell(&tr, &v, &L, L.result_panel, 0, 1, tip, sizeof tip);
    assert_non_null(strstr(tip, "mean"));
    assert_non_null(strstr(tip, "γ[1]"));
    assert_non_null(strstr(tip, "β[1]"));
    session_destroy(ses);
    // long sequences: the weight stays, attention on a log scale that the legend names
    OPEN("tests/big/long-256.json");
    v.stage = trace_find(&tr, "q_proj");
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_int_equal(L.n_panels, 4);
    assert_true(L.spec[1].is_weight);
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    const ScaleGroup *g = &L.group[L.spec[L.result_panel].group];
    assert_true(g->scale.log);
    assert_string_equal(scene_scale_name(g), "log");
    assert_true(g->scale.lo > 0.0f && g->scale.lo <= 1.0f / 256.0f);
    v.prob_scale = PROB_SCALE_LINEAR;
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_false(L.group[L.spec[L.result_panel].group].scale.log);
    session_destroy(ses);
#undef tr
#undef OPEN
}

// The sub-steps written out under the panels compute what the core computed.
static void test_derivations(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    int checked = 0, strips = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        const Trace *tr = &ses->trace;
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        v.batch = tr->batch - 1, v.head = tr->n_heads - 1;
        for (v.stage = 0; v.stage < tr->n; v.stage++) {
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            Derivation d;
            bool has = scene_derivation(&L, tr, &v, 0, 0, &d);
            StageKind k = tr->stages[v.stage].kind;
            bool sub = k == STAGE_KIND_SOFTMAX || k == STAGE_KIND_DECODE_ATTN || k == STAGE_KIND_SCORES || k == STAGE_KIND_NORM ||
                       k == STAGE_KIND_HEAD_NORM; // (QK-norm: RMSNorm of each head's rows)
            assert_int_equal(has, sub && scene_has_derivation(tr, v.stage));
            if (!has) continue;
            // the strip is there only where the result keeps its numbers
            if (L.deriv.w > 0) strips++;
            if (L.deriv.w > 0 && L.deriv_shrank && L.spec[L.result_panel].decimals < 0)
                fail_msg("%s stage %s: the derivation strip costs the result its numbers", g.gl_pathv[f],
                         tr->stages[v.stage].name);
            const PanelSpec *res = &L.spec[L.result_panel];
            for (int row = 0; row < res->rows; row++)
                for (int col = 0; col < res->cols; col++) {
                    assert_true(scene_derivation(&L, tr, &v, row, col, &d));
                    const DerivLine *last = &d.line[d.n_lines - 1];
                    assert_true(last->result);
                    // the last line is the result itself: its row, or its cell
                    for (int j = 0; j < last->n; j++) {
                        float want = last->n == 1 ? panel_value(res, row, col) : panel_value(res, row, j);
                        assert_true(last->v[j] == want || (isnan(last->v[j]) && isnan(want)));
                    }
                    if (k == STAGE_KIND_SCORES) { // Σ of the products ÷ scale (+ ALiBi's bias) is the score
                        float sum = d.line[3].v[0], score = panel_value(res, row, col), bias = 0.0f;
                        int pb = tr->stages[v.stage].operands[2];
                        if (pb >= 0) {
                            const Tensor *bt = &tr->stages[pb].t; // (1, H, Lq, Lk)
                            bias = bt->data[((size_t)res->head * (size_t)bt->shape[2] + (size_t)row) * (size_t)bt->shape[3] + (size_t)col];
                        }
                        float eps = 1e-5f + 1e-5f * fabsf(score);
                        assert_float_equal(sum / tr->scale + bias, score, eps);
                    } else if (k == STAGE_KIND_SOFTMAX || k == STAGE_KIND_DECODE_ATTN) { // exp ÷ Σ is attn (bit-exact: the same order)
                        const DerivLine *e = &d.line[3];
                        float sum = d.line[4].v[0];
                        bool zero_row = tr->masked_rows == MASKED_ROWS_ZERO; // a fully masked row's 0 (masked_rows)
                        for (int j = 0; j < last->n && zero_row; j++) zero_row = last->v[j] == 0.0f;
                        for (int j = 0; j < last->n && !zero_row; j++) // (with a sink, e has one more value: its term)
                            if (!(e->v[j] / sum == last->v[j] || (isnan(last->v[j]) && isnan(e->v[j] / sum))))
                                fail_msg("%s %s row %d key %d: %.9g / %.9g is not %.9g", g.gl_pathv[f],
                                         tr->stages[v.stage].name, row, j, (double)e->v[j], (double)sum,
                                         (double)last->v[j]);
                    }
                    checked++;
                    if (k != STAGE_KIND_SCORES) break; // row-wise: one derivation a row
                }
        }
        session_destroy(ses);
    }
    globfree(&g);
    assert_true(checked > 100);
    assert_true(strips > 10);
}

// Inside the loop (View.loop): FlashAttention's tiles in the kernel's order (each tile's cells
// of P and acc computed at its step, none later), decoding's steps (the cache grows a row a
// step; a window's dropped rows are GONE), and each step's text.
// KV-cache and FlashAttention steps count from 1 as the step bar does ("step 3 of 6"), the
// narration follows the step (its query, the keys it reads, the one it weighs most), and a
// key not in the cache yet is drawn empty, not as a masked −∞ key (issue 35, item 15: the
// label read "step 2 of 6" at the third step, the narration was the same at every step and
// the keys after t were hatched −∞ like the window's masked keys).
static void test_loop_labels(void **state)
{
    (void)state;
    static const char *lessons[] = {"lessons/kv-cache-decoding.json", "lessons/streaming-sinks.json",
                                    "lessons/flash-attention-tiles.json"};
    for (size_t f = 0; f < sizeof lessons / sizeof *lessons; f++) {
        Session *ses = open_session(lessons[f]);
        const Trace *tr = &ses->trace;
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        bool flash = strstr(lessons[f], "flash") != NULL;
        v.stage = trace_find(tr, flash ? "flash_max" : "decode_attn");
        assert_true(v.stage >= 0);
        int steps = recipe_loop_steps(tr, v.stage);
        assert_true(steps > 2);
        char prev[600] = "";
        for (v.loop = 0; v.loop < steps; v.loop++) {
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            char want[64], narr[600];
            snprintf(want, sizeof want, flash ? "tile %d of %d" : "step %d of %d", v.loop + 1, steps);
            if (!strstr(L.formula_note, want)) fail_msg("%s step %d: \"%s\" without \"%s\"", lessons[f], v.loop, L.formula_note, want);
            snprintf(want, sizeof want, flash ? "Tile %d of %d" : "Step %d of %d", v.loop + 1, steps);
            char nb[600];
            snprintf(narr, sizeof narr, "%s", scene_narration(tr, &v, nb, sizeof nb));
            if (strncmp(narr, want, strlen(want)) != 0) fail_msg("%s step %d: narration \"%s\"", lessons[f], v.loop, narr);
            assert_true(strcmp(narr, prev) != 0); // a step of its own
            snprintf(prev, sizeof prev, "%s", narr);
            if (flash) continue;
            // the result's keys after the step's query: not in the cache yet (empty), never masked
            const PanelSpec *p = &L.spec[L.result_panel];
            for (int r = 0; r < p->rows; r++)
                for (int c = 0; c < p->cols; c++) {
                    LoopCell lc = recipe_loop_cell(tr, &v, p, r, c);
                    assert_int_equal(lc == LOOP_ABSENT, c > r);
                }
        }
        if (!flash) { // the whole loop too; and the masked keys of a window stay masked, hatched
            v.loop = -1;
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            const PanelSpec *p = &L.spec[0]; // the step scores beside the weights
            assert_string_equal(p->source, "decode_scores");
            int masked = 0;
            for (int r = 0; r < p->rows; r++)
                for (int c = 0; c < p->cols; c++) {
                    assert_int_equal(recipe_loop_cell(tr, &v, p, r, c) == LOOP_ABSENT, c > r);
                    assert_int_equal(recipe_loop_cell(tr, &v, &L.spec[L.result_panel], r, c) == LOOP_ABSENT, c > r);
                    masked += c <= r && p->mask && p->mask[(size_t)r * (size_t)p->cols + (size_t)c] == 0.0f;
                }
            if (tr->mask_kind == MASK_SLIDING) assert_true(masked > 0 && p->any_masked);
            else assert_false(p->any_masked); // (the legend shows no masked swatch)
        }
        session_destroy(ses);
    }
}

// The token loops (issue 42): a linear layer's state (N steps through the tokens: row t of S now,
// the rows before done, the later ones not yet; the step's formula and its gates in the narration)
// and MLA's latent cache growing a token at a time, its size against MHA's and MQA's at each step.
static void test_token_loops(void **state)
{
    (void)state;
    static const char *const lessons[] = {"lessons/gated-deltanet.json", "lessons/deepseek-mla.json"};
    static const char *const stages[] = {"l1.lin_state", "latent_cache"};
    for (int f = 0; f < 2; f++) {
        Session *ses = open_session(lessons[f]);
        const Trace *tr = &ses->trace;
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        v.stage = trace_find(tr, stages[f]);
        assert_true(v.stage >= 0);
        const int steps = recipe_loop_steps(tr, v.stage);
        assert_int_equal(steps, tr->len_q);
        char prev[600] = "";
        for (v.loop = 0; v.loop < steps; v.loop++) {
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            char want[64], nb[600];
            snprintf(want, sizeof want, "token %d (%d of %d)", v.loop, v.loop + 1, steps);
            if (!strstr(L.formula_note, want)) fail_msg("%s step %d: \"%s\" without \"%s\"", lessons[f], v.loop, L.formula_note, want);
            if (f == 1) { // the cache's floats after t + 1 tokens: (r + d_R)·(t + 1), MHA's H·(d_k + d_v)·(t + 1)
                snprintf(want, sizeof want, "the cache holds %d floats (MHA: %d,", (tr->mla_rank + tr->mla_rope) * (v.loop + 1),
                         tr->n_heads * (tr->d_k + tr->d_v) * (v.loop + 1));
                if (!strstr(L.formula_note, want)) fail_msg("step %d: \"%s\" without \"%s\"", v.loop, L.formula_note, want);
            } else if (!strstr(L.formula_note, "S ← α_")) {
                fail_msg("step %d: \"%s\" without the gated update", v.loop, L.formula_note);
            }
            const char *narr = scene_narration(tr, &v, nb, sizeof nb);
            snprintf(want, sizeof want, "Token %d", v.loop);
            if (strncmp(narr, want, strlen(want)) != 0) fail_msg("%s step %d: narration \"%s\"", lessons[f], v.loop, narr);
            assert_true(strcmp(narr, prev) != 0);
            snprintf(prev, sizeof prev, "%s", narr);
            // the cache: a row per token; the state: token t's S_t folded into d_k × d_v (every cell
            // now), S_{t−1} beside it (done)
            for (int i = 0; i < L.n_panels; i++) {
                const PanelSpec *p = &L.spec[i];
                if (i != L.result_panel && !p->folded) continue;
                for (int r = 0; r < p->rows; r++)
                    for (int c = 0; c < p->cols; c++) {
                        const int tok = p->folded ? p->fold_row : r;
                        const LoopCell lc = recipe_loop_cell(tr, &v, p, r, c);
                        assert_int_equal(lc, tok < v.loop ? LOOP_DONE : tok == v.loop ? LOOP_NOW : LOOP_LATER);
                    }
            }
            if (f == 0) assert_true(L.spec[L.result_panel].folded && L.spec[L.result_panel].rows == tr->d_k);
        }
        session_destroy(ses);
    }
}

static void test_loop_steps(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/flash-attention-tiles.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    const int bq = tr->flash_block_q, bk = tr->flash_block_k, nkb = (tr->len_k + bk - 1) / bk;
    const int nqb = (tr->len_q + bq - 1) / bq;
    v.stage = trace_find(tr, "flash_p");
    assert_int_equal(recipe_loop_steps(tr, v.stage), nqb * nkb);
    assert_int_equal(recipe_loop_steps(tr, trace_find(tr, "attn")), 0);
    int seen[64 * 64] = {0};
    for (v.loop = 0; v.loop < nqb * nkb; v.loop++) {
        Layout L;
        layout_compute(&L, tr, &v, 1280, 720);
        const PanelSpec *p = &L.spec[L.result_panel];
        int now = 0, later = 0;
        for (int i = 0; i < p->rows; i++)
            for (int j = 0; j < p->cols; j++) {
                LoopCell c = recipe_loop_cell(tr, &v, p, i, j);
                if (c == LOOP_NOW) now++, seen[i * p->cols + j]++;
                later += c == LOOP_LATER;
                // a cell is computed at the tile that holds it: queries i / bq, keys j / bk
                assert_int_equal(c == LOOP_NOW, (i / bq) * nkb + j / bk == v.loop);
            }
        int q0 = v.loop / nkb * bq, k0 = v.loop % nkb * bk;
        int nq = (q0 + bq < tr->len_q ? q0 + bq : tr->len_q) - q0, nk = (k0 + bk < tr->len_k ? k0 + bk : tr->len_k) - k0;
        assert_int_equal(now, nq * nk);
        assert_int_equal(later, p->rows * p->cols - (v.loop / nkb * bq) * tr->len_k - nq * (k0 + nk));
        assert_non_null(strstr(L.formula_note, "In fast memory") ? L.formula_note : strstr(L.formula_note, "out = acc / l"));
    }
    for (int c = 0; c < tr->len_q * tr->len_k; c++) assert_int_equal(seen[c], 1); // every cell at one tile
    session_destroy(ses);

    ses = open_session("lessons/streaming-sinks.json"); // window W and S sinks
    tr = &ses->trace;
    view_init(&v, &ses->lesson, LANG_EN);
    v.stage = trace_find(tr, "cache_k");
    const int L0 = tr->len_q, W = tr->window, S = tr->sink_tokens;
    assert_true(W > 0 && S > 0 && L0 > S + W);
    assert_int_equal(recipe_loop_steps(tr, v.stage), L0);
    for (v.loop = 0; v.loop < L0; v.loop++) {
        Layout L;
        layout_compute(&L, tr, &v, 1280, 720);
        const PanelSpec *p = &L.spec[L.result_panel];
        for (int r = 0; r < p->rows; r++) {
            LoopCell c = recipe_loop_cell(tr, &v, p, r, 0), want = r == v.loop ? LOOP_NOW : r > v.loop ? LOOP_LATER
                                                                 : (r < S || r > v.loop - W) ? LOOP_DONE : LOOP_GONE;
            assert_int_equal(c, want);
        }
        assert_non_null(strstr(L.formula_note, "slot"));
        if (v.loop >= S + W) assert_non_null(strstr(L.formula_note, "replacing token"));
    }
    v.loop = -1; // the whole loop: everything computed
    Layout L;
    layout_compute(&L, tr, &v, 1280, 720);
    assert_int_equal(recipe_loop_cell(tr, &v, &L.spec[L.result_panel], L0 - 1, 0), LOOP_DONE);
    session_destroy(ses);
}

// FlashAttention: each running max / sum cell frames the tile it has just read (one query
// row of one key block), and its value follows from that tile and the cell before it.
// Shared K/V heads: the K panel of the scores is the K/V head the query head reads.
static void test_flash_tiles_and_kv_heads(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/flash-attention-tiles.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    int checked = 0;
    for (v.head = 0; v.head < tr->n_heads; v.head++) {
        v.stage = trace_find(tr, "flash_max");
        Layout L;
        layout_compute(&L, tr, &v, 1280, 720);
        const PanelSpec *S = &L.spec[0], *M = &L.spec[L.result_panel];
        assert_int_equal(S->tile_cols, tr->flash_block_k);
        assert_int_equal(S->tile_rows, tr->flash_block_q);
        for (int i = 0; i < M->rows; i++)
            for (int kb = 0; kb < M->cols; kb++) {
                Highlight h;
                assert_true(scene_highlight(&L, L.result_panel, i, kb, 0, &h));
                assert_int_equal(h.row, i);
                assert_int_equal(h.col, kb * tr->flash_block_k);
                int n = tr->len_k - h.col < tr->flash_block_k ? tr->len_k - h.col : tr->flash_block_k;
                assert_int_equal(h.cols, n);
                float m = kb > 0 ? panel_value(M, i, kb - 1) : -INFINITY;
                for (int j = h.col; j < h.col + h.cols; j++) m = panel_value(S, i, j) > m ? panel_value(S, i, j) : m;
                assert_true(m == panel_value(M, i, kb));
                checked++;
            }
    }
    session_destroy(ses);
    ses = open_session("lessons/llama-gqa-rope.json"); // 4 query heads, 2 K/V heads
    tr = &ses->trace;
    view_init(&v, &ses->lesson, LANG_EN);
    for (v.head = 0; v.head < tr->n_heads; v.head++) {
        v.stage = trace_find(tr, "scores");
        Layout L;
        layout_compute(&L, tr, &v, 1280, 720);
        assert_int_equal(L.spec[0].head, v.head);           // Q: the query head
        assert_int_equal(L.spec[1].head, v.head / 2);       // Kᵀ: its shared K/V head
        assert_int_equal(L.spec[1].kv_group, 2);
        assert_non_null(strstr(L.spec[1].title, "kv"));
        v.stage = trace_find(tr, "k_heads");                 // the split: one panel per K/V head
        layout_compute(&L, tr, &v, 1280, 720);
        assert_int_equal(L.spec[0].head_blocks, 2);
        assert_int_equal(L.n_panels, 3);
        assert_non_null(strstr(L.spec[2].title, "q heads 2–3"));
    }
    session_destroy(ses);
    print_message("%d running-max cells checked against their tiles\n", checked);
}

// A language model: the next-token bars (the probs recipe's extra) stand right of the probs
// stage's panels (and only there), inside the frame, with the ten most likely tokens after the
// text, most likely first, written as the cells write them; the head view at probs draws no
// bars and keeps the whole area (it left the bars' room empty); the model view's maps are a
// grid of layers × heads inside the area, with no panels, and a click on one opens its layer's
// attention at its head.
static void test_language_model_frames(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/induction-heads.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    const int sizes[][2] = {{800, 600}, {1280, 720}, {3840, 2160}};
    for (int k = 0; k < 3; k++)
        for (v.stage = 0; v.stage < tr->n; v.stage++) {
            Layout L;
            layout_compute(&L, tr, &v, sizes[k][0], sizes[k][1]);
            bool probs = tr->stages[v.stage].id == STAGE_PROBS;
            const Rect b = L.bars.r;
            assert_int_equal(b.w > 0, probs);
            if (!probs) continue;
            assert_true(b.x + b.w <= sizes[k][0] && b.y + b.h <= sizes[k][1]);
            for (int p = 0; p < L.n_panels; p++) assert_true(L.panel[p].x + L.panel[p].w <= b.x);
            const Tensor *t = &tr->stages[v.stage].t;
            const int Lq = t->shape[1], V = t->shape[2];
            const float *row = t->data + (size_t)(Lq - 1) * V; // (batch 0's last position)
            assert_int_equal(L.bars.n, V < LAYOUT_MAX_BARS ? V : LAYOUT_MAX_BARS);
            for (int i = 0; i < L.bars.n; i++) {
                int above = 0; // tokens more likely than the i-th bar's: exactly i
                for (int j = 0; j < V; j++) above += row[j] > L.bars.value[i];
                assert_true(above <= i);
                if (i) assert_true(L.bars.value[i] <= L.bars.value[i - 1]);
                char num[16];
                snprintf(num, sizeof num, "%.2f", (double)L.bars.value[i]);
                assert_string_equal(L.bars.number[i], num);
            }
            v.kind = VIEW_HEADS; // the head view at probs: no bars, the whole area
            Layout H, A;
            layout_compute(&H, tr, &v, sizes[k][0], sizes[k][1]);
            const int probs_stage = v.stage;
            v.stage = trace_find(tr, "l1.attn");
            layout_compute(&A, tr, &v, sizes[k][0], sizes[k][1]);
            v.stage = probs_stage, v.kind = VIEW_PANELS;
            assert_int_equal(H.bars.r.w, 0);
            assert_int_equal(H.area.w, A.area.w);
            assert_int_equal(H.view.heads.xk, A.view.heads.xk);
        }
    v.kind = VIEW_MODEL;
    v.stage = 0; // (the loop left it one past the last stage: trace_layer_at asserts a stage of the trace)
    Layout L;
    layout_compute(&L, tr, &v, 1280, 720);
    assert_int_equal(L.kind, VIEW_MODEL);
    assert_int_equal(L.n_panels, 0);
    const ModelViewLayout *M = &L.view.model;
    assert_int_equal(M->layers, 2);
    assert_int_equal(M->heads, 2);
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++) {
            Rect q = M->map[l][h];
            assert_true(q.w > 40 && q.x >= L.area.x && q.y >= L.area.y && q.x + q.w <= L.area.x + L.area.w &&
                        q.y + q.h <= L.area.y + L.area.h);
            assert_int_equal(tr->stages[M->stage[l]].id, STAGE_ATTN);
            assert_int_equal(tr->stages[M->stage[l]].layer, l);
            int hs, hh;
            assert_true(viewkind_of(VIEW_MODEL)->hit(&L, q.x + q.w / 2, q.y + q.h / 2, &hs, &hh));
            assert_true(hs == M->stage[l] && hh == h);
        }
    session_destroy(ses);
}

// The view-kind table: A visits the panels and every glance once and comes back to the
// panels (the compare view, which needs a B, is entered by --compare and left by A to the
// panels); each glance has its own file name, header (in both languages), place and
// painter-independent hooks; its frame carries its title and formula (what the header draws
// and --describe writes).
static void test_view_kinds(void **state)
{
    (void)state;
    ViewKind k = VIEW_PANELS;
    int seen = 0, glances = 1 << VIEW_PANELS;
    for (int i = 0; i < VIEW_KIND_COUNT; i++) glances |= !viewkind_of((ViewKind)i)->panels ? 1 << i : 0;
    for (int i = 0; i < VIEW_KIND_COUNT && (i == 0 || k != VIEW_PANELS); i++, k = viewkind_of(k)->next) seen |= 1 << k;
    assert_int_equal(k, VIEW_PANELS);
    assert_int_equal(seen, glances);
    assert_int_equal(viewkind_of(VIEW_COMPARE)->next, VIEW_PANELS);
    assert_null(viewkind_of(VIEW_PANELS)->file_stem);
    assert_true(viewkind_of(VIEW_PANELS)->panels);
    Session *ses = open_session("lessons/induction-heads.json");
    const Trace *tr = &ses->trace;
    for (int a = VIEW_PANELS + 1; a < VIEW_KIND_COUNT; a++) {
        const ViewKindInfo *vk = viewkind_of((ViewKind)a);
        if (a == VIEW_COMPARE || vk->one_frame) continue; // (test_compare_view; the experiments: test_expview)
        assert_false(vk->panels);
        assert_non_null(vk->file_stem);
        for (int b = a + 1; b < VIEW_KIND_COUNT; b++)
            if (viewkind_of((ViewKind)b)->file_stem) assert_string_not_equal(vk->file_stem, viewkind_of((ViewKind)b)->file_stem);
        assert_non_null(vk->narration);
        assert_non_null(vk->alt);
        for (int lang = 0; lang < 2; lang++) {
            assert_string_not_equal(i18n_get((Lang)lang, vk->title_key), vk->title_key); // (a key missing: the key)
            assert_string_not_equal(i18n_get((Lang)lang, vk->formula_key), vk->formula_key);
            View v;
            view_init(&v, &ses->lesson, (Lang)lang);
            v.kind = (ViewKind)a, v.stage = trace_find(tr, "l1.attn");
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            assert_int_equal(L.kind, a);
            assert_string_equal(L.formula, i18n_get((Lang)lang, vk->formula_key));
            assert_true(L.title[0] != '\0');
            assert_string_equal(L.formula_note, "");
            assert_string_equal(viewkind_frame_name((ViewKind)a, tr, v.stage), vk->file_stem);
        }
    }
    session_destroy(ses);
}

// The compare view (view_compare.c): the stage's result slice in A, in B and Δ = B − A, A and
// B on one scale, B's changed cells marked, Δ on its own scale around 0, "identical" said in
// the Δ panel's title and the header where they are; the stage's recipe extra (the next-token
// bars) left out; in both languages.
static void test_compare_view(void **state)
{
    (void)state;
    Session *a = open_session("lessons/induction-heads.json");
    char err[600];
    CompareSpec sp;
    assert_true(compare_parse_spec("ablate:l1.h1", &sp, err, sizeof err));
    Session *b = compare_open_b(a, NULL, &sp, err, sizeof err);
    assert_non_null(b);
    Compare c;
    assert_true(compare_traces(&a->trace, &b->trace, &c, err, sizeof err));
    const Trace *tr = &a->trace;
    static const struct {
        const char *stage;
        int head;
        bool same;
    } AT[] = {{"l0.attn", 1, true}, {"l1.head_out", 1, false}, {"l1.head_out", 0, true}, {"probs", 0, false}};
    for (int lang = 0; lang < 2; lang++)
        for (size_t k = 0; k < sizeof AT / sizeof AT[0]; k++) {
            View v;
            view_init(&v, &a->lesson, (Lang)lang);
            v.kind = VIEW_COMPARE, v.cmp = &c, v.cmp_b = &b->trace, v.cmp_spec = "ablate:l1.h1";
            v.stage = trace_find(tr, AT[k].stage), v.head = AT[k].head;
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            assert_int_equal(L.n_panels, 3);
            assert_int_equal(L.n_groups, 2);
            assert_int_equal(L.bars.r.w, 0);
            assert_int_equal(L.deriv.w, 0);
            const PanelSpec *pa = &L.spec[0], *pb = &L.spec[1], *pd = &L.spec[2];
            assert_true(pa->group == 0 && pb->group == 0 && pd->group == 1);
            assert_false(L.group[1].scale.sequential);
            assert_float_equal(L.group[1].scale.lo, -L.group[1].scale.hi, 0.0);
            const Stage *sb = trace_get(&b->trace, AT[k].stage);
            assert_true(pb->data >= sb->t.data && pb->data < sb->t.data + sb->t.size);
            bool same = true;
            for (int r = 0; r < pa->rows; r++)
                for (int col = 0; col < pa->cols; col++) {
                    const float x = panel_value(pa, r, col), y = panel_value(pb, r, col);
                    const float d = pd->data[(size_t)r * (size_t)pd->rs + (size_t)col * (size_t)pd->cs]; // (its cell
                    assert_float_equal(d, x == y ? 0.0f : y - x, 0.0); // shows B − A as shown: test_numbers)
                    assert_int_equal(scene_cell_changed(pb, r, col), x != y);
                    same &= x == y;
                }
            assert_int_equal(same, AT[k].same);
            const char *key = same ? "ui.cmp_delta_same" : "ui.cmp_delta";
            assert_non_null(strstr(pd->title, i18n_get((Lang)lang, key)));
            char want[200];
            compare_text_stage(&c.st[v.stage], (Lang)lang, want, sizeof want);
            assert_non_null(strstr(L.formula, want));
            for (int p = 0; p < 3; p++) {
                const Rect q = L.panel[p];
                assert_true(q.w > 0 && q.x >= L.area.x && q.x + q.w <= L.area.x + L.area.w);
            }
            // a cell's tooltip: A's derivation (the stage's own tooltip of A), B's, then Δ
            static char tip[2400], own[1024];
            viewkind_of(VIEW_COMPARE)->tip(&L, tr, &v, 1, 1, 2, tip, sizeof tip);
            View pv = v;
            pv.kind = VIEW_PANELS, pv.cmp = NULL, pv.cmp_b = NULL;
            static Layout P;
            layout_compute(&P, tr, &pv, 1280, 720);
            explain_cell(tr, &pv, &P, P.result_panel, 1, 2, own, sizeof own);
            assert_non_null(strstr(tip, own));
            layout_compute(&P, &b->trace, &pv, 1280, 720);
            explain_cell(&b->trace, &pv, &P, P.result_panel, 1, 2, own, sizeof own);
            const bool ablated = strcmp(AT[k].stage, "l1.head_out") == 0 && AT[k].head == 1;
            if (ablated) { // the ablated head: replaced, not a sum that would not add up
                assert_null(strstr(tip, own));
                assert_non_null(strstr(tip, lang ? "头 1 被消融" : "head 1 is ablated, its output set to 0"));
            } else {
                assert_non_null(strstr(tip, own));
            }
            assert_non_null(strstr(tip, "Δ = B − A = "));
            if (k == 1) print_message("%s\n", tip);
        }
    compare_free(&c);
    session_destroy(b);
    session_destroy(a);
}

// A column of a panel and the vectors stacked under it (b₂ under W₂ᵀ) stays inside the
// area: each panel's height is rounded up on its own, a pixel each is kept for it (this
// lesson's ffn_sum ended a pixel below the area at 800×600).
static void test_stacked_column_inside(void **state)
{
    (void)state;
    Session *ses = open_session("tests/scene/stacked-ffn.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    const int sizes[][2] = {{800, 600}, {1280, 720}, {1024, 768}};
    int stacked = 0;
    for (int k = 0; k < 3; k++)
        for (v.stage = 0; v.stage < tr->n; v.stage++) {
            Layout L;
            layout_compute(&L, tr, &v, sizes[k][0], sizes[k][1]);
            for (int p = 0; p < L.n_panels; p++) {
                const Rect a = L.panel[p];
                stacked += L.spec[p].stacked;
                if (a.x < L.area.x || a.y < L.area.y || a.x + a.w > L.area.x + L.area.w || a.y + a.h > L.area.y + L.area.h)
                    fail_msg("stage %s at %dx%d: panel %d (%d,%d %dx%d) outside the area (%d,%d %dx%d)", tr->stages[v.stage].name,
                             sizes[k][0], sizes[k][1], p, a.x, a.y, a.w, a.h, L.area.x, L.area.y, L.area.w, L.area.h);
            }
        }
    assert_true(stacked > 0);
    session_destroy(ses);
}

// More heads than split / concat show: the run of 8 that holds the selected head,
// the selected head's panel is the result, and no two shown heads share a colour.
static void test_many_heads(void **state)
{
    (void)state;
    Session *ses = open_session("tests/scene/heads-12.json");
    const Trace *tr = &ses->trace;
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    const char *stages[] = {"q_heads", "concat"};
    for (int si = 0; si < 2; si++)
        for (v.head = 0; v.head < tr->n_heads; v.head++) {
            v.stage = trace_find(tr, stages[si]);
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            assert_true(L.result_panel >= 0);
            if (si == 0) assert_int_equal(L.spec[L.result_panel].head, v.head);
            int shown = 0, seen = 0;
            for (int p = 0; p < L.n_panels; p++) {
                const PanelSpec *ps = &L.spec[p];
                if (ps->head < 0 || ps->head_blocks) continue;
                shown++;
                seen |= ps->head == v.head;
                for (int q = 0; q < p; q++)
                    if (L.spec[q].head >= 0 && !L.spec[q].head_blocks) {
                        Rgb a = colormap_head(ps->head), b = colormap_head(L.spec[q].head);
                        assert_memory_not_equal(&a, &b, sizeof a);
                    }
            }
            assert_int_equal(shown, LAYOUT_MAX_HEAD_PANELS);
            assert_true(seen);
        }
    session_destroy(ses);
}

// A trace straight from attn_forward (no statistics) is coloured exactly like a
// Session's, whose statistics are computed once per lesson.
static void test_ranges_without_stats(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        static Trace bare; // the same tensors, no statistics
        bare = ses->trace;
        bare.has_stats = false;
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        for (v.stage = 0; v.stage < ses->trace.n; v.stage++) {
            static Layout a, b;
            layout_compute(&a, &ses->trace, &v, 1280, 720);
            layout_compute(&b, &bare, &v, 1280, 720);
            assert_int_equal(a.n_groups, b.n_groups);
            for (int k = 0; k < a.n_groups; k++) assert_memory_equal(&a.group[k].scale, &b.group[k].scale, sizeof a.group[k].scale);
            for (int p = 0; p < a.n_panels; p++) {
                assert_true(a.spec[p].any_nan == b.spec[p].any_nan && a.spec[p].any_masked == b.spec[p].any_masked);
                assert_int_equal(a.spec[p].decimals, b.spec[p].decimals);
            }
        }
        session_destroy(ses);
    }
    globfree(&g);
}

// Every stage kind has its recipe, with panels and a formula (recipe.c's table).
// The Δ view of the masked scores after an edit that changes the mask: a score masked
// before or after it reads as masked (−∞: the masked look, its tooltip says so), not as a
// difference of −1e9; the legend's range covers the finite differences only (issue 22
// item 3: "-1000000000.00" spilled over its neighbours under a ±128.80 legend).
static void test_delta_masked(void **state)
{
    (void)state;
    const char *sets[] = {"mask[0,1,3]=1", "mask[0,3,1]=0"};
    SessionEdits ed = {sets, 2, NULL, false, 0, false};
    char err[LESSON_ERR_MAX + 200];
    Session *s = session_open("lessons/causal-decoder.json", &ed, err, sizeof err);
    if (!s) fail_msg("%s", err);
    Trace d;
    AttnWeights w[LESSON_MAX_LAYERS];
    assert_true(session_delta(s, &d, w));
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    v.delta = true, v.edited = true, v.n_edits = 2;
    v.stage = trace_find(&d, "masked_scores");
    assert_true(v.stage >= 0);
    Layout L;
    layout_compute(&L, &d, &v, 1280, 720);
    const PanelSpec *res = &L.spec[L.result_panel];
    assert_true(res->neg_inf_masked);
    const Tensor *mo = &session_original_trace(s)->stages[v.stage].t, *me = &s->trace.stages[v.stage].t;
    int masked = 0;
    for (int r = 0; r < res->rows; r++)
        for (int c = 0; c < res->cols; c++) {
            float x = panel_value(res, r, c);
            size_t k = ((size_t)res->head * (size_t)res->rows + (size_t)r) * (size_t)res->cols + (size_t)c; // batch 0
            bool was = mo->data[k] == s->trace.mask_fill, is = me->data[k] == s->trace.mask_fill;
            if (was || is) {
                assert_true(isinf(x) && x < 0.0f);
                masked++;
                char tip[1024];
                explain_cell(&d, &v, &L, L.result_panel, r, c, tip, sizeof tip);
                assert_non_null(strstr(tip, "masked"));
                assert_null(strstr(tip, "∞"));
            } else {
                assert_true(isfinite(x) && fabsf(x) < 1e6f);
            }
        }
    assert_true(masked >= 10);
    assert_true(L.group[res->group].scale.hi < 1e6f);
    trace_free(&d);
    for (int l = 0; l < LESSON_MAX_LAYERS; l++) attn_weights_free(&w[l]);
    session_destroy(s);
}

// One value, one colour, in the study mode too: b_Q keeps its colours when the result is
// revealed (it was coloured on ±0.35 before and on Q's ±35 after); the FFN's b₁ is on h's
// scale as b₂ is on f's.
static void test_one_colour(void **state)
{
    (void)state;
    Session *s = open_session("lessons/arange-2x4x4.json");
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    v.stage = trace_find(&s->trace, "q_proj");
    v.study = true;
    float hi[2];
    for (int k = 0; k < 2; k++) {
        v.hide_result = k == 0;
        Layout L;
        layout_compute(&L, &s->trace, &v, 1280, 720);
        int b = -1;
        for (int p = 0; p < L.n_panels; p++)
            if (L.spec[p].is_weight && L.spec[p].is_bias) b = p;
        assert_true(b >= 0);
        hi[k] = L.group[L.spec[b].group].scale.hi;
    }
    assert_true(hi[0] == hi[1]);
    session_destroy(s);
    s = open_session("lessons/dk-dv-residual-ffn.json");
    view_init(&v, &s->lesson, LANG_EN);
    v.stage = trace_find(&s->trace, "ffn_hidden");
    Layout L;
    layout_compute(&L, &s->trace, &v, 1280, 720);
    int b = -1;
    for (int p = 0; p < L.n_panels; p++)
        if (L.spec[p].is_weight && L.spec[p].is_bias) b = p;
    assert_true(b >= 0 && L.spec[b].group == L.spec[L.result_panel].group);
    session_destroy(s);
}

// The mask fill as the cells, the legend and the formula print it: as a lesson writes it, and
// float32's lowest (transformers' GPT-2 fill, from_torch) within the width of −1e10, not
// "−3.40282e38" over the neighbouring cells.
static void test_fill_text(void **state)
{
    (void)state;
    static const struct { float f; const char *want; } cases[] = {
        {-1e9f, "−1e9"}, {-1e10f, "−1e10"}, {-3.5f, "−3.5"}, {-100.0f, "−100"}, {0.0f, "0"},
        {-INFINITY, "−∞"}, {-3.4028234663852886e38f, "−3e38"}, {-1e30f, "−1e30"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        recipe_fill_text(cases[i].f, buf, sizeof buf);
        if (strcmp(buf, cases[i].want) != 0) fail_msg("fill %g: \"%s\", expected \"%s\"", (double)cases[i].f, buf, cases[i].want);
    }
}

static void test_every_kind_has_a_recipe(void **state)
{
    (void)state;
    for (int k = 0; k < STAGE_KIND_COUNT; k++) {
        const StageRecipe *r = recipe_of((StageKind)k);
        assert_non_null(r->panels);
        assert_non_null(r->formula);
        assert_true(!r->derive == !r->deriv_width); // a strip has both its width and its lines
    }
    for (int s = 0; s < STAGE_ID_COUNT; s++) // and every stage of the table a kind
        assert_true((unsigned)STAGE_INFO[s].kind < STAGE_KIND_COUNT);
}

// An encoder–decoder (encoder-decoder-reversal.json: 2 encoder blocks, 2 decoder layers of two
// blocks): each block's kind, its axes (the encoder's source × source, the decoder's causal
// self-attention target × target, the cross-attention target × source) and title; the softmax's
// worked sum over a block's own keys (the decoder's 5 of a 6-token source asserted); the model
// view's story in Chinese cut at any length stays whole characters.
static void test_encoder_decoder(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/encoder-decoder-reversal.json");
    const Trace *tr = &ses->trace;
    static const TraceBlock kinds[] = {BLOCK_ENCODER, BLOCK_ENCODER, BLOCK_DECODER_SELF, BLOCK_CROSS, BLOCK_DECODER_SELF,
                                       BLOCK_CROSS};
    assert_int_equal(tr->n_layers, 6);
    for (int l = 0; l < 6; l++) assert_int_equal(trace_block(tr, l), kinds[l]);
    static const struct { const char *stage, *row0, *col0, *en, *zh; } F[] = {
        {"l0.attn", "nine", "nine", "encoder", "编码器"},
        {"l2.masked_scores", "<s>", "<s>", "decoder (causal)", "解码器（因果）"},
        {"l3.attn", "<s>", "nine", "cross-attention", "交叉注意力"},
    };
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    char b1[64], b2[64];
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        v.stage = trace_find(tr, F[i].stage);
        assert_true(v.stage >= 0);
        Layout L;
        layout_compute(&L, tr, &v, 1280, 720);
        const PanelSpec *p = &L.spec[L.result_panel];
        assert_string_equal(panel_axis_label(&v, p->row_axis, 0, b1, sizeof b1), F[i].row0);
        assert_string_equal(panel_axis_label(&v, p->col_axis, 0, b2, sizeof b2), F[i].col0);
        assert_non_null(strstr(recipe_stage_text(tr, v.stage, "title", true, LANG_EN), F[i].en));
        assert_non_null(strstr(recipe_stage_text(tr, v.stage, "title", true, LANG_ZH), F[i].zh));
    }
    v.stage = trace_find(tr, "l2.attn"); // 5 target keys, a source of 6
    Layout L;
    layout_compute(&L, tr, &v, 1280, 720);
    char why[300];
    for (int r = 0; r < 5; r++) {
        Derivation d;
        assert_true(scene_derivation(&L, tr, &v, r, 0, &d));
        if (!scene_derivation_adds_up(&d, why, sizeof why)) fail_msg("l2.attn row %d: %s", r, why);
    }
    view_init(&v, &ses->lesson, LANG_ZH);
    char story[2048];
    for (size_t n = 16; n < sizeof story; n += 7) {
        story_model_view(tr, &v, NULL, story, n);
        size_t len = strlen(story);
        if (utf8_invalid_at((const unsigned char *)story, len) != len) fail_msg("the story cut at %zu bytes: %s", n, story);
    }
    session_destroy(ses);
}

// A head's pattern as story.h defines it, counted the slow, plain way: for each distance back
// and each key, the rows whose largest weight is there.
static void slow_pattern(const Tensor *t, int b, int h, HeadPattern *p)
{
    const int Lq = t->shape[2], Lk = t->shape[3], off = Lk - Lq;
    const float *a0 = t->data + ((size_t)b * (size_t)t->shape[1] + (size_t)h) * (size_t)Lq * (size_t)Lk;
    int arg[64];
    for (int i = 0; i < Lq; i++) {
        arg[i] = 0;
        for (int j = 1; j < Lk; j++)
            if (a0[i * Lk + j] > a0[i * Lk + arg[i]]) arg[i] = j;
    }
    int bb = 0, br = -1, bk = 0, kr = -1;
    for (int d = 0; d < Lk; d++) {
        int n = 0;
        for (int i = 0; i < Lq; i++) n += arg[i] == i + off - d;
        if (n > br) br = n, bb = d;
    }
    for (int k = 0; k < Lk; k++) {
        int n = 0;
        for (int i = 0; i < Lq; i++) n += arg[i] == k;
        if (n > kr) kr = n, bk = k;
    }
    const bool back = br >= kr;
    *p = (HeadPattern){back ? bb : -1, bk, back ? br : kr, 0, 0.0f};
    double sum = 0.0;
    for (int i = 0; i < Lq; i++) {
        const int j = back ? i + off - bb : bk;
        if (j < 0) continue;
        p->of++;
        if (arg[i] == j) sum += (double)a0[i * Lk + j];
    }
    p->weight = p->rows > 0 ? (float)(sum / p->rows) : 0.0f;
}

// Head h of layer l named in a model view's summary: "Layer 1 head 2 looks most at …" or in
// "Layer 0 heads 0, 2, 3 look most at …".
static bool head_named(const char *story, int l, int h)
{
    char want[80];
    snprintf(want, sizeof want, "Layer %d head %d looks most at", l, h);
    if (strstr(story, want)) return true;
    snprintf(want, sizeof want, "Layer %d heads ", l);
    for (const char *at = strstr(story, want); at; at = strstr(at + 1, want)) {
        const char *c = at + strlen(want), *end = strstr(c, " look most at");
        if (!end) continue; // (not "Layer 0, heads 1, 3: no fixed pattern": its comma)
        for (; c < end; c++)
            if (*c >= '0' && *c <= '9' && (c == at + strlen(want) || c[-1] == ' ') && atoi(c) == h) return true;
    }
    return false;
}

// The model view's summary of a model of 4 layers × 4 heads (story.c summary_text), against
// the plain count: a layer whose heads all hold one pattern in most of their rows in one
// sentence with the range of their counts and weights; else each such head named and the
// rest said to have none; every layer said; whole, in both languages, in a frame's buffer
// (600 bytes) and in under half the room the 16 heads named one by one took.
static void check_summary(const Trace *tr, const Lesson *ls, const char *what)
{
    View v;
    view_init(&v, ls, LANG_EN);
    char story[600], want[400];
    story_model_view(tr, &v, NULL, story, sizeof story);
    if (strlen(story) > 420) fail_msg("%s: %zu bytes: %s", what, strlen(story), story);
    for (int s = 0, l = 0; s < tr->n; s++) {
        if (tr->stages[s].id != STAGE_ATTN) continue;
        const Tensor *t = &tr->stages[s].t;
        HeadPattern p[4];
        int fixed = 0, same = 0;
        assert_int_equal(t->shape[1], 4);
        for (int h = 0; h < 4; h++) {
            slow_pattern(t, 0, h, &p[h]);
            fixed += 2 * p[h].rows > p[h].of;
            same += p[h].back == p[0].back && (p[h].back >= 0 || p[h].key == p[0].key);
        }
        if (fixed == 4 && same == 4) {
            snprintf(want, sizeof want, "Layer %d: all 4 heads look most at %s", l,
                     p[0].back > 0 ? "key i − " : p[0].back == 0 ? "itself" : "key ");
            if (!strstr(story, want)) fail_msg("%s: no \"%s\" in %s", what, want, story);
        }
        for (int h = 0; h < 4 && !(fixed == 4 && same == 4); h++)
            if (head_named(story, l, h) != (2 * p[h].rows > p[h].of))
                fail_msg("%s: layer %d head %d (%d of %d rows) named or not wrongly: %s", what, l, h, p[h].rows, p[h].of, story);
        if (fixed == 0) { // "Layer 2: no head …" or within "Layers 1–3: no head …"
            bool said = false;
            char a[80];
            snprintf(a, sizeof a, "Layer %d: no head has a fixed pattern", l);
            said = strstr(story, a) != NULL;
            for (int x = 0; x <= l && !said; x++)
                for (int y = l; y < 8 && !said; y++) {
                    snprintf(a, sizeof a, "Layers %d–%d: no head", x, y);
                    said = strstr(story, a) != NULL;
                }
            if (!said) fail_msg("%s: layer %d (no fixed pattern) not said: %s", what, l, story);
        }
        l++;
    }
    size_t len = strlen(story);
    assert_true(len > 0 && story[len - 1] == '.');
    view_init(&v, ls, LANG_ZH);
    story_model_view(tr, &v, NULL, story, sizeof story);
    len = strlen(story);
    if (len < 3 || strcmp(story + len - 3, "。") != 0 || strstr(story, "Layer") || strstr(story, "head"))
        fail_msg("%s (zh): %s", what, story);
    assert_non_null(strstr(story, "3 层")); // ("第 3 层", or "第 1–3 层")
}

// The model view's narration for a student's long sentence in the subword model's shape
// (tests/big/subword-lm-768.json: 4 layers × 4 heads, a context of 64): the window asks it
// three times a frame (the narration's height, its text, its size). Each head's pattern was
// counted with the row's argmax inside both loops (Lk²·Lq a head): 0.75–1.6 s a model-view
// frame at 51 tokens (bench_edit). Now each row's argmax once: the same patterns (checked
// here against the plain count); the time is bench_edit's row, not this test's.
static void test_model_view_story_long_text(void **state)
{
    (void)state;
    char err[600], text[400] = "";
    Session *ses = session_create("tests/big/subword-lm-768.json", err, sizeof err);
    if (!ses) fail_msg("%s", err);
    Session *longest = NULL;
    for (int k = 0; k < 40; k++) { // words until the context is full
        strcat(text, k % 3 == 0 ? "The cat " : k % 3 == 1 ? "sat on " : "the mat, ");
        Session *next = session_retext(ses, text, err, sizeof err);
        if (!next) break;
        if (longest) session_destroy(longest);
        longest = next;
    }
    assert_non_null(longest);
    const Trace *tr = &longest->trace;
    assert_true(longest->lesson.len_q >= 56 && longest->lesson.len_q <= 64);
    View v;
    view_init(&v, &longest->lesson, LANG_EN);
    int heads = 0;
    for (int s = 0; s < tr->n; s++) {
        if (tr->stages[s].id != STAGE_ATTN) continue;
        for (int h = 0; h < tr->stages[s].t.shape[1]; h++, heads++) {
            HeadPattern fast, slow;
            story_head_pattern(tr, s, 0, h, &fast);
            slow_pattern(&tr->stages[s].t, 0, h, &slow);
            assert_int_equal(fast.back, slow.back);
            assert_int_equal(fast.key, slow.key);
            assert_int_equal(fast.rows, slow.rows);
            assert_int_equal(fast.of, slow.of);
            assert_memory_equal(&fast.weight, &slow.weight, sizeof fast.weight);
        }
    }
    assert_int_equal(heads, 16);
    check_summary(tr, &longest->lesson, "subword-lm-768, a full context"); // (its speed is bench_edit's model-view row)
    session_destroy(longest);
    session_destroy(ses);
}

// Issue 39: the model view's narration of the shipped subword model (4 layers × 4 heads) on a
// student's sentence of 15–25 tokens summarises (on main it named the 16 heads one by one and
// was cut at "… Layer 3 head"): checked against the plain count, whatever the weights.
static void test_model_view_story_summary(void **state)
{
    (void)state;
    char err[600];
    Session *ses = session_create("lessons/subword-lm-fortunes.json", err, sizeof err);
    if (!ses) fail_msg("%s", err);
    Session *s = session_retext(ses, "My teacher said that the cat sat on the mat, and then it ran.", err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_true(s->lesson.len_q >= 15 && s->lesson.len_q <= 25);
    check_summary(&s->trace, &s->lesson, "subword-lm-fortunes, a sentence");
    session_destroy(s);
    session_destroy(ses);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_has_a_recipe),
        cmocka_unit_test(test_delta_masked),
        cmocka_unit_test(test_one_colour),
        cmocka_unit_test(test_scene_rules),
        cmocka_unit_test(test_teacher_examples),
        cmocka_unit_test(test_derivations),
        cmocka_unit_test(test_many_heads), cmocka_unit_test(test_language_model_frames),
        cmocka_unit_test(test_view_kinds),
        cmocka_unit_test(test_encoder_decoder),
        cmocka_unit_test(test_compare_view),
        cmocka_unit_test(test_stacked_column_inside),
        cmocka_unit_test(test_flash_tiles_and_kv_heads),
        cmocka_unit_test(test_loop_steps),
        cmocka_unit_test(test_token_loops),
        cmocka_unit_test(test_loop_labels),
        cmocka_unit_test(test_projector),
        cmocka_unit_test(test_numbers_where_they_fit),
        cmocka_unit_test(test_two_rows_where_one_drops_numbers),
        cmocka_unit_test(test_vision_cls_overlay),
        cmocka_unit_test(test_ranges_without_stats),
        cmocka_unit_test(test_fill_text),
        cmocka_unit_test(test_model_view_story_long_text),
        cmocka_unit_test(test_model_view_story_summary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
