// test_quiz.c — the study mode's questions (quiz.h) tell the truth about the trace.
// SDL-free: the view layer only. For every lesson (shipped, the PyTorch references,
// the scene and big lessons, edited ones), both languages and several seeds:
//   - every answer is recomputed here from the trace, independently of quiz.c:
//     a shape from the tensor's shape, a value from the tensor at (b, h, row, col),
//     an argmax as the unique largest weight of the attn row, a row sum in index
//     order, the masked keys from the mask, the NaN / uniform rows from attn and the
//     mask, a concat column's head and column as col / d_v and col % d_v (and the
//     value there equals head_out's);
//   - every kind is asked where the lesson can ask it (masked only with a mask that
//     removes something), at most 3 per stage and 40 in all, ids unique;
//   - questions and explanations are non-empty, with no unfilled {n} placeholder;
//   - a seed reproduces its questions; different seeds differ;
//   - quiz_check accepts the answer (and rejects a wrong one), quiz_parse_answer reads
//     what a student types.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "i18n.h"
#include "quiz.h"
#include "scene.h"

#include "pure_support.h"

// Element (b, h, r, c) of a stage tensor (h ignored for rank 3), by its strides.
static float at(const Tensor *t, int b, int h, int r, int c)
{
    if (t->rank == 4)
        return t->data[(((size_t)b * (size_t)t->shape[1] + (size_t)h) * (size_t)t->shape[2] + (size_t)r) *
                           (size_t)t->shape[3] + (size_t)c];
    return t->data[((size_t)b * (size_t)t->shape[1] + (size_t)r) * (size_t)t->shape[2] + (size_t)c];
}

static bool has_placeholder(const char *s)
{
    for (const char *p = s; *p; p++)
        if (p[0] == '{' && isdigit((unsigned char)p[1]) && p[2] == '}') return true;
    return false;
}

static bool has_kind(const Trace *tr, StageKind k)
{
    for (int s = 0; s < tr->n; s++)
        if (tr->stages[s].kind == k) return true;
    return false;
}

// (a model of linear layers only has no masked scores: its causal mask is the recurrence's)
static bool mask_removes_something(const Trace *tr)
{
    if (!tr->mask_kind || !has_kind(tr, STAGE_KIND_MASKED)) return false;
    for (int mi = 0; mi < tr->n; mi++) { // the model's mask, or a block's own (an encoder–decoder's decoder)
        if (tr->stages[mi].id != STAGE_MASK) continue;
        const Tensor *m = &tr->stages[mi].t;
        for (size_t i = 0; i < m->size; i++)
            if (m->data[i] == 0.0f) return true;
    }
    return false;
}

static bool attn_row_nan(const Tensor *a, int b, int h, int r)
{
    for (int j = 0; j < a->shape[3]; j++)
        if (isnan(at(a, b, h, r, j))) return true;
    return false;
}

static bool mask_row_full(const Tensor *m, int b, int r)
{
    for (int j = 0; j < m->shape[2]; j++)
        if (at(m, b, 0, r, j) != 0.0f) return false;
    return true;
}

static bool in_answer(const QuizQuestion *q, int v)
{
    for (int i = 0; i < q->n_answer; i++)
        if ((int)q->answer[i] == v) return true;
    return false;
}

