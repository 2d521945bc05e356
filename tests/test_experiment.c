// The experiments (src/core/experiment.c) against PyTorch hooks on the lesson's torch model
// (tests/ref/experiments/, made by tests/gen_experiments.py with python3-torch): every head's
// loss when zeroed and when mean-replaced, the ablated run's later stages, the logit lens and
// the direct logit attribution of every head,
// within |C − torch| ≤ 1e-5 + 1e-4·|torch|. Then the compare (src/core/compare.c): what a spec
// changes and what stays identical, Δ = B − A exactly, and the bad specs' one-line errors.
#include <cjson/cJSON.h>
#include <glob.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"
#include "compare.h"
#include "experiment.h"
#include "lesson.h"
#include "session.h"

#include "ref_support.h"

static void load(Lesson *ls, const char *path)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_load(ls, path, err, sizeof err)) fail_msg("%s", err);
}

static const Tensor *stage_of(void *tr, const char *name)
{
    const Stage *s = trace_get(tr, name);
    return s ? &s->t : NULL;
}

// The table's losses (any order) against the reference's [[layer, head, loss]].
static int check_table(const Lesson *ls, AblateKind kind, const cJSON *want, float *clean, RefWorst *w,
                       const char *where)
{
    HeadEffect *e;
    int n, bad = 0;
    char err[400];
    if (!experiment_ablation_table(ls, kind, &e, &n, clean, where, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(n, cJSON_GetArraySize(want));
    for (int k = 1; k < n; k++) assert_true(e[k - 1].delta >= e[k].delta); // ranked
    const cJSON *row;
    cJSON_ArrayForEach(row, want)
    {
        const int layer = cJSON_GetArrayItem(row, 0)->valueint, head = cJSON_GetArrayItem(row, 1)->valueint;
        const double loss = cJSON_GetArrayItem(row, 2)->valuedouble;
        int found = 0;
        for (int k = 0; k < n; k++)
            if (e[k].layer == layer && e[k].head == head) {
                found = 1;
                if (ref_check(e[k].loss, loss, w)) {
                    print_error("%s: %s l%d.h%d: loss %.9g, torch %.9g\n", where, kind == ABLATE_MEAN ? "mean" : "zero",
                                layer, head, (double)e[k].loss, loss);
                    bad++;
                }
                assert_float_equal(e[k].delta, e[k].loss - *clean, 0.0);
            }
        assert_true(found);
    }
    free(e);
    return bad;
}

// The logit lens against the reference's; its last layer against the model's own probs.
static int check_lens(const Lesson *ls, const Trace *tr, const cJSON *want, RefWorst *w, const char *where)
{
    LogitLens l;
    char err[400];
    int bad = 0;
    if (!experiment_logit_lens(ls, tr, &l, where, err, sizeof err)) fail_msg("%s", err);
    const cJSON *top = cJSON_GetObjectItem(want, "top"), *tp = cJSON_GetObjectItem(want, "top_prob"),
                *np = cJSON_GetObjectItem(want, "next_prob"), *sp = cJSON_GetObjectItem(want, "second_prob");
    assert_int_equal(cJSON_GetArraySize(top), l.n_layers * l.batch);
    for (int r = 0; r < l.n_layers * l.batch; r++)
        for (int i = 0; i < l.len; i++) {
            const size_t k = (size_t)r * l.len + (size_t)i;
            const double p1 = cJSON_GetArrayItem(cJSON_GetArrayItem(tp, r), i)->valuedouble,
                         p2 = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, r), i)->valuedouble;
            const cJSON *nv = cJSON_GetArrayItem(cJSON_GetArrayItem(np, r), i);
            bad += ref_check(l.top_prob[k], p1, w);
            if (cJSON_IsNumber(nv))
                bad += ref_check(l.next_prob[k], nv->valuedouble, w);
            else
                assert_true(isnan(l.next_prob[k]));
            // the top token itself, unless two are within the tolerance of a tie
            if (p1 - p2 > 1e-5 && l.top[k] != cJSON_GetArrayItem(cJSON_GetArrayItem(top, r), i)->valueint) {
                print_error("%s: lens row %d position %d: top %d, torch %d\n", where, r, i, l.top[k],
                            cJSON_GetArrayItem(cJSON_GetArrayItem(top, r), i)->valueint);
                bad++;
            }
        }
    // the last layer's lens is the model's prediction, bit for bit
    const Stage *probs = trace_get(tr, "probs");
    const int V = l.vocab;
    for (int r = 0; r < l.batch * l.len; r++) {
        const size_t k = (size_t)(l.n_layers - 1) * l.batch * l.len + (size_t)r;
        assert_float_equal(l.top_prob[k], probs->t.data[(size_t)r * V + l.top[k]], 0.0);
    }
    logit_lens_free(&l);
    return bad;
}

