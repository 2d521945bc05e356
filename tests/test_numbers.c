// test_numbers.c — every number a student can check adds up (issue 22): every worked
// sum a tooltip, the Σ column, the derivation strip, the study mode's feedback and
// --quiz write adds up to its result at the precision it shows; and an answer computed
// from the numbers on screen is accepted. Every shipped lesson, both languages.
// SDL-free: the view layer only.
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

#include "compare.h"
#include "compare_text.h"
#include "explain.h"
#include "i18n.h"
#include "layout.h"
#include "quiz.h"
#include "scene.h"
#include "session.h"
#include "tip.h"
#include "view.h"
#include "viewkind.h"

#include "pure_support.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static glob_t shipped_lessons(void)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    assert_true(g.gl_pathc >= 10);
    return g;
}

// The checker itself: numbers as written, their precision, chains of "= " lines.
static void test_evaluator(void **state)
{
    (void)state;
    double v, lo, hi;
    assert_true(tip_eval("28×(-0.10) + 29×0.35 + 30×0.33 + 31×(-0.21) + (-0.46)", &v, &lo, &hi));
    assert_near(v, 10.28, 1e-9);
    // 28 is exact, each 2-decimal number ±0.005
    assert_near(hi - v, (28 + 29 + 30 + 31) * 0.005 + 0.005, 1e-9);
    assert_true(tip_eval("exp(-1.00 − (-1.00)) / 2.0", &v, &lo, &hi));
    assert_near(v, 0.5, 1e-12);
    assert_true(tip_eval("1.71e-16 / 1", &v, &lo, &hi));
    assert_near(hi - v, 0.005e-16, 1e-24);
    assert_true(tip_eval("2 · 3 − 1", &v, &lo, &hi) && v == 5.0 && lo == 5.0);
    assert_false(tip_eval("q1 · k2", &v, &lo, &hi));
    assert_false(tip_eval("28 × …", &v, &lo, &hi));
    char why[256];
    // the K[1,3,0]: its terms sum to 10.28, it said 10.06
    assert_false(tip_adds_up("K[1,3,0] = 10.06\n= Σₖ x[3,k]·W_K[0,k] + b_K[0]\n"
                             "= 28.00×(-0.10) + 29.00×0.35 + 30.00×0.33 + 31.00×(-0.21) + (-0.46)\n= 10.06",
                             why, sizeof why));
    assert_true(tip_adds_up("= 28×(-0.1044) + 29×0.3461 + 30×0.3263 + 31×(-0.2057) + (-0.4620)\n= 10.06", why,
                            sizeof why));
    // one line of pieces, the exp step compared with the result at the end
    assert_true(tip_adds_up("= exp(1.000 − 1.000) / 2.000\n= 1.000 / 2.000 = 0.50", why, sizeof why));
    assert_false(tip_adds_up("= exp(1.000 − 1.000) / 2.000\n= 1.000 / 2.000 = 0.52", why, sizeof why));
    // a line that does not start with "= " begins another chain
    assert_true(tip_adds_up("θ = 1 · 1.00 = 1.00 rad, cos θ = 0.54\n= 2 + 2\n= 4.00", why, sizeof why));
    // said to be approximate
    assert_true(tip_adds_up("= 2 + 2\n≈ 5.00", why, sizeof why));
    double b0, b1;
    assert_true(tip_bounds("x = 1\n= 2.00×3 + 1\n= 7.00", &v, &b0, &b1));
    assert_near(v, 7.0, 1e-12);
    assert_near(b1 - v, 0.015, 1e-12);
}

// Every cell of the shown slices' result panels (of the stages from `from` on), and the Σ
// column of a softmax.
static int check_tooltips_from(const char *file, const Trace *tr, View *v, int from, int *approx)
{
    int n = 0;
    char tip[4096], why[600];
    for (v->stage = from; v->stage < tr->n; v->stage++) {
        Layout L;
        layout_compute(&L, tr, v, 1280, 720);
        if (L.result_panel < 0) continue;
        const PanelSpec *res = &L.spec[L.result_panel];
        int rows = res->rows < 12 ? res->rows : 12, cols = res->cols < 12 ? res->cols : 12;
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                explain_cell(tr, v, &L, L.result_panel, r, c, tip, sizeof tip);
                if (!tip_adds_up(tip, why, sizeof why))
                    fail_msg("%s %s (%s, batch %d, head %d) cell [%d,%d]: %s\n%s", file, tr->stages[v->stage].name,
                             v->lang == LANG_ZH ? "zh" : "en", v->batch, v->head, r, c, why, tip);
                if (strstr(tip, "≈")) (*approx)++;
                n++;
            }
            if (res->row_sums) {
                explain_row_sum(tr, v, &L, L.result_panel, r, tip, sizeof tip);
                if (!tip_adds_up(tip, why, sizeof why))
                    fail_msg("%s %s row %d Σ: %s\n%s", file, tr->stages[v->stage].name, r, why, tip);
                n++;
            }
        }
    }
    return n;
}

