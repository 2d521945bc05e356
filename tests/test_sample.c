// test_sample.c — the next token as students meet it (src/core/sample.c): top-k and top-p
// against Hugging Face's warpers run in PyTorch (tests/gen_sampling.py ->
// tests/ref/sampling.json, 44 cases, V 5 to 1024), the greedy choice and the seeded draw;
// model.top_k / model.top_p refused out of range with one line (the file and --set); the
// next-token bars with them (kept tokens renormalised, the rest cut, what is shown adding
// up); generating (session_append): the token appended is the one chosen, the stages equal
// a lesson read with the longer text, and past the model's context one line, nothing changed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "layout.h"
#include "lesson.h"
#include "sample.h"
#include "session.h"
#include "stages.h"
#include "view.h"

#include "pure_support.h"
#include "ref_support.h"

#define TINY "lessons/tiny-lm-fortunes.json"

static void floats(const cJSON *a, float *out, int n)
{
    assert_int_equal(cJSON_GetArraySize(a), n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) out[i++] = (float)e->valuedouble;
}

static void test_filter_matches_torch(void **state)
{
    (void)state;
    cJSON *root = ref_read_json("tests/ref/sampling.json");
    static float probs[SAMPLE_MAX_VOCAB], want[SAMPLE_MAX_VOCAB], kept[SAMPLE_MAX_VOCAB];
    int n_cases = 0;
    double worst = 0.0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
        const int V = cJSON_GetObjectItemCaseSensitive(c, "V")->valueint;
        const int k = cJSON_GetObjectItemCaseSensitive(c, "top_k")->valueint;
        const float p = (float)cJSON_GetObjectItemCaseSensitive(c, "top_p")->valuedouble;
        floats(cJSON_GetObjectItemCaseSensitive(c, "probs"), probs, V);
        floats(cJSON_GetObjectItemCaseSensitive(c, "kept"), want, V);
        const int n = sample_filter(probs, V, k, p, kept);
        assert_int_equal(n, cJSON_GetObjectItemCaseSensitive(c, "n_kept")->valueint);
        for (int i = 0; i < V; i++) {
            if ((kept[i] > 0.0f) != (want[i] > 0.0f))
                fail_msg("case %d (V %d, top-k %d, top-p %g): token %d kept %d, torch %d", n_cases, V, k, (double)p, i,
                         kept[i] > 0.0f, want[i] > 0.0f);
            worst = fmax(worst, fabs((double)kept[i] - (double)want[i]));
        }
        n_cases++;
    }
    assert_true(n_cases >= 40);
    assert_true(worst <= 1e-6);
    print_message("%d cases as transformers' warpers in torch, largest difference %.2g\n", n_cases, worst);
    // the draw's u: the lessons' generator (lessons/torch_modules.py's), stream 3000, seed 1
    const cJSON *u;
    cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(root, "u_seed1"))
        assert_true(sample_draw_u(1, atoi(u->string)) == (float)u->valuedouble);
    cJSON_Delete(root);
}

static void test_pick(void **state)
{
    (void)state;
    const float kept[] = {0.0f, 0.25f, 0.5f, 0.0f, 0.25f};
    assert_int_equal(sample_pick(kept, 5, 0, 3), 2); // greedy: the largest
    const float tie[] = {0.0f, 0.5f, 0.5f};
    assert_int_equal(sample_pick(tie, 3, 0, 0), 1); // (a tie: the lower id)
    int seen[5] = {0};
    for (int pos = 0; pos < 400; pos++) { // a draw: the token whose running sum passes u, never a cut one
        const int id = sample_pick(kept, 5, 1, pos);
        const float u = sample_draw_u(1, pos);
        assert_true(kept[id] > 0.0f);
        assert_true(u >= 0.0f && u < 1.0f);
        assert_int_equal(id, u < 0.25f ? 1 : u < 0.75f ? 2 : 4);
        seen[id]++;
    }
    assert_true(seen[2] > seen[1] && seen[2] > seen[4] && seen[1] > 50 && seen[4] > 50);
    assert_int_equal(sample_pick(kept, 5, 1, 7), sample_pick(kept, 5, 1, 7)); // seeded: the same every time
}

// model.top_k / model.top_p out of range: one line naming the key, in the file and for --set
static void test_bad_settings(void **state)
{
    (void)state;
    static const char *const bad[] = {"\"top_k\": 0", "\"top_k\": -3", "\"top_k\": 2.5", "\"top_k\": 5000",
                                      "\"top_p\": 0", "\"top_p\": 1.5", "\"top_p\": -0.1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char json[400], err[LESSON_ERR_MAX];
        snprintf(json, sizeof json, "{\"title\": \"t\", \"vocab\": [\"a\", \"b\"], \"model\": {\"d_model\": 4, \"n_heads\": 2, %s}, "
                 "\"input\": {\"text\": \"ab\"}, \"weights\": {\"init\": {\"seed\": 1}}}", bad[i]);
        Lesson ls;
        assert_false(lesson_parse(&ls, "mem.json", json, strlen(json), err, sizeof err));
        const char *key = strstr(bad[i], "top_k") ? "mem.json: model.top_k: " : "mem.json: model.top_p: ";
        if (strncmp(err, key, strlen(key)) != 0 || !strstr(err, "expected")) fail_msg("%s: %s", bad[i], err);
        assert_null(strchr(err, '\n'));
    }
    Session *s = open_session(TINY);
    static const char *const set[] = {"model.top_k=0", "model.top_k=-1", "model.top_k=1.5", "model.top_p=0",
                                      "model.top_p=1.01", "model.top_p=nan"};
    for (size_t i = 0; i < sizeof set / sizeof *set; i++) {
        Edit e;
        char err[EDIT_ERR_MAX];
        assert_false(edit_parse(&s->lesson, set[i], &e, err, sizeof err));
        assert_non_null(strstr(err, strstr(set[i], "top_k") ? "expected a whole number of tokens from 1 to 1024, or off"
                                                             : "expected a probability above 0 and at most 1"));
    }
    Edit e;
    char err[EDIT_ERR_MAX];
    assert_true(edit_parse(&s->lesson, "model.top_k=off", &e, err, sizeof err)); // (off: the default, 0)
    assert_true(edit_apply(&s->lesson, &e, err, sizeof err));
    assert_int_equal(s->lesson.cfg.top_k, 0);
    session_destroy(s);
}

