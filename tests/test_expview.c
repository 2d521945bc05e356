// test_expview.c — the experiments drawn (expview.h, view_experiment.c): the numbers the
// frames show are experiment.c's (which test_experiment checks against PyTorch hooks), what a
// tooltip or a sum writes adds up at the decimals the cells show, the induction lesson's
// ablation table ranks its circuit first with its numbers, and every frame fits at 1280×720
// and 4K in both languages. SDL-free: the view layer only.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"
#include "expview.h"
#include "i18n.h"
#include "layout.h"
#include "session.h"
#include "view.h"
#include "viewkind.h"

#include "pure_support.h"

#define INDUCTION "lessons/induction-heads.json"

static Layout L_; // (11 kB: not on the stack)

static void lay_out(const Session *s, ExpView *x, ViewKind k, Lang lang, int w, int h, View *v)
{
    view_init(v, &s->lesson, lang);
    v->kind = k, v->exp = x;
    layout_compute(&L_, &s->trace, v, w, h);
}

// The table's cells are experiment_ablation_table's Δloss, ranked as it ranks them, shown as the
// shown loss minus the shown clean loss; the circuit (previous-token head l0.h1, induction head
// l1.h1) first, with its number on the bar and in the narration.
static void test_ablation_table(void **state)
{
    (void)state;
    Session *s = open_session(INDUCTION);
    char err[600];
    ExpView x;
    assert_true(expview_open(&x, "ablation", s, NULL, err, sizeof err));
    HeadEffect *e;
    int n;
    float clean;
    assert_true(experiment_ablation_table(&s->lesson, ABLATE_ZERO, &e, &n, &clean, "t", err, sizeof err));
    View v;
    lay_out(s, &x, VIEW_ABLATION, LANG_EN, 1280, 720, &v);
    assert_int_equal(L_.n_panels, 2);
    const PanelSpec *p = &L_.spec[0];
    assert_int_equal(p->rows, n);
    assert_true(p->decimals >= 0);
    char lb[64], want[48], got[32];
    for (int i = 0; i < n; i++) {
        snprintf(want, sizeof want, "l%d.h%d", e[i].layer, e[i].head);
        assert_string_equal(panel_axis_label(&v, p->row_axis, i, lb, sizeof lb), want);
        assert_float_equal(p->data[i], e[i].delta, 0.0f); // experiment.c's own number
        // the cell: the loss as shown minus the clean loss as shown
        char a[32], b[32];
        panel_format_number(e[i].loss, p->decimals, a, sizeof a), panel_format_number(clean, p->decimals, b, sizeof b);
        panel_format_number((float)(strtod(a, NULL) - strtod(b, NULL)), p->decimals, want, sizeof want);
        panel_format_cell(p, panel_value(p, i, 0), got, sizeof got);
        assert_string_equal(got, want);
        // its tooltip writes those two numbers and that difference
        char tip[600], line[200];
        viewkind_of(VIEW_ABLATION)->tip(&L_, &s->trace, &v, 0, i, 0, tip, sizeof tip);
        snprintf(line, sizeof line, "= %s − %s\n= %s", a, b, want);
        assert_non_null(strstr(tip, line));
    }
    // the circuit first: l0.h1 (+6.43 at 2 decimals), then the induction head l1.h1 (+5.75)
    assert_string_equal(panel_axis_label(&v, p->row_axis, 0, lb, sizeof lb), "l0.h1");
    assert_string_equal(panel_axis_label(&v, p->row_axis, 1, lb, sizeof lb), "l1.h1");
    assert_string_equal(L_.bars.label[0], "l0.h1");
    panel_format_cell(p, panel_value(p, 0, 0), got, sizeof got);
    snprintf(want, sizeof want, "+%s", got);
    assert_string_equal(L_.bars.number[0], want);
    assert_non_null(strstr(L_.bars.title, want));
    // one value, one colour: each bar is drawn in its zeroed cell's colour (not a probability's)
    assert_true(L_.bars.scaled);
    for (int i = 0; i < L_.bars.n; i++) {
        const Rgb bar = colormap_value(&L_.bars.scale, L_.bars.shade[i]);
        const Rgb cell = colormap_value(&L_.group[p->group].scale, panel_value(p, i, 0));
        assert_true(bar.r == cell.r && bar.g == cell.g && bar.b == cell.b);
    }
    char narr[800];
    viewkind_of(VIEW_ABLATION)->narration(&s->trace, &v, narr, sizeof narr);
    assert_non_null(strstr(narr, want));
    assert_non_null(strstr(narr, "l0.h1"));
    free(e);
    expview_free(&x);
    session_destroy(s);
}