static int check_tooltips(const char *file, const Trace *tr, View *v, int *approx)
{
    return check_tooltips_from(file, tr, v, 0, approx);
}

// Every shipped lesson, in each language, at its first and at its last (batch, head)
// slice: fn(path, trace, view, ctx) with the view at stage 0.
typedef void (*ViewFn)(const char *path, const Trace *tr, View *v, void *ctx);
static void each_view(ViewFn fn, void *ctx)
{
    glob_t g = shipped_lessons();
    // and the reference lessons no shipped lesson covers yet: partial rotary, RoPE
    // positions after a prompt and with left padding, a bottom-right causal mask
    glob("tests/ref/rope-*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/ref/causal-bottom-right.lesson.json", GLOB_APPEND, NULL, &g);
    // and today's blocks: pre-norm, RMSNorm, GELU (both forms), SwiGLU
    glob("tests/ref/prenorm-*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/ref/postnorm-*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/ref/llama-block-*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/ref/streaming-sinks-*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/ref/gpt-oss-*.lesson.json", GLOB_APPEND, NULL, &g);
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        const Trace *tr = &ses->trace;
        for (int lang = 0; lang < LANG_COUNT; lang++)
            for (int bh = 0; bh < 2; bh++) {
                View v;
                view_init(&v, &ses->lesson, (Lang)lang);
                v.batch = bh ? tr->batch - 1 : 0, v.head = bh ? tr->n_heads - 1 : 0;
                fn(g.gl_pathv[f], tr, &v, ctx);
            }
        session_destroy(ses);
    }
    globfree(&g);
}

typedef struct Counts {
    int n, approx, drawn, wide;
} Counts;

static void tooltips_of(const char *path, const Trace *tr, View *v, void *ctx)
{
    Counts *c = ctx;
    c->n += check_tooltips(path, tr, v, &c->approx);
}

static void test_tooltips_add_up(void **state)
{
    (void)state;
    Counts c = {0};
    each_view(tooltips_of, &c);
    print_message("%d tooltips add up (%d say ≈)\n", c.n, c.approx);
    assert_true(c.n > 5000);
    assert_true(c.approx * 100 <= c.n); // "≈" is the exception
}

