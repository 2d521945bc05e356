// test_asserts.c — the invariants core and view assert (issue 37 item 6), SDL-free:
//   - each asserted precondition aborts when a caller breaks it (a stage, panel, cell,
//     operand, language or loop stage out of range), checked in a forked child: before
//     the asserts these calls returned quietly (0, "", "?", a fallback language) and
//     hid the caller's bug;
//   - the guards kept for input that can be bad still answer quietly: an absent stage
//     (trace_find_near's -1), a frame without a result panel, no question in focus,
//     a --loop step the stage does not have.
// asserts are compiled in every build (the Makefile never sets NDEBUG); a build with
// NDEBUG skips the abort checks.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "explain.h"
#include "i18n.h"
#include "layout.h"
#include "lesson.h"
#include "panel.h"
#include "quiz.h"
#include "recipe.h"
#include "session.h"
#include "story.h"
#include "study.h"
#include "tip.h"
#include "trace.h"
#include "trace_ops.h"
#include "view.h"

#include "pure_support.h"

typedef void (*Breach)(const Session *s);

// Runs f in a child: true when it ended by SIGABRT (an assert), false when it returned.
static bool aborts(const Session *s, Breach f)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "w", stderr); // (the assert's line: expected)
        (void)null;
        f(s);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void layer_past_end(const Session *s) { (void)trace_layer_at(&s->trace, s->trace.n); }
static void near_negative(const Session *s) { (void)trace_find_near(&s->trace, -1, "mask"); }
static void same_past_end(const Session *s) { (void)trace_same_in_layer(&s->trace, s->trace.n, 0); }
static void loop_steps_past_end(const Session *s) { (void)recipe_loop_steps(&s->trace, s->trace.n); }
static void name_past_end(const Session *s) { (void)recipe_name_of(&s->trace, s->trace.n); }
static void title_bad_lang(const Session *s) { (void)lesson_title(&s->lesson, LANG_COUNT); }
static void text_bad_lang(const Session *s)
{
    for (int i = 0; i < s->trace.n; i++) // a stage the lesson narrates (text_at asserts the language then)
        if (lesson_stage_text(&s->lesson, &s->trace, i, LANG_EN)) (void)lesson_stage_text(&s->lesson, &s->trace, i, LANG_COUNT);
}
static void stage_text_past_end(const Session *s) { (void)lesson_stage_text(&s->lesson, &s->trace, s->trace.n, LANG_EN); }
static void i18n_bad_lang(const Session *s) { (void)s, (void)i18n_get(LANG_COUNT, "app.loaded"); }
static void i18n_key_past_end(const Session *s) { (void)s, (void)i18n_key_at(LANG_EN, i18n_count(LANG_EN)); }

static void quiz_past_end(const Session *s)
{
    static QuizQuestion q[2];
    (void)quiz_stage(&s->trace, &s->lesson, LANG_EN, 1, s->trace.n, q, 2);
}

static void push_future_operand(const Session *s)
{
    Trace tr;
    trace_init(&tr);
    int shape[2] = {1, 1};
    (void)s;
    (void)trace_push(&tr, STAGE_INPUT, 2, shape, 0, -1, -1); // stage 0 reads stage 0: not pushed yet
}

static void tip_row_past_end(const Session *s)
{
    const Tensor *t = &s->trace.stages[trace_find(&s->trace, "scores")].t; // (B, H, L, L)
    (void)tip_row(t, 0, 0, t->shape[2]);
}

static void tip_head_past_end(const Session *s)
{
    const Tensor *t = &s->trace.stages[trace_find(&s->trace, "scores")].t;
    (void)tip_row(t, 0, t->shape[1], 0);
}

static void step_past_end(const Session *s) { (void)s, (void)step_name(STEP_COUNT); }
static void kind_past_end(const Session *s) { (void)s, (void)quiz_kind_name(QUIZ_KIND_COUNT); }
static void op_sym_past_end(const Session *s) { (void)recipe_op_sym(&s->trace, s->trace.n, 0); }

static void pattern_head_past_end(const Session *s)
{
    int a = trace_find(&s->trace, "attn");
    if (a < 0) _exit(0); // (the lesson has one: this breach then counts as silent)
    HeadPattern p;
    story_head_pattern(&s->trace, a, 0, s->trace.stages[a].t.shape[1], &p);
}

static void lerp_into_other(const Session *s)
{
    char err[LESSON_ERR_MAX];
    Session *o = session_create("lessons/arange-2x4x4.json", err, sizeof err); // (other stages, other sizes)
    Trace mid;
    if (!o || !trace_clone(&mid, &o->trace)) _exit(0);
    trace_lerp(&mid, &s->trace, &s->trace, 0.5f); // mid: a clone of another trace
}

static View view_at(const Session *s, const char *stage)
{
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    v.stage = trace_find(&s->trace, stage);
    v.anim = 1.0f;
    return v;
}

static void panel_value_past_end(const Session *s)
{
    static Layout L;
    View v = view_at(s, "scores");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    const PanelSpec *ps = &L.spec[L.result_panel];
    (void)panel_value(ps, ps->rows, 0);
}

static void explain_panel_past_end(const Session *s)
{
    static Layout L;
    View v = view_at(s, "scores");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    char out[256];
    explain_cell(&s->trace, &v, &L, L.n_panels, 0, 0, out, sizeof out);
}

static void loop_cell_past_end(const Session *s)
{
    static Layout L;
    View v = view_at(s, "scores");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    PanelSpec ps = L.spec[L.result_panel];
    ps.stage = s->trace.n;
    (void)recipe_loop_cell(&s->trace, &v, &ps, 0, 0);
}