// The answer of q recomputed from the trace.
static void check_answer(const char *where, const Trace *tr, const QuizQuestion *q)
{
    const Stage *st = &tr->stages[q->stage];
    const Tensor *t = &st->t;
    int b = q->batch, h = q->head < 0 ? 0 : q->head;
    if (q->kind != QUIZ_SHAPE) assert_true(b >= 0 && b < tr->batch);
    if (q->head >= 0) assert_true(t->rank == 4 && q->head < t->shape[1]);
    switch (q->kind) {
    case QUIZ_SHAPE:
        assert_true(q->list && q->n_answer == t->rank && q->n_cell == 0);
        for (int d = 0; d < t->rank; d++) assert_true(q->answer[d] == (float)t->shape[d]);
        break;
    case QUIZ_VALUE: {
        assert_int_equal(q->n_cell, 2);
        assert_false(q->list);
        float x = at(t, b, h, q->cell[0], q->cell[1]);
        if (!isfinite(x) || memcmp(&x, &q->answer[0], sizeof x) != 0)
            fail_msg("%s: %s value [%d,%d] is %g, the trace holds %g", where, q->id, q->cell[0], q->cell[1],
                     (double)q->answer[0], (double)x);
        // at least 0.5 %; more where the operands as the cells show them give another answer (test_numbers)
        assert_true(q->tolerance >= fmaxf(0.005f, 0.005f * fabsf(x)));
        break;
    }
    case QUIZ_ARGMAX: {
        assert_true((st->kind == STAGE_KIND_SOFTMAX || st->kind == STAGE_KIND_DECODE_ATTN) && q->n_cell == 1 && q->tolerance == 0.0f);
        int r = q->cell[0], arg = (int)q->answer[0];
        assert_true(arg >= 0 && arg < t->shape[3]);
        for (int j = 0; j < t->shape[3]; j++)
            if (j != arg && !(at(t, b, h, r, arg) > at(t, b, h, r, j)))
                fail_msg("%s: %s: key %d is not the unique largest of row %d (key %d)", where, q->id, arg, r, j);
        break;
    }
    case QUIZ_SUM: {
        assert_true(st->kind == STAGE_KIND_SOFTMAX && q->n_cell == 1);
        float s = 0.0f;
        for (int j = 0; j < t->shape[3]; j++) s += at(t, b, h, q->cell[0], j);
        if (!(fabsf(s - q->answer[0]) <= 1e-6f)) fail_msg("%s: %s: sum %g, generated %g", where, q->id, (double)s, (double)q->answer[0]);
        if (st->weight) // gpt-oss's sink takes a share: less than 1
            assert_true(q->answer[0] >= 0.0f && q->answer[0] < 1.0f);
        else
            assert_true(fabsf(q->answer[0] - 1.0f) <= 1e-4f); // a softmax row
        break;
    }
    case QUIZ_MASKED: {
        // the mask the masked scores read: the lesson's, a sliding layer's own or the indexer's top-k (issue 42)
        const int ms = st->kind == STAGE_KIND_SOFTMAX ? st->operands[0] : q->stage;
        assert_true(ms >= 0 && tr->stages[ms].operands[1] >= 0);
        const Tensor *m = &tr->stages[tr->stages[ms].operands[1]].t;
        assert_true(q->list && q->unordered && q->n_answer >= 1 && q->n_answer <= QUIZ_MAX_LIST);
        if (st->kind == STAGE_KIND_MASKED) {
            int r = q->cell[0], n = 0;
            assert_int_equal(q->n_cell, 1);
            for (int j = 0; j < m->shape[2]; j++)
                if (at(m, b, 0, r, j) == 0.0f) {
                    n++;
                    if (!in_answer(q, j)) fail_msg("%s: %s: masked key %d missing", where, q->id, j);
                }
            assert_int_equal(n, q->n_answer);
        } else {
            assert_true(st->kind == STAGE_KIND_SOFTMAX && q->n_cell == 0);
            bool nan = strstr(q->question, "NaN") != NULL;
            int n = 0;
            for (int r = 0; r < t->shape[2]; r++) {
                bool hit = nan ? attn_row_nan(t, b, h, r) : mask_row_full(m, b, r) && !attn_row_nan(t, b, h, r);
                if (!hit) continue;
                n++;
                if (!in_answer(q, r)) fail_msg("%s: %s: row %d missing", where, q->id, r);
                if (!nan) // uniform: every weight 1/Lk
                    for (int j = 0; j < t->shape[3]; j++)
                        assert_true(fabsf(at(t, b, h, r, j) - 1.0f / (float)t->shape[3]) <= 1e-6f);
            }
            assert_int_equal(n, q->n_answer);
        }
        break;
    }
    case QUIZ_SOURCE: {
        assert_true(st->kind == STAGE_KIND_CONCAT && q->n_cell == 2 && q->list && q->n_answer == 2);
        int r = q->cell[0], col = q->cell[1];
        assert_true(q->answer[0] == (float)(col / tr->d_v) && q->answer[1] == (float)(col % tr->d_v));
        const Tensor *ho = &tr->stages[st->operands[0]].t; // head_out (a linear layer's: lin_out or lin_parallel)
        float a = at(t, b, 0, r, col), o = at(ho, b, col / tr->d_v, r, col % tr->d_v);
        assert_memory_equal(&a, &o, sizeof a);
        break;
    }
    default:
        fail_msg("%s: %s: unknown kind", where, q->id);
    }
    // the student's answer, as the study mode checks it: right accepted, wrong not
    assert_true(quiz_check(q, q->answer, q->n_answer));
    float wrong[QUIZ_MAX_LIST];
    memcpy(wrong, q->answer, sizeof wrong);
    wrong[0] += q->list || q->tolerance == 0.0f ? 1.0f : 2.0f * q->tolerance + 1.0f;
    if (!(q->unordered && q->n_answer > 1 && in_answer(q, (int)wrong[0]))) assert_false(quiz_check(q, wrong, q->n_answer));
}