// The backward view (session_set_backward) of every shipped language model, both languages,
// first and last head: every gradient cell's tooltip adds up as written (the loss's p − y,
// dX = dY·W, dW = dYᵀ·X, dA = dO·Vᵀ, the Jacobian, dS, dQ, dK), and so does every value
// question's explanation. With them the backward references' lessons of gpt-oss's sink logits
// (no shipped language model has them): ∂L/∂sinks's worked sums too.
static void test_backward_tooltips_add_up(void **state)
{
    (void)state;
    glob_t g = shipped_lessons();
    assert_int_equal(glob("tests/ref/backward/*sinks*.lesson.json", GLOB_APPEND, NULL, &g), 0);
    static QuizQuestion qs[QUIZ_MAX_QUESTIONS + 8];
    int n = 0, approx = 0, worked = 0, models = 0, asked = 0, rises = 0, params = 0, sinks = 0;
    char err[600], why[600];
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        if (ses->lesson.cfg.vocab_size <= 0) {
            assert_false(session_set_backward(ses, true, err, sizeof err)); // not a language model: refused
            assert_non_null(strstr(err, "language model"));
            session_destroy(ses);
            continue;
        }
        const int n_fwd = ses->trace.n;
        assert_true(session_set_backward(ses, true, err, sizeof err));
        const Trace *tr = &ses->trace;
        assert_true(tr->n > n_fwd + 10);
        models++;
        for (int lang = 0; lang < LANG_COUNT; lang++) {
            for (int bh = 0; bh < 2; bh++) {
                View v;
                view_init(&v, &ses->lesson, (Lang)lang);
                v.batch = bh ? tr->batch - 1 : 0, v.head = bh ? tr->n_heads - 1 : 0;
                n += check_tooltips_from(g.gl_pathv[f], tr, &v, n_fwd, &approx);
                for (v.stage = n_fwd; v.stage < tr->n; v.stage++) { // the worked sums are there
                    Layout L;
                    layout_compute(&L, tr, &v, 1280, 720);
                    char tip[4096];
                    const PanelSpec *rp = &L.spec[L.result_panel]; // (cell 1, 1, or a vector's second)
                    explain_cell(tr, &v, &L, L.result_panel, rp->rows > 1 ? 1 : 0, rp->cols > 1 ? 1 : 0, tip, sizeof tip);
                    worked += strstr(tip, "×") != NULL;
                    if (tr->stages[v.stage].kind == STAGE_KIND_GRAD_PARAM) params += strstr(tip, "\n= ") != NULL;
                    const char *nm = tr->stages[v.stage].name;
                    if (strlen(nm) > 5 && strcmp(nm + strlen(nm) - 5, "sinks") == 0) sinks += strstr(tip, "×") != NULL;
                }
            }
            int nq = quiz_all(tr, &ses->lesson, (Lang)lang, 1, true, qs, QUIZ_MAX_QUESTIONS + 8);
            for (int i = 0; i < nq; i++)
                if (qs[i].kind == QUIZ_RISES) { // the key of the row's most negative ∂L/∂s
                    const Tensor *t = &tr->stages[qs[i].stage].t;
                    const int Lk = t->shape[3], j = (int)qs[i].answer[0];
                    const float *row = t->data + (((size_t)qs[i].batch * t->shape[1] + qs[i].head) * t->shape[2] +
                                                  qs[i].cell[0]) * Lk;
                    assert_true(row[j] < 0.0f);
                    for (int k = 0; k < Lk; k++) assert_true(row[k] >= row[j]);
                    rises++;
                }
            for (int i = 0; i < nq; i++)
                if (qs[i].stage >= n_fwd && qs[i].kind == QUIZ_VALUE) {
                    asked++;
                    if (!tip_adds_up(qs[i].explanation, why, sizeof why))
                        fail_msg("%s %s: %s\n%s", g.gl_pathv[f], qs[i].id, why, qs[i].explanation);
                }
        }
        session_destroy(ses);
    }
    globfree(&g);
    print_message("%d backward tooltips add up (%d say ≈; %d worked sums, %d of them a bias's, γ's, β's, an "
                  "embedding's or W₁'s, %d a sink logit's; %d value questions, %d which-key-rises) in %d models\n",
                  n, approx, worked, params, sinks, asked, rises, models);
    assert_true(models >= 1 && n > 1000 && worked > 40 && asked > 0 && rises > 0 && params > 20);
    assert_true(sinks >= 2 * 2 * 3); // (2 languages × 2 slices × the 3 sink stages: 1 + 2 layers)
    assert_true(approx * 100 <= n);
}

// The derivation strip: every line follows from the lines it reads, as written, at every
// size the strip is drawn at (and every row, every score cell).
static void strips_of(const char *path, const Trace *tr, View *v, void *ctx)
{
    static const int sizes[][2] = {{800, 600}, {1024, 768}, {1280, 720}, {1920, 1080}};
    Counts *c = ctx;
    char why[300];
    for (v->stage = 0; v->stage < tr->n; v->stage++)
        for (int z = 0; z < 4; z++) {
            Layout L;
            layout_compute(&L, tr, v, sizes[z][0], sizes[z][1]);
            Derivation d;
            if (!scene_derivation(&L, tr, v, 0, 0, &d)) break;
            c->drawn += L.deriv.w > 0;
            if (z) continue; // the numbers do not depend on the size
            const PanelSpec *res = &L.spec[L.result_panel];
            for (int r = 0; r < res->rows && r < 16; r++)
                for (int col = 0; col < res->cols && col < 16; col++) {
                    assert_true(scene_derivation(&L, tr, v, r, col, &d));
                    if (!scene_derivation_adds_up(&d, why, sizeof why))
                        fail_msg("%s %s row %d col %d: %s", path, tr->stages[v->stage].name, r, col, why);
                    for (int i = 0; i < d.n_lines; i++) c->wide += d.line[i].dec > 4;
                    c->n++;
                    if (d.col < 0) break; // a row's strip
                }
        }
}

static void test_strips_add_up(void **state)
{
    (void)state;
    Counts c = {0};
    each_view(strips_of, &c);
    print_message("%d strips add up (%d drawn; %d lines with more than 4 decimals)\n", c.n, c.drawn, c.wide);
    assert_true(c.n > 500 && c.drawn > 50);
}