static void zoom_result_past_end(const Session *s)
{
    static Layout L;
    View v = view_at(s, "scores");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    L.result_panel = L.n_panels; // (layout's own index: never past its panels)
    (void)layout_zoom_at(&v, &L, -1, -1, 2.0f);
}

static void test_breaches_abort(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip();
#endif
    Session *s = open_session("lessons/llama-block.json"); // a pre-norm RoPE block: stages of most kinds
    const struct {
        const char *what;
        Breach f;
    } cases[] = {
        {"trace_layer_at(n)", layer_past_end},
        {"trace_find_near(-1)", near_negative},
        {"trace_same_in_layer(n)", same_past_end},
        {"trace_push reading a stage not pushed", push_future_operand},
        {"recipe_loop_steps(n)", loop_steps_past_end},
        {"recipe_name_of(n)", name_past_end},
        {"quiz_stage(n)", quiz_past_end},
        {"lesson_title(LANG_COUNT)", title_bad_lang},
        {"lesson_stage_text(LANG_COUNT)", text_bad_lang},
        {"lesson_stage_text(n)", stage_text_past_end},
        {"i18n_get(LANG_COUNT)", i18n_bad_lang},
        {"i18n_key_at(count)", i18n_key_past_end},
        {"tip_row(row L)", tip_row_past_end},
        {"tip_row(head H)", tip_head_past_end},
        {"panel_value(rows)", panel_value_past_end},
        {"explain_cell(n_panels)", explain_panel_past_end},
        {"step_name(STEP_COUNT)", step_past_end},
        {"quiz_kind_name(QUIZ_KIND_COUNT)", kind_past_end},
        {"recipe_op_sym(n)", op_sym_past_end},
        {"story_head_pattern(head H)", pattern_head_past_end},
        {"trace_lerp into a clone of another trace", lerp_into_other},
        {"recipe_loop_cell(panel of stage n)", loop_cell_past_end},
        {"layout_zoom_at(result panel n_panels)", zoom_result_past_end},
    };
    int quiet = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!aborts(s, cases[i].f)) print_error("%s returned instead of asserting\n", cases[i].what), quiet++;
    session_destroy(s);
    if (quiet) fail_msg("%d of %zu breaches passed silently", quiet, sizeof cases / sizeof cases[0]);
}

// The guards kept: input that can be bad gets a quiet answer, never an abort.
static void test_kept_guards_answer(void **state)
{
    (void)state;
    Session *s = open_session("lessons/kv-cache-decoding.json");
    const Trace *tr = &s->trace; // (then cross-attention-padding's)
    // an absent stage (trace_find_near's -1): "?" and no panel
    assert_string_equal(recipe_name_of(tr, -1).sym, "?");
    static Layout L;
    View v = view_at(s, "decode_attn");
    assert_true(v.stage >= 0);
    layout_compute(&L, tr, &v, 1280, 720);
    assert_null(recipe_add_stage(&L, tr, &v, -1, 0, "", READS_NONE));
    // a frame without a result panel (quiz.c asks of L->result_panel)
    char out[256] = "x";
    explain_cell(tr, &v, &L, -1, 0, 0, out, sizeof out);
    assert_string_equal(out, "");
    explain_row_sum(tr, &v, &L, -1, 0, out, sizeof out);
    assert_string_equal(out, "");
    // --loop beyond the stage's steps (or the L key on a stage of fewer): no text
    int steps = recipe_loop_steps(tr, v.stage);
    assert_true(steps > 0);
    v.loop = steps;
    strcpy(out, "x");
    recipe_loop_text(tr, &v, out, sizeof out);
    assert_string_equal(out, "");
    v.loop = steps - 1;
    recipe_loop_text(tr, &v, out, sizeof out);
    assert_true(out[0] != '\0');
    // a token label asked for a key index past the tokens
    assert_null(lesson_token_label(&s->lesson, 0, s->lesson.len_q));
    // a selection or pin past the panel's cells (made before an edit or the lab changed
    // them), a panel past the stage's; the mouse beside the rows; zoom with no result panel
    Rect q;
    const int r = L.result_panel;
    assert_true(r >= 0 && layout_cell_rect(&L, r, 0, 0, &q));
    assert_false(layout_cell_rect(&L, r, L.spec[r].rows, 0, &q));
    assert_false(layout_cell_rect(&L, r, 0, -1, &q));
    assert_false(layout_cell_rect(&L, L.n_panels, 0, 0, &q));
    int p = -2, row = -2;
    assert_false(layout_hit_sum(&L, -1, -1, &p, &row));
    L.result_panel = -1;
    assert_false(layout_zoom_at(&v, &L, -1, -1, 2.0f));
    session_destroy(s);
    // a key_padding mask's row: the view's batch past the lesson's, a key past the keys
    s = open_session("lessons/cross-attention-padding.json");
    tr = &s->trace;
    int n = -1, mi = trace_find(tr, "mask");
    assert_true(tr->mask_kind == MASK_KEY_PADDING && mi >= 0);
    const float *row0 = recipe_key_padding_row(tr, 0, &n);
    assert_ptr_equal(row0, tr->stages[mi].t.data);
    assert_int_equal(n, tr->stages[mi].t.shape[2]);
    assert_null(recipe_key_padding_row(tr, tr->batch, &n));
    assert_int_equal(n, 0);
    assert_null(recipe_key_padding_row(tr, -1, &n));
    assert_false(recipe_key_is_padding(tr, 0, -1));
    assert_false(recipe_key_is_padding(tr, 0, tr->stages[mi].t.shape[2]));
    session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breaches_abort),
        cmocka_unit_test(test_kept_guards_answer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