static QuizQuestion qa[QUIZ_MAX_QUESTIONS], qb[QUIZ_MAX_QUESTIONS];

static void check_trace(const char *file, const Trace *tr, const Lesson *ls)
{
    static const uint64_t seeds[] = {1, 2, 42, 12345, 0xFFFFFFFFFFFFFFFFull};
    const int n_seeds = (int)(sizeof seeds / sizeof seeds[0]);
    for (int lang = 0; lang < LANG_COUNT; lang++) {
        int distinct = 0;
        char first_ids[QUIZ_MAX_QUESTIONS * 64] = "";
        for (int si = 0; si < n_seeds; si++) {
            char where[800];
            snprintf(where, sizeof where, "%s (%s, seed %llu)", file, lang ? "zh" : "en", (unsigned long long)seeds[si]);
            int n = quiz_generate(tr, ls, (Lang)lang, seeds[si], qa, QUIZ_MAX_QUESTIONS);
            assert_true(n >= 1 && n <= QUIZ_MAX_QUESTIONS);
            int per_stage[TRACE_MAX_STAGES] = {0};
            unsigned kinds = 0;
            char ids[QUIZ_MAX_QUESTIONS * 64] = "";
            for (int i = 0; i < n; i++) {
                const QuizQuestion *q = &qa[i];
                assert_true(q->stage >= 0 && q->stage < tr->n);
                assert_true(++per_stage[q->stage] <= QUIZ_MAX_PER_STAGE);
                assert_true(recipe_of(tr->stages[q->stage].kind)->quiz & QUIZ_BIT(q->kind));
                kinds |= QUIZ_BIT(q->kind);
                if (!q->question[0] || !q->explanation[0] || has_placeholder(q->question) || has_placeholder(q->explanation))
                    fail_msg("%s: %s: question \"%s\" explanation \"%s\"", where, q->id, q->question, q->explanation);
                for (int j = 0; j < i; j++)
                    if (!strcmp(qa[j].id, q->id)) fail_msg("%s: id %s twice", where, q->id);
                check_answer(where, tr, q);
                strncat(ids, q->id, sizeof ids - strlen(ids) - 1);
            }
            // every kind where the lesson can ask it
            for (int k = 0; k < QUIZ_AUTHORED; k++) { // (the lesson's own: test_study)
                bool can = k != QUIZ_MASKED || mask_removes_something(tr);
                if ((k == QUIZ_ARGMAX || k == QUIZ_SUM) && !has_kind(tr, STAGE_KIND_SOFTMAX)) can = false; // (linear layers only)
                if (can && !(kinds & QUIZ_BIT(k))) fail_msg("%s: no %s question", where, quiz_kind_name((QuizKind)k));
                if (!can && (kinds & QUIZ_BIT(k))) fail_msg("%s: a %s question without a mask", where, quiz_kind_name((QuizKind)k));
            }
            // the same seed, the same questions
            int n2 = quiz_generate(tr, ls, (Lang)lang, seeds[si], qb, QUIZ_MAX_QUESTIONS);
            assert_int_equal(n, n2);
            assert_memory_equal(qa, qb, (size_t)n * sizeof qa[0]);
            if (si == 0)
                snprintf(first_ids, sizeof first_ids, "%s", ids);
            else
                distinct += strcmp(first_ids, ids) != 0;
        }
        if (distinct == 0) fail_msg("%s: every seed asks the same questions", file);
    }
}

static void check_file(const char *path, const SessionEdits *ed)
{
    char err[LESSON_ERR_MAX + 200];
    Session *ses = session_open(path, ed, err, sizeof err);
    if (!ses) fail_msg("%s", err);
    char where[600];
    snprintf(where, sizeof where, "%s%s", path, ed ? " (edited)" : "");
    check_trace(where, &ses->trace, &ses->lesson);
    session_destroy(ses);
}