// --quiz and the study mode: each value's explanation adds up, and the answer computed
// from the operands as the cells show them is accepted; so is the explanation's own.
static void test_quiz_accepts_the_screen(void **state)
{
    (void)state;
    glob_t g = shipped_lessons();
    static QuizQuestion qs[QUIZ_MAX_QUESTIONS + 8];
    int checked = 0;
    char why[600];
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Session *ses = open_session(g.gl_pathv[f]);
        const Trace *tr = &ses->trace;
        for (int lang = 0; lang < LANG_COUNT; lang++)
            for (uint64_t seed = 0; seed < 4; seed++) {
                int n = quiz_all(tr, &ses->lesson, (Lang)lang, seed, true, qs, QUIZ_MAX_QUESTIONS + 8);
                for (int i = 0; i < n; i++) {
                    QuizQuestion *q = &qs[i];
                    if (q->kind != QUIZ_VALUE && q->kind != QUIZ_SUM) continue;
                    if (!tip_adds_up(q->explanation, why, sizeof why))
                        fail_msg("%s %s: %s\n%s", g.gl_pathv[f], q->id, why, q->explanation);
                    double v;
                    // the sum as written, then relu / gelu / silu of it or SwiGLU's product with the gate
                    if (quiz_screen_value(tr, q->stage, q->explanation, &v)) {
                        float given = (float)v;
                        if (!quiz_check(q, &given, 1))
                            fail_msg("%s %s: the explanation's %g is refused (answer %g ± %g)", g.gl_pathv[f], q->id,
                                     v, (double)q->answer[0], (double)q->tolerance);
                    }
                    // the operands as the cells show them (2 decimals at 1280×720)
                    View view;
                    view_init(&view, &ses->lesson, (Lang)lang);
                    view.stage = q->stage, view.batch = q->batch < 0 ? 0 : q->batch, view.head = q->head < 0 ? 0 : q->head;
                    const Tensor *qt = &tr->stages[q->stage].t; // a shared K/V head: its first query head
                    if (qt->rank == 4 && qt->shape[1] < tr->n_heads) view.head *= tr->n_heads / qt->shape[1];
                    Layout L;
                    layout_compute(&L, tr, &view, 1280, 720);
                    char cells[2048];
                    if (q->kind == QUIZ_VALUE)
                        explain_cell_as_cells(tr, &view, &L, L.result_panel, q->cell[0], q->cell[1], 2, cells, sizeof cells);
                    else
                        explain_row_sum_as_cells(tr, &view, &L, L.result_panel, q->cell[0], 2, cells, sizeof cells);
                    if (quiz_screen_value(tr, q->stage, cells, &v)) {
                        float given = (float)v;
                        if (!quiz_check(q, &given, 1))
                            fail_msg("%s %s: %g computed from the screen is refused (answer %g ± %g)\n%s", g.gl_pathv[f],
                                     q->id, v, (double)q->answer[0], (double)q->tolerance, cells);
                        checked++;
                    }
                }
            }
        session_destroy(ses);
    }
    globfree(&g);
    assert_true(checked > 100);
}