// The lens: a cell per layer and position, its colour the top token's probability and its text
// the top token, both experiment_logit_lens's; the last row is the model's own prediction.
static void test_logit_lens(void **state)
{
    (void)state;
    Session *s = open_session(INDUCTION);
    char err[600];
    ExpView x;
    assert_true(expview_open(&x, "logit-lens", s, NULL, err, sizeof err));
    LogitLens l;
    assert_true(experiment_logit_lens(&s->lesson, &s->trace, &l, "t", err, sizeof err));
    View v;
    lay_out(s, &x, VIEW_LENS, LANG_EN, 1280, 720, &v);
    const PanelSpec *p = &L_.spec[0];
    assert_int_equal(p->rows, l.n_layers);
    assert_int_equal(p->cols, l.len);
    const int pr = trace_find(&s->trace, "probs"), V = s->trace.vocab_size;
    for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
            assert_float_equal(panel_value(p, r, c), l.top_prob[(size_t)r * l.batch * l.len + (size_t)c], 0.0f);
            assert_int_equal(p->tokens[(size_t)r * p->rs + (size_t)c], l.top[(size_t)r * l.batch * l.len + (size_t)c]);
            if (r == p->rows - 1) { // the model's own probs
                const float *row = s->trace.stages[pr].t.data + (size_t)c * V;
                float m = row[0];
                for (int k = 1; k < V; k++) m = fmaxf(m, row[k]);
                assert_float_equal(panel_value(p, r, c), m, 1e-6f);
            }
        }
    char tip[600];
    viewkind_of(VIEW_LENS)->tip(&L_, &s->trace, &v, 0, 1, 3, tip, sizeof tip);
    assert_non_null(strstr(tip, "the next token"));
    logit_lens_free(&l);
    expview_free(&x);
    session_destroy(s);
}

// Attribution: each head's cell is experiment_logit_attribution's; under them Σ heads + rest =
// logit holds for the numbers as the cells show them, in every column, and the tooltip writes it.
static void test_attribution_adds_up(void **state)
{
    (void)state;
    Session *s = open_session(INDUCTION);
    char err[600];
    ExpView x;
    assert_true(expview_open(&x, "logit-attribution", s, NULL, err, sizeof err));
    LogitAttribution a;
    assert_true(experiment_logit_attribution(&s->lesson, &s->trace, &a, "t", err, sizeof err));
    const int sizes[][2] = {{1280, 720}, {800, 600}, {3840, 2160}};
    for (int z = 0; z < 3; z++) {
        View v;
        lay_out(s, &x, VIEW_ATTRIBUTION, LANG_EN, sizes[z][0], sizes[z][1], &v);
        const PanelSpec *h = &L_.spec[0], *sum = &L_.spec[1];
        assert_int_equal(h->rows, a.n_layers * a.n_heads);
        assert_int_equal(h->decimals, sum->decimals);
        const int d = h->decimals;
        assert_true(d >= 0);
        const size_t per = (size_t)a.batch * a.len;
        for (int c = 0; c < h->cols; c++) {
            double shown_sum = 0.0;
            char buf[32];
            for (int r = 0; r < h->rows; r++) {
                assert_float_equal(panel_value(h, r, c), a.contrib[(size_t)r * per + (size_t)c], 0.0f);
                panel_format_number(panel_value(h, r, c), d, buf, sizeof buf);
                shown_sum += strtod(buf, NULL);
            }
            char s0[32], s1[32], s2[32], want[32];
            panel_format_number(panel_value(sum, 0, c), d, s0, sizeof s0);
            panel_format_number(panel_value(sum, 1, c), d, s1, sizeof s1);
            panel_format_number(panel_value(sum, 2, c), d, s2, sizeof s2);
            panel_format_number((float)shown_sum, d, want, sizeof want);
            assert_string_equal(s0, want);                       // Σ heads: the shown terms' sum
            panel_format_number((float)(strtod(s0, NULL) + strtod(s1, NULL)), d, want, sizeof want);
            assert_string_equal(s2, want);                       // + rest = the shown logit
            assert_float_equal(panel_value(sum, 2, c), a.logit[c], 0.0f);
            if (z == 0 && c == h->cols - 1) {
                char tip[800], line[120];
                viewkind_of(VIEW_ATTRIBUTION)->tip(&L_, &s->trace, &v, 1, 0, c, tip, sizeof tip);
                snprintf(line, sizeof line, "= %s + %s = %s", s0, s1, s2);
                assert_non_null(strstr(tip, line));
            }
        }
    }
    logit_attribution_free(&a);
    expview_free(&x);
    session_destroy(s);
}