// Direct logit attribution against the reference's (pre-norm models); the others are refused.
static int check_dla(const Lesson *ls, const Trace *tr, const cJSON *want, RefWorst *w, const char *where)
{
    LogitAttribution a;
    char err[400];
    if (!want) { // (not pre-norm)
        assert_false(experiment_logit_attribution(ls, tr, &a, where, err, sizeof err));
        assert_non_null(strstr(err, "a pre-norm language model's"));
        return 0;
    }
    if (!experiment_logit_attribution(ls, tr, &a, where, err, sizeof err)) fail_msg("%s", err);
    const cJSON *rows = cJSON_GetObjectItem(want, "contrib");
    const size_t per = (size_t)a.batch * a.len;
    assert_int_equal(cJSON_GetArraySize(rows), a.n_layers * a.n_heads * a.batch);
    int bad = 0, r = 0;
    const cJSON *row, *v;
    cJSON_ArrayForEach(row, rows)
    {
        int i = 0;
        cJSON_ArrayForEach(v, row)
        {
            const float got = a.contrib[(size_t)r / a.batch * per + (size_t)(r % a.batch) * a.len + (size_t)i];
            if (cJSON_IsNumber(v)) {
                if (ref_check(got, v->valuedouble, w)) {
                    print_error("%s: dla row %d position %d: %.9g, torch %.9g\n", where, r, i, (double)got, v->valuedouble);
                    bad++;
                }
            } else {
                assert_true(isnan(got));
            }
            i++;
        }
        r++;
    }
    logit_attribution_free(&a);
    return bad;
}