// The compare view (issue 41): Δ's cell is B's number minus A's as the cells show them (each
// panel rounding on its own left a Δ one unit off the shown B − A), its tooltip adds up and says
// the same, and Δ's colour scale reaches the stage's max |Δ| (every head and batch) the header
// writes, whichever head is on screen (it was the head's own range: ±0.19 beside a header's 0.205).
static void compare_frames_add_up(const char *path, const char *spec, int *cells, int *units_off, int *tips)
{
    Session *a = open_session(path);
    char err[600], why[600];
    CompareSpec sp;
    assert_true(compare_parse_spec(spec, &sp, err, sizeof err));
    Session *b = compare_open_b(a, NULL, &sp, err, sizeof err);
    if (!b) fail_msg("%s %s: %s", path, spec, err);
    Compare c;
    assert_true(compare_traces(&a->trace, &b->trace, &c, err, sizeof err));
    const Trace *tr = &a->trace;
    static Layout L;
    static char tip[4096];
    for (int lang = 0; lang < LANG_COUNT; lang++)
        for (int stage = 0; stage < tr->n; stage++)
            for (int h = 0; h < tr->n_heads; h++)
                for (int size = 0; size < 2; size++) {
                    View v;
                    view_init(&v, &a->lesson, (Lang)lang);
                    v.kind = VIEW_COMPARE, v.cmp = &c, v.cmp_b = &b->trace, v.cmp_spec = spec;
                    v.stage = stage, v.head = h;
                    layout_compute(&L, tr, &v, size ? 1920 : 1280, size ? 1080 : 720);
                    const CompareStage *e = &c.st[stage];
                    if (L.n_panels != 3 || e->a != stage || e->b < 0) continue;
                    float m = 0.0f; // the stage's largest finite |Δ|
                    for (size_t i = 0; i < e->delta.size; i++)
                        if (isfinite(e->delta.data[i]) && fabsf(e->delta.data[i]) > m) m = fabsf(e->delta.data[i]);
                    if (m > 0.0f) {
                        if (L.group[1].scale.hi != m)
                            fail_msg("%s %s %s h%d: Δ's scale ±%g, the stage's max |Δ| %g", path, spec, tr->stages[stage].name,
                                     h, (double)L.group[1].scale.hi, (double)m);
                        char mt[32];
                        compare_text_delta(e->max_abs, mt, sizeof mt);
                        if (isfinite(e->max_abs) && !strstr(L.formula, mt))
                            fail_msg("%s %s: the header \"%s\" lacks %s", path, tr->stages[stage].name, L.formula, mt);
                    }
                    const PanelSpec *pa = &L.spec[0], *pb = &L.spec[1], *pd = &L.spec[2];
                    if (pa->decimals < 0 || pd->decimals < 0) continue;
                    assert_int_equal(pa->decimals, pd->decimals);
                    assert_int_equal(pb->decimals, pd->decimals);
                    const double unit = pow(10.0, -pd->decimals);
                    for (int r = 0; r < pa->rows && r < 12; r++)
                        for (int col = 0; col < pa->cols && col < 12; col++) {
                            char sa[32], sb[32], sd[32];
                            panel_format_number(panel_value(pa, r, col), pa->decimals, sa, sizeof sa);
                            panel_format_number(panel_value(pb, r, col), pb->decimals, sb, sizeof sb);
                            panel_format_number(panel_value(pd, r, col), pd->decimals, sd, sizeof sd);
                            const double xa = strtod(sa, NULL), xb = strtod(sb, NULL), xd = strtod(sd, NULL);
                            if (!isfinite(panel_value(pa, r, col)) || !isfinite(panel_value(pb, r, col))) continue;
                            if (fabs(xd - (double)(float)(xb - xa)) > unit / 4) // (float: a −1e9 fill)
                                fail_msg("%s %s %s h%d [%d,%d]: Δ shows %s, B − A as shown %s − %s", path, spec,
                                         tr->stages[stage].name, h, r, col, sd, sb, sa);
                            const float exact = pd->data[(size_t)r * (size_t)pd->rs + (size_t)col * (size_t)pd->cs];
                            char se[32];
                            panel_format_number(exact, pd->decimals, se, sizeof se);
                            *units_off += strcmp(se, sd) != 0; // where rounding Δ itself would not add up
                            (*cells)++;
                            if (r < 3 && col < 3 && size == 0) {
                                viewkind_of(VIEW_COMPARE)->tip(&L, tr, &v, 2, r, col, tip, sizeof tip);
                                if (!tip_adds_up(tip, why, sizeof why))
                                    fail_msg("%s %s [%d,%d]: %s\n%s", tr->stages[stage].name, spec, r, col, why, tip);
                                char want[96];
                                snprintf(want, sizeof want, " − %s = %s", sa, sd);
                                if (!strstr(tip, want)) fail_msg("%s [%d,%d]: tooltip lacks \"%s\"\n%s", tr->stages[stage].name, r, col, want, tip);
                                (*tips)++;
                            }
                        }
                }
    compare_free(&c);
    session_destroy(b);
    session_destroy(a);
}

static void test_compare_adds_up(void **state)
{
    (void)state;
    int cells = 0, off = 0, tips = 0;
    compare_frames_add_up("lessons/induction-heads.json", "ablate:l1.h1", &cells, &off, &tips);
    compare_frames_add_up("lessons/induction-heads.json", "ablate:l1", &cells, &off, &tips);
    compare_frames_add_up("lessons/conventions.json", "set:model.window_convention=flash", &cells, &off, &tips);
    compare_frames_add_up("lessons/conventions.json", "set:model.streaming_positions=cache", &cells, &off, &tips);
    compare_frames_add_up("lessons/arange-2x4x4.json", "set:mask=causal", &cells, &off, &tips);
    print_message("%d compare cells add up as shown (%d where Δ rounded alone would be a unit off), %d tooltips\n", cells,
                  off, tips);
    assert_true(cells > 2000 && off > 0 && tips > 100);
}