static void test_every_lesson(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    glob("tests/ref/*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/scene/*.json", GLOB_APPEND, NULL, &g);
    glob("tests/big/long-256.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 12);
    for (size_t i = 0; i < g.gl_pathc; i++) check_file(g.gl_pathv[i], NULL);
    globfree(&g);
}

// Edited lessons: a mask added, a NaN row turned uniform (fill −1e9), a value changed.
static void test_edited_lessons(void **state)
{
    (void)state;
    const char *causal[] = {"mask=causal", "input.query[0,1,2]=5"};
    const SessionEdits e1 = {causal, 2, NULL, false, 0, false};
    check_file("lessons/arange-2x4x4.json", &e1);
    const char *fill[] = {"model.mask_fill=-1e9"};
    const SessionEdits e2 = {fill, 1, NULL, false, 0, false};
    check_file("lessons/pitfalls-masked-row.json", &e2);
    const char *scale[] = {"model.scale=1", "mask[0,1,0]=0"};
    const SessionEdits e3 = {scale, 2, NULL, false, 0, false};
    check_file("lessons/causal-decoder.json", &e3);
}

// A lesson with a NaN row asks which rows come out NaN; with fill −1e9, which are uniform.
static void test_nan_and_uniform_rows(void **state)
{
    (void)state;
    for (int edited = 0; edited < 2; edited++) {
        const char *fill[] = {"model.mask_fill=-1e9"};
        const SessionEdits e = {fill, 1, NULL, false, 0, false};
        char err[LESSON_ERR_MAX + 200];
        Session *ses = session_open("lessons/pitfalls-masked-row.json", edited ? &e : NULL, err, sizeof err);
        assert_non_null(ses);
        int attn = trace_find(&ses->trace, "attn"), n = quiz_stage(&ses->trace, &ses->lesson, LANG_EN, 9, attn, qa, 3);
        bool found = false;
        for (int i = 0; i < n; i++)
            if (qa[i].kind == QUIZ_MASKED) {
                found = true;
                assert_non_null(strstr(qa[i].question, edited ? "uniform" : "NaN"));
                assert_int_equal(qa[i].n_answer, 1);
                assert_true(qa[i].answer[0] == 2.0f);
            }
        assert_true(found);
        session_destroy(ses);
    }
}

// A worksheet's questions (issue 35, item 2): only about the slice it prints, every
// lesson, every slice; its answers written as the question asks (2 decimals: "0.00").
static void test_slice_and_answer_text(void **state)
{
    (void)state;
    static QuizQuestion qs[QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ];
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t f = 0; f < g.gl_pathc; f++) {
        char err[LESSON_ERR_MAX + 200];
        Session *ses = session_open(g.gl_pathv[f], NULL, err, sizeof err);
        assert_non_null(ses);
        const Trace *tr = &ses->trace;
        for (int b = 0; b < tr->batch; b++)
            for (int h = 0; h < tr->n_heads; h++) {
                int n = quiz_all_in_slice(tr, &ses->lesson, LANG_EN, 1, true, b, h, qs, QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ);
                assert_true(n > 0);
                for (int i = 0; i < n; i++) {
                    const QuizQuestion *q = &qs[i];
                    const Tensor *t = &tr->stages[q->stage].t;
                    int kv = t->rank == 4 && t->shape[1] < tr->n_heads ? h / (tr->n_heads / t->shape[1]) : h;
                    if (q->batch >= 0 && q->batch != b) fail_msg("%s b%d h%d: %s asks about batch %d", g.gl_pathv[f], b, h, q->id, q->batch);
                    if (q->head >= 0 && q->head != (q->kind == QUIZ_AUTHORED ? h : kv))
                        fail_msg("%s b%d h%d: %s asks about head %d", g.gl_pathv[f], b, h, q->id, q->head);
                }
            }
        session_destroy(ses);
    }
    globfree(&g);
    QuizQuestion q = {.kind = QUIZ_VALUE, .n_answer = 1, .answer = {7.154e-21f}, .tolerance = 0.005f,
                      .decimals = QUIZ_ASK_DECIMALS};
    char b[64];
    quiz_answer_text(&q, b, sizeof b);
    assert_string_equal(b, "0.00");
    q.answer[0] = -19.703804f, q.tolerance = 0.15f;
    quiz_answer_text(&q, b, sizeof b);
    assert_string_equal(b, "-19.70");
    q.answer[0] = -1e-4f;
    quiz_answer_text(&q, b, sizeof b);
    assert_string_equal(b, "0.00"); // (never "-0.00")
    QuizQuestion shape = {.kind = QUIZ_SHAPE, .list = true, .n_answer = 3, .answer = {2, 4, 4}, .decimals = -1};
    quiz_answer_text(&shape, b, sizeof b);
    assert_string_equal(b, "2 × 4 × 4");
}