// Activation patching against PyTorch hooks (tests/ref/patching/, tests/gen_patching.py): the clean
// prediction, its probability clean and corrupted, and the share each patch brings back (residual
// after each layer, each head's output, at each position), within 1e-4 + 1e-3·|torch| (a ratio of
// probabilities' differences)
static void test_patching_against_torch(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("tests/ref/patching/*.json", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 2);
    double worst = 0.0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        cJSON *ref = ref_read_json(g.gl_pathv[f]);
        const char *path = cJSON_GetObjectItem(ref, "lesson")->valuestring;
        char err[LESSON_ERR_MAX + 200];
        Session *clean = session_open(path, NULL, err, sizeof err);
        if (!clean) fail_msg("%s", err);
        SessionEdits ed = {0};
        ed.text = cJSON_GetObjectItem(ref, "corrupt")->valuestring;
        Session *corrupt = session_open(path, &ed, err, sizeof err);
        if (!corrupt) fail_msg("%s", err);
        Patching p;
        if (!experiment_patching(&clean->lesson, &corrupt->lesson, &p, path, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(p.token, cJSON_GetObjectItem(ref, "token")->valueint);
        assert_float_equal(p.p_clean, cJSON_GetObjectItem(ref, "p_clean")->valuedouble, 1e-5);
        assert_float_equal(p.p_corrupt, cJSON_GetObjectItem(ref, "p_corrupt")->valuedouble, 1e-5);
        const char *grids[] = {"residual", "heads"};
        for (int k = 0; k < 2; k++) {
            const cJSON *rows = cJSON_GetObjectItem(ref, grids[k]), *row;
            const float *got = k ? p.heads : p.residual;
            assert_int_equal(cJSON_GetArraySize(rows), k ? p.n_layers * p.n_heads : p.n_layers);
            int r = 0;
            cJSON_ArrayForEach(row, rows)
            {
                assert_int_equal(cJSON_GetArraySize(row), p.len);
                for (int i = 0; i < p.len; i++) {
                    const double want = cJSON_GetArrayItem(row, i)->valuedouble, d = fabs((double)got[r * p.len + i] - want);
                    if (!(d <= 1e-4 + 1e-3 * fabs(want)))
                        fail_msg("%s: %s row %d position %d: %.9g, torch %.9g", path, grids[k], r, i,
                                 (double)got[r * p.len + i], want);
                    if (d > worst) worst = d;
                }
                r++;
            }
        }
        patching_free(&p);
        session_destroy(corrupt), session_destroy(clean);
        cJSON_Delete(ref);
    }
    print_message("patching: %zu lessons, worst |C − torch| %.3g\n", g.gl_pathc, worst);
    globfree(&g);
}

// Patching's bad input: a position outside the text, a head that does not exist, texts of
// different token lengths — one line each
static void test_patching_bad_input(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX + 200];
    Session *clean = session_open("lessons/induction-heads.json", NULL, err, sizeof err);
    if (!clean) fail_msg("%s", err);
    SessionEdits ed = {0};
    ed.text = "qkdmb";
    Session *shorter = session_open("lessons/induction-heads.json", &ed, err, sizeof err);
    if (!shorter) fail_msg("%s", err);
    Patching p;
    assert_false(experiment_patching(&clean->lesson, &shorter->lesson, &p, "--experiment patching", err, sizeof err));
    assert_non_null(strstr(err, "5 tokens, the clean text 12"));
    // the clean text as the corrupted one: nothing to recover (every fraction was 0 / 0, written nan)
    assert_false(experiment_patching(&clean->lesson, &clean->lesson, &p, "--corrupt", err, sizeof err));
    assert_non_null(strstr(err, "--corrupt: the corrupted text gives \"q\" (the clean prediction at the last position) "
                                "the clean text's probability, 0.9998: nothing to recover"));
    assert_null(strchr(err, '\n'));
    assert_null(p.residual);
    Trace tr;
    const int L = clean->lesson.len_q;
    assert_false(experiment_patch_run(&clean->lesson, &clean->trace, PATCH_RESIDUAL, 0, 0, L, &tr, "patch", err, sizeof err));
    assert_non_null(strstr(err, "position 12 is outside the text (positions 0 … 11)"));
    assert_false(experiment_patch_run(&clean->lesson, &clean->trace, PATCH_RESIDUAL, 0, 0, -1, &tr, "patch", err, sizeof err));
    assert_false(experiment_patch_run(&clean->lesson, &clean->trace, PATCH_HEAD, 1, 2, 0, &tr, "patch", err, sizeof err));
    assert_non_null(strstr(err, "no such head"));
    assert_false(experiment_patch_run(&shorter->lesson, &clean->trace, PATCH_RESIDUAL, 0, 0, 0, &tr, "patch", err, sizeof err));
    assert_non_null(strstr(err, "texts of one length"));
    assert_null(strchr(err, '\n'));
    // a patch of the clean run into itself changes nothing
    assert_true(experiment_patch_run(&clean->lesson, &clean->trace, PATCH_HEAD, 1, 1, 11, &tr, "patch", err, sizeof err));
    const Stage *a = trace_get(&clean->trace, "probs"), *b = trace_get(&tr, "probs");
    assert_memory_equal(a->t.data, b->t.data, a->t.size * sizeof(float));
    trace_free(&tr);
    session_destroy(shorter), session_destroy(clean);
}