// The example in the classic lesson: K[1,3,0] computed from the cells as shown
// (x 28.00 … 31.00, W_K −0.29 0.40 −0.06 0.41, b_K 0.26: 14.65; the trace 14.43) is accepted.
static void test_classic_examples(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/arange-2x4x4.json");
    static QuizQuestion qs[QUIZ_MAX_QUESTIONS];
    int n = quiz_generate(&ses->trace, &ses->lesson, LANG_EN, 1, qs, QUIZ_MAX_QUESTIONS);
    bool seen = false;
    for (int i = 0; i < n; i++)
        if (!strcmp(qs[i].id, "k_proj-value-b1-3-0")) {
            float typed = 14.65f, wrong = 15.2f;
            assert_true(quiz_check(&qs[i], &typed, 1));
            assert_false(quiz_check(&qs[i], &wrong, 1));
            seen = true;
        }
    assert_true(seen);
    session_destroy(ses);
}

// Issue 42's left-over: the gated DeltaNet's state stepped token by token (N, View.loop = t):
// S_t is a d_k × d_v matrix (S_{t−1} beside it as d_k × d_v, k̂_t a column, v_t a row); each of
// its cells explains itself as the whole-sequence panel's cell (t, i·d_v + j) does (the same header,
// formula and result; the operands at each frame's one precision), with
// α_t × S_{t−1}[i, j] + k̂_t[i] × δ[j] adding up; S_{t−1}'s cells are row t − 1's. Both languages.
static void test_state_steps(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/gated-deltanet.json");
    const Trace *tr = &ses->trace;
    const int dk = tr->d_k, dv = tr->d_v;
    char tip[4096], flat[4096], why[600];
    int n = 0;
    for (int lang = 0; lang < LANG_COUNT; lang++)
        for (int s = 0; s < tr->n; s++) {
            if (tr->stages[s].kind != STAGE_KIND_LIN_STATE) continue;
            for (int t = 0; t < tr->len_q; t++) {
                View v, w;
                view_init(&v, &ses->lesson, (Lang)lang);
                v.stage = s, v.head = tr->n_heads - 1, w = v;
                v.loop = t;
                Layout L, F;
                layout_compute(&L, tr, &v, 1280, 720);
                layout_compute(&F, tr, &w, 1280, 720);
                assert_true(L.result_panel >= 0 && F.result_panel >= 0);
                const PanelSpec *res = &L.spec[L.result_panel];
                assert_int_equal(res->rows, dk);
                assert_int_equal(res->cols, dv);
                assert_int_equal(L.n_panels, t > 0 ? 4 : 3); // S_{t−1}, k̂_t, v_t, S_t
                if (t > 0) {
                    const PanelSpec *prev = &L.spec[0];
                    assert_false(prev->result);
                    for (int i = 0; i < dk * dv; i++)
                        assert_true(panel_value(prev, i / dv, i % dv) == panel_value(&F.spec[F.result_panel], t - 1, i));
                }
                for (int i = 0; i < dk; i++)
                    for (int j = 0; j < dv; j++) {
                        explain_cell(tr, &v, &L, L.result_panel, i, j, tip, sizeof tip);
                        explain_cell(tr, &w, &F, F.result_panel, t, i * dv + j, flat, sizeof flat);
                        // the same cell, formula and result; the operands' decimals are each frame's
                        // own (one value, one rounding a frame: test_one_rounding_a_frame)
                        const char *tl = strrchr(tip, '\n'), *fl = strrchr(flat, '\n');
                        const char *eq = strstr(tip, "\n= ");
                        const size_t head = eq ? (size_t)(eq - tip) : strlen(tip);
                        if (!tl || !fl || strcmp(tl, fl) != 0 || strncmp(tip, flat, head) != 0)
                            fail_msg("%s t %d [%d,%d]:\n%s\nagainst\n%s", tr->stages[s].name, t, i, j, tip, flat);
                        if (!tip_adds_up(tip, why, sizeof why)) fail_msg("%s t %d [%d,%d]: %s\n%s", tr->stages[s].name, t, i, j, why, tip);
                        if (t > 0 && !strstr(tip, "×")) fail_msg("%s t %d: no worked sum\n%s", tr->stages[s].name, t, tip);
                        n++;
                    }
            }
        }
    print_message("%d state cells stepped, each explained as the sequence's cell\n", n);
    assert_true(n >= 2 * 3 * 8 * 16);
    session_destroy(ses);
}