static void test_check_and_parse(void **state)
{
    (void)state;
    float v[QUIZ_MAX_LIST];
    int n;
    assert_true(quiz_parse_answer("2x2x4x2", v, QUIZ_MAX_LIST, &n));
    assert_int_equal(n, 4);
    assert_true(v[0] == 2 && v[1] == 2 && v[2] == 4 && v[3] == 2);
    assert_true(quiz_parse_answer("(2, 4, 4)", v, QUIZ_MAX_LIST, &n) && n == 3 && v[2] == 4);
    assert_true(quiz_parse_answer("2×4", v, QUIZ_MAX_LIST, &n) && n == 2 && v[1] == 4);
    assert_true(quiz_parse_answer(" −0.25 ", v, QUIZ_MAX_LIST, &n) && n == 1 && v[0] == -0.25f);
    assert_true(quiz_parse_answer("[1,3]", v, QUIZ_MAX_LIST, &n) && n == 2 && v[1] == 3);
    assert_true(quiz_parse_answer("1e-3", v, QUIZ_MAX_LIST, &n) && n == 1 && v[0] == 1e-3f);
    assert_false(quiz_parse_answer("", v, QUIZ_MAX_LIST, &n));
    assert_false(quiz_parse_answer("abc", v, QUIZ_MAX_LIST, &n));
    assert_false(quiz_parse_answer("1e", v, QUIZ_MAX_LIST, &n));
    assert_false(quiz_parse_answer("nan", v, QUIZ_MAX_LIST, &n));
    assert_false(quiz_parse_answer("1 2 3", v, 2, &n));

    QuizQuestion q;
    memset(&q, 0, sizeof q);
    q.kind = QUIZ_VALUE, q.n_answer = 1, q.answer[0] = 0.42f, q.tolerance = 0.005f;
    float g = 0.424f;
    assert_true(quiz_check(&q, &g, 1));
    g = 0.43f;
    assert_false(quiz_check(&q, &g, 1));
    q.kind = QUIZ_MASKED, q.list = q.unordered = true, q.n_answer = 3, q.tolerance = 0;
    q.answer[0] = 1, q.answer[1] = 2, q.answer[2] = 4;
    float set[] = {4, 1, 2}, short_set[] = {1, 2};
    assert_true(quiz_check(&q, set, 3));
    assert_false(quiz_check(&q, short_set, 2));
    q.unordered = false; // a shape: the order matters
    assert_false(quiz_check(&q, set, 3));
}

static bool shape_of(const Tensor *t, const Tensor *u)
{
    if (t->rank != u->rank) return false;
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] != u->shape[d]) return false;
    return true;
}

// Issue 35: 9 of the classic lesson's 19 questions asked a shape, most of them the same
// transform again (k_proj and v_proj after q_proj, k_heads and v_heads after q_heads). A
// shape is asked once for a kind of stage making it from the same shapes, never for a
// projection that keeps its input's shape.
static void test_shapes_not_repeated(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t f = 0; f < g.gl_pathc; f++) {
        char err[LESSON_ERR_MAX + 200];
        Session *ses = session_open(g.gl_pathv[f], NULL, err, sizeof err);
        if (!ses) fail_msg("%s", err);
        const Trace *tr = &ses->trace;
        int n = quiz_generate(tr, &ses->lesson, LANG_EN, 1, qa, QUIZ_MAX_QUESTIONS), shapes = 0;
        for (int i = 0; i < n; i++) {
            if (qa[i].kind != QUIZ_SHAPE) continue;
            shapes++;
            const Stage *st = &tr->stages[qa[i].stage];
            int o0 = st->operands[0];
            if (st->kind == STAGE_KIND_PROJECTION && o0 >= 0 && st->operands[1] < 0 && shape_of(&tr->stages[o0].t, &st->t))
                fail_msg("%s: %s asks a projection's shape, the same as its input's", g.gl_pathv[f], qa[i].id);
            for (int j = 0; j < i; j++) {
                if (qa[j].kind != QUIZ_SHAPE) continue;
                const Stage *sj = &tr->stages[qa[j].stage];
                bool same = sj->kind == st->kind && shape_of(&sj->t, &st->t);
                for (int k = 0; k < TRACE_MAX_OPERANDS && same; k++) {
                    int a = sj->operands[k], b = st->operands[k];
                    same = (a < 0) == (b < 0) && (a < 0 || shape_of(&tr->stages[a].t, &tr->stages[b].t));
                }
                if (same) fail_msg("%s: %s asks again what %s asked", g.gl_pathv[f], qa[i].id, qa[j].id);
            }
        }
        if (strstr(g.gl_pathv[f], "arange-2x4x4") && shapes != 4) // split, scores, head_out, concat (9 before)
            fail_msg("%s: %d of %d questions ask a shape", g.gl_pathv[f], shapes, n);
        session_destroy(ses);
    }
    globfree(&g);
}