// A language model with a "linear_attention" layer (delta.c): ablation and patching refuse it in one
// line naming the key (the layer has no head_out stage to replace); the logit attribution follows its
// heads' outputs (what its concat reads) through W_O: the heads' parts and the rest sum to the logit.
static void test_linear_layers(void **state)
{
    (void)state;
    char path[] = "/tmp/attnviz-s6-deltanet-lmXXXXXX", err[LESSON_ERR_MAX + 200];
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *json = "{\"title\": \"t\", \"vocab\": [\"a\", \"b\", \"c\", \"d\"], \"model\": {\"d_model\": 4, "
                       "\"n_heads\": 2, \"n_layers\": 2, \"norm\": \"rms\", \"norm_first\": true, \"residual_norm\": true, "
                       "\"layer_types\": [\"linear_attention\", \"full_attention\"]}, \"input\": {\"text\": \"abcdab\"}, "
                       "\"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 3}}}";
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    Session *s = session_open(path, NULL, err, sizeof err);
    unlink(path);
    if (!s) fail_msg("%s", err);
    assert_false(experiment_can_ablate(&s->lesson, "x.json", err, sizeof err));
    assert_non_null(strstr(err, "model.layer_types: a \"linear_attention\" layer"));
    Trace tr;
    assert_false(experiment_patch_run(&s->lesson, &s->trace, PATCH_HEAD, 0, 0, 0, &tr, "patch", err, sizeof err));
    assert_non_null(strstr(err, "model.layer_types: a \"linear_attention\" layer is not patched"));
    assert_null(strchr(err, '\n'));
    LogitAttribution la;
    if (!experiment_logit_attribution(&s->lesson, &s->trace, &la, "x.json", err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(la.n_layers, 2);
    logit_attribution_free(&la);
    session_destroy(s);
}

static void test_against_torch(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("tests/ref/experiments/*.json", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 7);
    RefWorst w = {0, 0};
    int bad = 0, n_dla = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        cJSON *ref = ref_read_json(g.gl_pathv[f]);
        const char *path = cJSON_GetObjectItem(ref, "lesson")->valuestring;
        Lesson ls;
        load(&ls, path);
        float clean, clean2;
        bad += check_table(&ls, ABLATE_ZERO, cJSON_GetObjectItem(ref, "zero"), &clean, &w, path);
        bad += check_table(&ls, ABLATE_MEAN, cJSON_GetObjectItem(ref, "mean"), &clean2, &w, path);
        bad += ref_check(clean, cJSON_GetObjectItem(ref, "clean_loss")->valuedouble, &w);
        assert_float_equal(clean, clean2, 0.0);
        // the ablated run's later stages (the head that matters most, zeroed)
        const cJSON *ab = cJSON_GetObjectItem(ref, "ablated");
        Trace tr;
        trace_init(&tr);
        ls.cfg.ablate = (AttnAblation){ABLATE_ZERO, cJSON_GetObjectItem(ab, "layer")->valueint,
                                        cJSON_GetObjectItem(ab, "head")->valueint};
        assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
        int n;
        bad += ref_compare_list(cJSON_GetObjectItem(ab, "stages"), stage_of, &tr, path, &n, &w);
        assert_int_equal(n, 3);
        trace_free(&tr);
        // the logit lens of the clean run
        ls.cfg.ablate.kind = ABLATE_NONE;
        trace_init(&tr);
        assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
        bad += check_lens(&ls, &tr, cJSON_GetObjectItem(ref, "lens"), &w, path);
        bad += check_dla(&ls, &tr, cJSON_GetObjectItem(ref, "dla"), &w, path);
        n_dla += cJSON_GetObjectItem(ref, "dla") != NULL;
        trace_free(&tr);
        lesson_free(&ls);
        cJSON_Delete(ref);
    }
    globfree(&g);
    assert_true(n_dla >= 5); // (the pre-norm ones)
    print_message("experiments: %d misses; worst |C - torch| %.3g (%.3g of the tolerance)\n", bad, w.abs, w.rel);
    assert_int_equal(bad, 0);
}

// The induction lesson's table: its two-step circuit (the previous-token head l0.h1 and the
// induction head l1.h1, the lesson's description) ranks above the other two heads.
static void test_induction_ranking(void **state)
{
    (void)state;
    Lesson ls;
    load(&ls, "lessons/induction-heads.json");
    HeadEffect *e;
    int n;
    float clean;
    char err[300];
    assert_true(experiment_ablation_table(&ls, ABLATE_ZERO, &e, &n, &clean, "induction", err, sizeof err));
    assert_int_equal(n, 4);
    assert_true(e[0].head == 1 && e[1].head == 1); // l0.h1 and l1.h1, in some order
    assert_true(e[0].layer != e[1].layer);
    assert_true(e[1].delta > 3.0f * e[2].delta);
    free(e);
    lesson_free(&ls);
}

static Session *open_a(const char *path)
{
    char err[LESSON_ERR_MAX + 200];
    Session *s = session_open(path, NULL, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

// B of a spec and the compare; false (the message in err) when either fails.
static bool compare_spec(const Session *a, const char *spec, Session **b, Compare *c, char *err, size_t n)
{
    CompareSpec sp;
    *b = NULL;
    memset(c, 0, sizeof *c);
    return compare_parse_spec(spec, &sp, err, n) && (*b = compare_open_b(a, NULL, &sp, err, n)) &&
           compare_traces(&a->trace, &(*b)->trace, c, err, n);
}

static const CompareStage *stage_named(const Compare *c, const Trace *a, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (c->st[i].a >= 0 && strcmp(a->stages[c->st[i].a].name, name) == 0) return &c->st[i];
    fail_msg("no stage %s", name);
    return NULL;
}

// A linear layer's two forms (delta.c): B computes its output from the matrix form A·U instead of the
// state, token by token. Every stage up to the layer's own identical; its concat, and all after it,
// equal within float32 rounding: the recurrence and the masked "attention" matrix are the same map
// (non-gated DeltaNet, plain linear attention, and Gated DeltaNet with its decay Γ).
static void test_compare_linear_forms(void **state)
{
    (void)state;
    const char *const lessons[] = {"tests/ref/deltanet-5-heads-parallel.lesson.json", // (its own form: parallel)
                                   "tests/ref/linear-plain-after-full.lesson.json", "tests/ref/gdn-hybrid-3-heads.lesson.json"};
    const char *const specs[] = {"set:model.linear_form=recurrent", "set:model.linear_form=parallel",
                                 "set:model.linear_form=parallel"};
    for (int i = 0; i < 3; i++) {
        char err[600];
        Session *b;
        Compare c;
        Session *a = open_a(lessons[i]);
        if (!compare_spec(a, specs[i], &b, &c, err, sizeof err)) fail_msg("%s: %s", lessons[i], err);
        assert_int_equal(c.n_only, 0);
        int first = -1; // the first linear layer's concat: the first stage that may differ
        for (int s = 0; s < a->trace.n && first < 0; s++)
            if (a->trace.stages[s].id == STAGE_CONCAT && a->trace.layer_linear[a->trace.stages[s].layer]) first = s;
        assert_true(first > 0);
        float worst = 0.0f, at_concat = -1.0f;
        for (int k = 0; k < c.n; k++) {
            if (c.st[k].a < first) assert_int_equal(c.st[k].n_diff, 0);
            else worst = fmaxf(worst, c.st[k].max_abs);
            if (c.st[k].a == first) at_concat = c.st[k].max_abs;
        }
        assert_true(c.n_differ > 0); // (B's output really came the other way)
        // the layer's own output: float32 rounding of sums of a few terms; downstream (norms, FFN,
        // later layers) within the references' tolerance
        if (!(at_concat >= 0.0f && at_concat <= 1e-6f && worst <= 1e-5f))
            fail_msg("%s: the two forms differ by %g at the concat, %g after", lessons[i], (double)at_concat, (double)worst);
        compare_free(&c), session_destroy(b), session_destroy(a);
    }
}

static void test_compare(void **state)
{
    (void)state;
    char err[600];
    Session *b;
    Compare c;
    // −1e10 or −inf as the fill: only masked_scores differs; the softmax gives the same bits
    Session *a = open_a("lessons/causal-decoder.json");
    assert_true(compare_spec(a, "set:model.mask_fill=-inf", &b, &c, err, sizeof err));
    assert_int_equal(c.n_differ, 1);
    assert_int_equal(c.n_only, 0);
    const CompareStage *ms = stage_named(&c, &a->trace, "masked_scores");
    assert_true(ms->n_diff > 0 && isinf(ms->max_abs));
    assert_int_equal(stage_named(&c, &a->trace, "attn")->n_diff, 0);
    compare_free(&c), session_destroy(b);
    // the same lesson as B: every stage identical
    assert_true(compare_spec(a, "lesson:lessons/causal-decoder.json", &b, &c, err, sizeof err));
    assert_int_equal(c.n_differ, 0);
    assert_int_equal(c.n_identical, a->trace.n);
    compare_free(&c), session_destroy(b);
    session_destroy(a);
    // an ablation: every stage before it identical, its head's head_out Δ = −A, later stages Δ = B − A
    a = open_a("lessons/induction-heads.json");
    assert_true(compare_spec(a, "ablate:l1.h1", &b, &c, err, sizeof err));
    const int ho = trace_find(&a->trace, "l1.head_out");
    for (int i = 0; i < c.n; i++) {
        const CompareStage *s = &c.st[i];
        assert_true(s->a >= 0 && s->b == s->a);
        if (s->a < ho) assert_int_equal(s->n_diff, 0);
        for (size_t k = 0; k < s->delta.size; k++) {
            const float x = a->trace.stages[s->a].t.data[k], y = b->trace.stages[s->b].t.data[k];
            assert_float_equal(s->delta.data[k], x == y ? 0.0f : y - x, 0.0);
        }
    }
    const Tensor *d = &stage_named(&c, &a->trace, "l1.head_out")->delta, *x = &a->trace.stages[ho].t;
    const size_t per_head = (size_t)x->shape[2] * x->shape[3];
    for (size_t k = 0; k < per_head; k++) {
        assert_float_equal(d->data[per_head + k], -x->data[per_head + k], 0.0); // head 1: zeroed
        assert_float_equal(d->data[k], 0.0f, 0.0);                              // head 0: kept
    }
    assert_true(stage_named(&c, &a->trace, "probs")->n_diff > 0);
    compare_free(&c), session_destroy(b);
    // the bad specs: one line each, naming what is wrong
    static const struct {
        const char *spec, *want;
    } BAD[] = {
        {"ablate:l2.h0", "no such head: the model has 2 layers of 2 heads (l0.h0 … l1.h1)"},
        {"ablate:h1", "expected a head as lL.hH"},
        {"text:abc", "--compare text:abc: input.text: character 3"},
        {"lesson:lessons/arange-2x4x4.json", "no stage in common (A begins with \"token_embed\", B with \"input\")"},
        {"nope:1", "expected set:KEY=VALUE"},
        {"checkpoint:99", "--compare checkpoint:99: 99 is out of range"},
        {"set:mask=bogus", "--compare set:mask=bogus: expected none, causal"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        err[0] = '\0';
        if (compare_spec(a, BAD[i].spec, &b, &c, err, sizeof err)) fail_msg("%s: accepted", BAD[i].spec);
        if (!strstr(err, BAD[i].want)) fail_msg("%s: \"%s\" does not say \"%s\"", BAD[i].spec, err, BAD[i].want);
        assert_null(strchr(err, '\n'));
        session_destroy(b);
    }
    session_destroy(a);
    // the same stages, another shape: the first tensor that differs is named
    a = open_a("lessons/arange-2x4x4.json");
    assert_false(compare_spec(a, "lesson:lessons/sentence-the-cat.json", &b, &c, err, sizeof err));
    assert_non_null(strstr(err, "stage \"input\" is (2,4,4) in A and (1,6,6) in B"));
    session_destroy(b);
    session_destroy(a);
    // a model whose flash stages recompute head_out: refused
    a = open_a("lessons/flash-attention-tiles.json");
    assert_false(compare_spec(a, "ablate:h0", &b, &c, err, sizeof err));
    assert_non_null(strstr(err, "model.flash"));
    session_destroy(b);
    session_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_torch),
        cmocka_unit_test(test_patching_against_torch),
        cmocka_unit_test(test_patching_bad_input),
        cmocka_unit_test(test_induction_ranking),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_compare_linear_forms),
        cmocka_unit_test(test_linear_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