// Issue 41's text bugs in the gated DeltaNet lesson: no TeX braces on screen ("S_{t−1}" in the
// narration and the formula, both languages), and each panel of a stepped state frame named as the
// formula names it (the row of V was titled "V_3" beside "v_t" in the formula: now "v_3").
static void test_state_names(void **state)
{
    (void)state;
    Session *ses = open_session("lessons/gated-deltanet.json");
    const Trace *tr = &ses->trace;
    char buf[600];
    int frames = 0;
    for (int lang = 0; lang < LANG_COUNT; lang++)
        for (int s = 0; s < tr->n; s++) {
            const bool state_stage = tr->stages[s].kind == STAGE_KIND_LIN_STATE;
            for (int t = -1; t < (state_stage ? tr->len_q : 0); t++) {
                View v;
                view_init(&v, &ses->lesson, (Lang)lang);
                v.stage = s, v.loop = t;
                Layout L;
                layout_compute(&L, tr, &v, 1280, 720);
                const char *texts[] = {L.formula, L.formula_note, scene_narration(tr, &v, buf, sizeof buf)};
                for (int k = 0; k < 3; k++)
                    if (strstr(texts[k], "_{"))
                        fail_msg("%s (%s, t %d): TeX braces on screen: %s", tr->stages[s].name, lang ? "zh" : "en", t, texts[k]);
                for (int p = 0; p < L.n_panels && state_stage && t >= 0; p++) { // "SYM_3 (h0)": SYMₜ in the formula
                    char sym[32], sub[48], und[48];
                    snprintf(sym, sizeof sym, "%s", L.spec[p].title);
                    char *u = strchr(sym, '_');
                    assert_non_null(u);
                    *u = '\0';
                    snprintf(sub, sizeof sub, "%s\xE2\x82\x9C", sym), snprintf(und, sizeof und, "%s_t", sym);
                    if (!strstr(L.formula, sub) && !strstr(L.formula, und))
                        fail_msg("%s t %d: the panel \"%s\" is not named in the formula \"%s\"", tr->stages[s].name, t,
                                 L.spec[p].title, L.formula);
                }
                frames++;
            }
        }
    print_message("%d frames without TeX braces, their panels named as the formula names them\n", frames);
    session_destroy(ses);
}

// One value, one rounding in a frame (issue 40): every operand a frame's worked sums write (the
// result's cells and Σ column, every cell) is written with one number of decimals wherever it
// appears (concat[0,0,0] was -10.5957 in output[0,0,0]'s tooltip and -10.596 in output[0,0,1]'s).
// A number of a piece with two numbers or more ("a×b + c") is an operand; it is the value of a
// cell of the frame's panels that it is a rounding of ("%.*f").
typedef struct Seen {
    float x;
    int dec;
    char as[24];
} Seen;

static int cmp_seen(const void *a, const void *b)
{
    float x = ((const Seen *)a)->x, y = ((const Seen *)b)->x;
    return (x > y) - (x < y);
}

// The operands of text's worked sums, each matched to the values it rounds; 0 when two differ.
static int match_operands(const char *text, Seen *vals, int nv, char *why, size_t n)
{
    int matched = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "= ", 2) && strncmp(line, "≈ ", strlen("≈ "))) continue;
        const char *end = strchr(line, '\n') ? strchr(line, '\n') : line + strlen(line);
        char buf[1024];
        size_t len = (size_t)(end - line) < sizeof buf - 1 ? (size_t)(end - line) : sizeof buf - 1;
        memcpy(buf, line, len), buf[len] = '\0';
        for (char *piece = strchr(buf, ' ') + 1; piece;) { // "= a×b + c = d": the pieces between " = "
            char *next = strstr(piece, " = ");
            if (next) *next = '\0', next += 3;
            char tok[32][24];
            int nt = 0, nums = 0;
            for (const char *q = piece; *q; q++) {
                if (!(*q >= '0' && *q <= '9') || (q > piece && ((q[-1] >= '0' && q[-1] <= '9') || q[-1] == '.')))
                    continue;
                const char *a = q > piece && q[-1] == '-' ? q - 1 : q, *b = q;
                while ((*b >= '0' && *b <= '9') || *b == '.') b++;
                nums++;
                if (memchr(q, '.', (size_t)(b - q)) && *b != 'e' && nt < 32 && b - a < 24)
                    memcpy(tok[nt], a, (size_t)(b - a)), tok[nt][b - a] = '\0', nt++;
            }
            for (int t = 0; t < nt && nums >= 2; t++) {
                int dec = (int)strlen(strchr(tok[t], '.') + 1);
                double v = strtod(tok[t], NULL), half = 0.5 * pow(10.0, -dec) + 1e-9;
                int lo = 0, hi = nv; // the first value ≥ v − half
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if ((double)vals[mid].x < v - half) lo = mid + 1;
                    else hi = mid;
                }
                for (int i = lo; i < nv && (double)vals[i].x <= v + half; i++) {
                    char w[40];
                    snprintf(w, sizeof w, "%.*f", dec, (double)vals[i].x);
                    if (strcmp(w, tok[t]) && !(w[0] == '-' && !strcmp(w + 1, tok[t]))) continue; // (-0.00 as 0.00)
                    matched++;
                    if (vals[i].dec == 0) {
                        vals[i].dec = dec;
                        snprintf(vals[i].as, sizeof vals[i].as, "%.23s", tok[t]);
                    } else if (vals[i].dec != dec) {
                        snprintf(why, n, "%.7g written %.23s and %.23s", (double)vals[i].x, vals[i].as, tok[t]);
                        return 0;
                    }
                }
            }
            piece = next;
        }
    }
    return matched;
}