// Patching: the maps are experiment_patching's; a corrupted text of another length is one line.
static void test_patching(void **state)
{
    (void)state;
    Session *s = open_session(INDUCTION);
    char err[600];
    ExpView x;
    assert_false(expview_open(&x, "patching", s, "qkdmb", err, sizeof err));
    assert_non_null(strstr(err, "patching needs texts of one length"));
    assert_null(strchr(err, '\n'));
    assert_true(expview_open(&x, "patching", s, "qkdmbxakdmbx", err, sizeof err));
    Session *c = session_retext(s, "qkdmbxakdmbx", err, sizeof err);
    assert_non_null(c);
    Patching p;
    assert_true(experiment_patching(&s->lesson, &c->lesson, &p, "t", err, sizeof err));
    View v;
    lay_out(s, &x, VIEW_PATCHING, LANG_EN, 1280, 720, &v);
    assert_int_equal(L_.n_panels, 2);
    for (int k = 0; k < p.n_layers * p.len; k++) assert_float_equal(L_.spec[0].data[k], p.residual[k], 0.0f);
    for (int k = 0; k < p.n_layers * p.n_heads * p.len; k++) assert_float_equal(L_.spec[1].data[k], p.heads[k], 0.0f);
    char lb[64];
    assert_string_equal(panel_axis_label(&v, L_.spec[1].row_axis, 3, lb, sizeof lb), "l1.h1");
    patching_free(&p);
    session_destroy(c);
    expview_free(&x);
    session_destroy(s);
}

// Each view at 1280×720 and 4K, English and Chinese: the title, the formula (its note where it fits) and every
// panel inside their places (text measured with the estimate, never narrower than the fonts'),
// numbers in the cells, the panels' labels in the language (no English left in a Chinese frame).
static void test_fits(void **state)
{
    (void)state;
    Session *s = open_session(INDUCTION);
    char err[600];
    static const char *const NAMES[] = {"ablation", "logit-lens", "logit-attribution", "patching"};
    const int sizes[][2] = {{1280, 720}, {3840, 2160}};
    for (int k = 0; k < 4; k++) {
        ExpView x;
        assert_true(expview_open(&x, NAMES[k], s, k == 3 ? "qkdmbxakdmbx" : NULL, err, sizeof err));
        for (int z = 0; z < 2; z++)
            for (int lang = 0; lang < LANG_COUNT; lang++) {
                View v;
                lay_out(s, &x, x.kind, (Lang)lang, sizes[z][0], sizes[z][1], &v);
                char what[160];
                snprintf(what, sizeof what, "%s %dx%d %s", NAMES[k], sizes[z][0], sizes[z][1], lang ? "zh" : "en");
                print_message("%s\n", what);
                assert_true(L_.title[0] != '\0');
                assert_true(layout_text_width_est(L_.title, L_.px_title) <= L_.header.w);
                // the formula line: with its note, down to the small text, else the formula alone
                char line[800];
                snprintf(line, sizeof line, "%s   %s", L_.formula, L_.formula_note);
                const bool note = layout_text_width_est(line, L_.px_small) <= L_.header.w;
                print_message("%s: the formula's note %s\n", what, note ? "shown" : "left out");
                assert_true(layout_text_width_est(L_.formula, L_.px_small) <= L_.header.w);
                for (int p = 0; p < L_.n_panels; p++) {
                    const Rect r = L_.panel[p];
                    assert_true(r.x >= 0 && r.y >= 0 && r.x + r.w <= L_.w && r.y + r.h <= L_.narration.y);
                    assert_true(L_.spec[p].decimals >= 0 && L_.spec[p].px_cell >= 12);
                    if (lang == LANG_ZH) // the panel's title is the Chinese one
                        assert_true(strcmp(L_.spec[p].title, i18n_get(LANG_EN, "ui.exp_zeroed")) != 0 &&
                                    (unsigned char)L_.spec[p].title[0] >= 0x80);
                }
                if (L_.bars.r.w > 0)
                    assert_true(L_.bars.r.x + L_.bars.r.w <= L_.w && L_.bars.r.y + L_.bars.r.h <= L_.narration.y);
            }
        expview_free(&x);
    }
    session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ablation_table), cmocka_unit_test(test_logit_lens),
        cmocka_unit_test(test_attribution_adds_up), cmocka_unit_test(test_patching), cmocka_unit_test(test_fits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