// A wrong shape that leaves out the batch dimension says so (issue 35), in both languages;
// the heads dimension left out, the sizes in another order too; a right answer or another
// mistake says nothing.
static void test_shape_mistakes(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX + 200];
    Session *ses = session_open("lessons/arange-2x4x4.json", NULL, err, sizeof err);
    assert_non_null(ses);
    for (int lang = 0; lang < LANG_COUNT; lang++) {
        int n = quiz_generate(&ses->trace, &ses->lesson, (Lang)lang, 1, qa, QUIZ_MAX_QUESTIONS);
        const QuizQuestion *split = NULL, *concat = NULL;
        for (int i = 0; i < n; i++)
            if (qa[i].kind == QUIZ_SHAPE && !strcmp(ses->trace.stages[qa[i].stage].name, "q_heads")) split = &qa[i];
            else if (qa[i].kind == QUIZ_SHAPE && !strcmp(ses->trace.stages[qa[i].stage].name, "concat")) concat = &qa[i];
        assert_non_null(split);
        assert_non_null(concat);
        char why[300];
        const float no_batch[] = {2, 4, 2}, right[] = {2, 2, 4, 2}, order[] = {2, 4, 2, 2}, other[] = {2, 4, 4};
        const float concat_no_batch[] = {4, 4}, no_heads_5[] = {2, 4, 2, 9};
        quiz_shape_mistake(split, no_batch, 3, (Lang)lang, why, sizeof why);
        if (lang == LANG_EN) assert_string_equal(why, "You left out the batch dimension B=2: PyTorch keeps it first, even for one example");
        else assert_non_null(strstr(why, "批次维度 B=2"));
        quiz_shape_mistake(concat, concat_no_batch, 2, (Lang)lang, why, sizeof why);
        assert_non_null(strstr(why, "B=2"));
        quiz_shape_mistake(split, order, 4, (Lang)lang, why, sizeof why);
        assert_non_null(strstr(why, "(B, H, L, d)"));
        quiz_shape_mistake(split, right, 4, (Lang)lang, why, sizeof why);
        assert_string_equal(why, "");
        quiz_shape_mistake(split, other, 3, (Lang)lang, why, sizeof why);
        assert_string_equal(why, "");
        quiz_shape_mistake(split, no_heads_5, 4, (Lang)lang, why, sizeof why);
        assert_string_equal(why, "");
        // the heads dimension left out of a shape whose batch and heads differ
        QuizQuestion h = *split;
        h.answer[0] = 3, h.answer[1] = 2;
        const float no_heads[] = {3, 4, 2};
        quiz_shape_mistake(&h, no_heads, 3, (Lang)lang, why, sizeof why);
        assert_non_null(strstr(why, "H=2"));
        // another kind: nothing
        QuizQuestion v = *split;
        v.kind = QUIZ_VALUE;
        quiz_shape_mistake(&v, no_batch, 3, (Lang)lang, why, sizeof why);
        assert_string_equal(why, "");
    }
    session_destroy(ses);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lesson),
        cmocka_unit_test(test_edited_lessons),
        cmocka_unit_test(test_nan_and_uniform_rows),
        cmocka_unit_test(test_slice_and_answer_text),
        cmocka_unit_test(test_check_and_parse),
        cmocka_unit_test(test_shapes_not_repeated),
        cmocka_unit_test(test_shape_mistakes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