static void test_one_rounding_a_frame(void **state)
{
    (void)state;
    // the classic lesson and a trained one (a language model: its backward view's frames too)
    static const char *const files[] = {"lessons/arange-2x4x4.json", "lessons/induction-heads.json"};
    enum { MAX_VALS = 64 * 64 * LAYOUT_MAX_PANELS };
    static Seen vals[MAX_VALS];
    static char tip[4096];
    int frames = 0, operands = 0, tips = 0;
    for (int f = 0; f < 2; f++) {
        Session *ses = open_session(files[f]);
        char err[300];
        if (ses->lesson.cfg.vocab_size > 0) assert_true(session_set_backward(ses, true, err, sizeof err));
        const Trace *tr = &ses->trace;
        for (int bh = 0; bh < 2; bh++) {
            View v;
            view_init(&v, &ses->lesson, LANG_EN);
            v.batch = bh ? tr->batch - 1 : 0, v.head = bh ? tr->n_heads - 1 : 0;
            for (v.stage = 0; v.stage < tr->n; v.stage++) {
                Layout L;
                layout_compute(&L, tr, &v, 1280, 720);
                int nv = 0;
                for (int p = 0; p < L.n_panels; p++)
                    for (int r = 0; r < L.spec[p].rows && r < 64; r++)
                        for (int c = 0; c < L.spec[p].cols && c < 64 && nv < MAX_VALS; c++)
                            vals[nv++] = (Seen){panel_value(&L.spec[p], r, c), 0, ""};
                qsort(vals, (size_t)nv, sizeof *vals, cmp_seen);
                char why[200] = "";
                for (int p = 0; p < L.n_panels; p++) {
                    const PanelSpec *ps = &L.spec[p];
                    int rows = ps->rows < 24 ? ps->rows : 24, cols = ps->cols < 24 ? ps->cols : 24;
                    for (int r = 0; r < rows; r++)
                        for (int c = 0; c <= cols; c++) {
                            if (c == cols && !(ps->result && ps->row_sums)) break;
                            if (c < cols) explain_cell(tr, &v, &L, p, r, c, tip, sizeof tip);
                            else explain_row_sum(tr, &v, &L, p, r, tip, sizeof tip);
                            int m = match_operands(tip, vals, nv, why, sizeof why);
                            if (why[0])
                                fail_msg("%s %s (batch %d, head %d), %s [%d,%d]: %s\n%s", files[f],
                                         tr->stages[v.stage].name, v.batch, v.head, ps->title, r, c, why, tip);
                            operands += m, tips++;
                        }
                }
                frames++;
            }
        }
        session_destroy(ses);
    }
    print_message("%d frames, %d tooltips: %d operands, each value one rounding a frame\n", frames, tips, operands);
    assert_true(frames > 100 && operands > 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evaluator),
        cmocka_unit_test(test_tooltips_add_up),
        cmocka_unit_test(test_backward_tooltips_add_up),
        cmocka_unit_test(test_strips_add_up),
        cmocka_unit_test(test_quiz_accepts_the_screen),
        cmocka_unit_test(test_classic_examples),
        cmocka_unit_test(test_compare_adds_up),
        cmocka_unit_test(test_state_names), cmocka_unit_test(test_state_steps),
        cmocka_unit_test(test_one_rounding_a_frame),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