// the bars with top-k 5 and top-p 0.9: the kept tokens' renormalised probabilities (those
// sample_filter gives, summing to 1 as written within the rounding of each), the others cut
static void test_bars(void **state)
{
    (void)state;
    Session *s = open_session(TINY);
    Edit e;
    char err[EDIT_ERR_MAX];
    assert_true(edit_parse(&s->lesson, "model.top_k=5", &e, err, sizeof err) && edit_apply(&s->lesson, &e, err, sizeof err));
    assert_true(edit_parse(&s->lesson, "model.top_p=0.9", &e, err, sizeof err) && edit_apply(&s->lesson, &e, err, sizeof err));
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    v.stage = trace_find(&s->trace, "probs");
    Layout L;
    layout_compute(&L, &s->trace, &v, 1280, 720);
    assert_string_equal(L.bars.subtitle, "top-k 5, top-p 0.9: kept, renormalised");
    const Tensor *t = &s->trace.stages[v.stage].t;
    const int Lq = t->shape[1], V = t->shape[2];
    float kept[SAMPLE_MAX_VOCAB];
    const int n = sample_filter(t->data + (size_t)(Lq - 1) * V, V, 5, 0.9f, kept);
    assert_true(n >= 1 && n <= 5);
    int n_kept = 0;
    double shown = 0.0;
    for (int i = 0; i < L.bars.n; i++) {
        if (L.bars.cut[i]) {
            assert_string_equal(L.bars.number[i], "cut");
            assert_true(L.bars.value[i] == 0.0f);
            continue;
        }
        n_kept++;
        shown += atof(L.bars.number[i]);
        assert_true(L.bars.value[i] > 0.0f);
    }
    assert_int_equal(n_kept, n);
    assert_true(fabs(shown - 1.0) <= 0.005 * n + 1e-9); // (each written to 2 decimals)
    // without sampling: the bars as before, no subtitle
    assert_true(edit_parse(&s->lesson, "model.top_k=off", &e, err, sizeof err) && edit_apply(&s->lesson, &e, err, sizeof err));
    assert_true(edit_parse(&s->lesson, "model.top_p=1", &e, err, sizeof err) && edit_apply(&s->lesson, &e, err, sizeof err));
    layout_compute(&L, &s->trace, &v, 1280, 720);
    assert_string_equal(L.bars.subtitle, "");
    for (int i = 0; i < L.bars.n; i++) assert_false(L.bars.cut[i]);
    session_destroy(s);
}

// generating: greedy appends the most likely token; the new session's stages are those of
// the lesson read with the longer text (char tokenizer); past max_positions: one line
static void test_generate(void **state)
{
    (void)state;
    Session *s = open_session(TINY); // "to be or not to be": 18 of 20 positions
    char err[LESSON_ERR_MAX], text[64];
    for (int step = 0; step < 2; step++) {
        const Tensor *p = &s->trace.stages[trace_find(&s->trace, "probs")].t;
        const int Lq = p->shape[1], V = p->shape[2];
        float kept[SAMPLE_MAX_VOCAB];
        sample_filter(p->data + (size_t)(Lq - 1) * V, V, 0, 1.0f, kept);
        int next = sample_pick(kept, V, 0, Lq), best = 0;
        for (int j = 1; j < V; j++)
            if (p->data[(size_t)(Lq - 1) * V + j] > p->data[(size_t)(Lq - 1) * V + best]) best = j;
        assert_int_equal(next, best);
        Session *n = session_append(s, &next, err, sizeof err);
        if (!n) fail_msg("%s", err);
        assert_int_equal(n->lesson.len_q, Lq + 1);
        assert_int_equal((int)n->lesson.in.ids.data[Lq], next);
        // the same as typing the longer text
        size_t k = 0;
        for (int l = 0; l <= Lq; l++) k += (size_t)snprintf(text + k, sizeof text - k, "%s", lesson_token_label(&n->lesson, 0, l));
        Session *typed = session_retext(s, text, err, sizeof err);
        if (!typed) fail_msg("%s", err);
        assert_int_equal(typed->trace.n, n->trace.n);
        for (int i = 0; i < n->trace.n; i++) {
            const Tensor *a = &n->trace.stages[i].t, *b = &typed->trace.stages[i].t;
            assert_int_equal(a->size, b->size);
            assert_memory_equal(a->data, b->data, a->size * sizeof *a->data);
        }
        session_destroy(typed);
        session_destroy(s);
        s = n;
    }
    int next = 1;
    assert_null(session_append(s, &next, err, sizeof err)); // 21 tokens: past the context of 20
    assert_string_equal(err, "generate: input.ids: 21 tokens, longer than the model's context (model.max_positions 20)");
    assert_int_equal(s->lesson.len_q, 20); // (the session as it was)
    session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_matches_torch),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_bars),
        cmocka_unit_test(test_generate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
