// The attention core against PyTorch: every stage of every reference variant in
// tests/ref/ (made by tests/gen_reference.py with python3-torch), plus properties
// that hold for any weights: softmax rows sum to 1, masked keys get 0 weight,
// split/concat heads round-trip, one fused projection == per-head modules.
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"
#include "lesson.h"
#include "parallel.h"

#include <glob.h>

#define REF_DIR "tests/ref"
#define ATOL 1e-5
#define RTOL 1e-4

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

static double json_num(const cJSON *j)
{
    if (cJSON_IsNumber(j)) return j->valuedouble;
    assert_true(cJSON_IsString(j));
    if (strcmp(j->valuestring, "nan") == 0) return NAN;
    if (strcmp(j->valuestring, "inf") == 0) return INFINITY;
    if (strcmp(j->valuestring, "-inf") == 0) return -INFINITY;
    fail_msg("unexpected string %s", j->valuestring);
    return 0;
}

static bool close_enough(double got, double want)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= ATOL + RTOL * fabs(want);
}

// Compares every stage listed in the expected file; prints the first mismatches.
static int compare_variant(const char *lesson_path, const char *expected_path)
{
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_load(&ls, lesson_path, err, sizeof err)) fail_msg("%s", err);
    Trace tr;
    trace_init(&tr);
    assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
    char *text = read_all(expected_path);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    int bad = 0, stages = 0;
    const cJSON *st;
    cJSON_ArrayForEach(st, cJSON_GetObjectItem(root, "stages"))
    {
        const char *name = cJSON_GetObjectItem(st, "name")->valuestring;
        const Stage *s = trace_get(&tr, name);
        if (!s) {
            print_error("%s: stage %s missing from the trace\n", lesson_path, name);
            bad++;
            continue;
        }
        stages++;
        const cJSON *shape = cJSON_GetObjectItem(st, "shape");
        assert_int_equal(cJSON_GetArraySize(shape), s->t.rank);
        for (int d = 0; d < s->t.rank; d++)
            assert_int_equal(cJSON_GetArrayItem(shape, d)->valueint, s->t.shape[d]);
        const cJSON *data = cJSON_GetObjectItem(st, "data");
        assert_int_equal((size_t)cJSON_GetArraySize(data), s->t.size);
        size_t i = 0;
        int shown = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, data)
        {
            double want = json_num(e), got = (double)s->t.data[i];
            if (!close_enough(got, want)) {
                if (shown++ < 5)
                    print_error("%s: %s[%zu] = %.9g, PyTorch %.9g\n", lesson_path, name, i, got,
                                want);
                bad++;
            }
            i++;
        }
    }
    assert_true(stages >= 9);   // per-head references have no fused q_proj
    // the stages every PyTorch implementation computes must be among those compared
    const char *must[] = {"scores", "masked_scores", "attn", "head_out", "concat", "output"};
    // a linear layer's (delta.c): the state, its outputs and the matrix form in place of the softmax's
    const char *must_linear[] = {"lin_q", "lin_k", "lin_state", "lin_out", "lin_attn", "lin_parallel"};
    for (int l = 0; l < tr.n_layers; l++) // (a model of several layers: each layer's, "l1.scores")
        for (int k = 0; k < 6; k++) {
            const char *name = tr.layer_linear[l < TRACE_MAX_LAYERS ? l : 0] ? must_linear[k] : must[k];
            char want[STAGE_NAME_MAX];
            if (tr.n_layers > 1) snprintf(want, sizeof want, "l%d.%s", l, name);
            else snprintf(want, sizeof want, "%s", name);
            bool found = false;
            cJSON_ArrayForEach(st, cJSON_GetObjectItem(root, "stages"))
            found = found || strcmp(cJSON_GetObjectItem(st, "name")->valuestring, want) == 0;
            if (!found) fail_msg("%s: no expected %s", expected_path, want);
        }
    cJSON_Delete(root);
    free(text);
    trace_free(&tr);
    lesson_free(&ls);
    return bad;
}

// Compares every LESSON_DIR/NAME<suffix> with EXPECTED_DIR/NAME.expected.json
// (which must exist); returns how many lessons were compared.
static int compare_dir(const char *lesson_dir, const char *suffix, const char *expected_dir)
{
    DIR *d = opendir(lesson_dir);
    assert_non_null(d);
    int count = 0, bad = 0;
    size_t sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n <= sl || strcmp(de->d_name + n - sl, suffix) != 0) continue;
        char lesson[512], expected[512];
        snprintf(lesson, sizeof lesson, "%s/%s", lesson_dir, de->d_name);
        snprintf(expected, sizeof expected, "%s/%.*s.expected.json", expected_dir, (int)(n - sl),
                 de->d_name);
        FILE *f = fopen(expected, "r");
        if (!f) fail_msg("%s has no PyTorch reference %s (run tests/gen_reference.py)", lesson, expected);
        fclose(f);
        int b = compare_variant(lesson, expected);
        if (b) print_error("%s: %d values differ from PyTorch\n", lesson, b);
        bad += b;
        count++;
    }
    closedir(d);
    assert_int_equal(bad, 0);
    return count;
}

static void test_reference_variants(void **state)
{
    (void)state;
    int n = compare_dir(REF_DIR, ".lesson.json", REF_DIR);
    print_message("compared %d PyTorch reference variants\n", n);
    assert_true(n >= 10);
}

// Every lesson shipped in lessons/ has PyTorch's stages in tests/ref/lessons/.
static void test_lesson_library(void **state)
{
    (void)state;
    int n = compare_dir("lessons", ".json", REF_DIR "/lessons");
    print_message("compared %d lessons with PyTorch\n", n);
    assert_true(n >= 7);
}

// Loads the lesson at path and runs its forward pass into tr, or fails the test.
static void load_forward(const char *path, Lesson *ls, Trace *tr)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_load(ls, path, err, sizeof err)) fail_msg("%s", err);
    trace_init(tr);
    assert_true(attn_forward(&ls->cfg, ls->w, &ls->in, tr));
}

// The tensor a stage records for table slot `slot` (its row's weight or bias) in layer w:
// the lesson's tensor of that slot, NULL where the model does not apply it. The exceptions
// to the table written out again here, apart from attention.c's attn_param.
static const Tensor *want_param(const AttnConfig *c, AttnWeights *w, WeightSlot slot)
{
    switch (slot) {
    case WEIGHT_NONE: return NULL;
    case WEIGHT_B_Q: case WEIGHT_B_K: case WEIGHT_B_V: return c->qkv_bias ? lesson_weight(w, slot) : NULL;
    case WEIGHT_B_O: return c->out_bias ? lesson_weight(w, slot) : NULL;
    case WEIGHT_FFN_B1: case WEIGHT_FFN_B2: case WEIGHT_FFN_B_GATE: return c->ffn_bias ? lesson_weight(w, slot) : NULL;
    case WEIGHT_NORM_BIAS: case WEIGHT_FFN_NORM_BIAS: case WEIGHT_FINAL_NORM_BIAS: // RMSNorm: no β
        return c->norm == NORM_RMS ? NULL : lesson_weight(w, slot);
    case WEIGHT_SINKS: return c->attn_sinks ? lesson_weight(w, slot) : NULL;
    case WEIGHT_POS_EMBED: return c->positions == POS_LEARNED ? lesson_weight(w, slot) : NULL;
    case WEIGHT_LM_HEAD: // a vision transformer's logits: its classifier head
        return lesson_weight(w, c->n_classes > 0 ? WEIGHT_HEAD : c->tie_embeddings ? WEIGHT_EMBED : WEIGHT_LM_HEAD);
    case WEIGHT_HEAD_BIAS: return c->n_classes > 0 ? lesson_weight(w, slot) : NULL;
    default: return lesson_weight(w, slot);
    }
}

// A stage that applies its parameters alone (x·Wᵀ + b, a norm) again from the recorded
// Stage.weight / .bias and its operand: the same bits, so what is recorded is what was applied.
static void check_applied(const Trace *tr, const Stage *st, const AttnConfig *c)
{
    const Stage *x = &tr->stages[st->operands[0]];
    size_t n = st->t.size;
    float *y = malloc(n * sizeof(float));
    assert_non_null(y);
    int cols = st->t.shape[st->t.rank - 1], in = x->t.shape[x->t.rank - 1], rows = (int)(n / (size_t)cols);
    if (st->kind == STAGE_KIND_NORM && c->norm == NORM_RMS)
        tensor_rms_norm(y, x->t.data, tensor_present(st->weight) ? st->weight->data : NULL, rows, cols, c->norm_eps);
    else if (st->kind == STAGE_KIND_NORM)
        tensor_layer_norm(y, x->t.data, tensor_present(st->weight) ? st->weight->data : NULL,
                          st->bias && tensor_present(st->bias) ? st->bias->data : NULL, rows, cols, c->norm_eps);
    else
        tensor_linear(y, x->t.data, st->weight->data, st->bias ? st->bias->data : NULL, rows, in, cols);
    if (memcmp(y, st->t.data, n * sizeof(float)) != 0)
        fail_msg("%s is not its operand with its recorded weight and bias", st->name);
    free(y);
}

// stages.h's tables: names unique and found again; every stage a forward records
// is its table row (name, kind, step) and records the weight and bias that row names
// (Stage.weight / .bias: the view's tooltips and the backward pass read them), which are
// the ones it applied; each exception to the table is met by some lesson.
static void test_stage_table(void **state)
{
    (void)state;
    for (int i = 0; i < STAGE_ID_COUNT; i++) {
        assert_int_equal(stage_id_of(STAGE_INFO[i].name), i);
        assert_true(strlen(STAGE_INFO[i].name) < STAGE_NAME_MAX);
        assert_non_null(STAGE_INFO[i].symbol);
    }
    for (int i = 0; i < WEIGHT_COUNT; i++) {
        assert_int_equal(weight_slot_of(WEIGHT_INFO[i].name), i);
        assert_string_equal(lesson_weight_name(i), WEIGHT_INFO[i].name);
    }
    assert_int_equal(stage_id_of("no_such_stage"), -1);
    assert_int_equal(weight_slot_of("init"), -1);
    glob_t g;
    glob("lessons/*.json", 0, NULL, &g);
    glob(REF_DIR "/*.lesson.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc > 10);
    bool seen[STAGE_ID_COUNT] = {0};
    enum { TIED, RMS, SINKS, LEARNED, SINUSOIDAL, NO_QKV_BIAS, NO_FFN_BIAS, N_CASES };
    int cases[N_CASES] = {0};
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        load_forward(g.gl_pathv[f], &ls, &tr);
        const AttnConfig *c = &ls.cfg;
        cases[TIED] += c->vocab_size > 0 && c->tie_embeddings, cases[RMS] += c->norm == NORM_RMS;
        cases[SINKS] += c->attn_sinks, cases[LEARNED] += c->vocab_size > 0 && c->positions == POS_LEARNED;
        cases[SINUSOIDAL] += c->vocab_size > 0 && c->positions == POS_SINUSOIDAL;
        cases[NO_QKV_BIAS] += !c->qkv_bias, cases[NO_FFN_BIAS] += c->ffn_hidden > 0 && !c->ffn_bias;
        for (int s = 0; s < tr.n; s++) {
            const Stage *st = &tr.stages[s];
            const StageInfo *in = &STAGE_INFO[st->id];
            seen[st->id] = true;
            // one layer: the table's name; several: "l{layer}." before it, the model's own (input,
            // mask) without; a layer's stages apply that layer's weights, and come in layer order
            char want[STAGE_NAME_MAX];
            if (tr.n_layers > 1 && st->layer >= 0) snprintf(want, sizeof want, "l%d.%s", st->layer, in->name);
            else snprintf(want, sizeof want, "%s", in->name);
            assert_string_equal(st->name, want);
            assert_true(st->layer >= -1 && st->layer < tr.n_layers);
            // the model's own stages (the inputs, a language model's embedding and prediction) have no
            // layer; the layers' come in order
            bool own = in->step == STEP_INPUT || in->step == STEP_EMBED || in->step == STEP_PREDICT;
            // (an encoder–decoder's decoder self-attention blocks: each its own causal mask over the target)
            if (st->id == STAGE_MASK && trace_block(&tr, st->layer) == BLOCK_DECODER_SELF) own = false;
            if (own) assert_int_equal(st->layer, -1);
            else assert_true(st->layer >= 0);
            for (int k = 0; k < s && st->layer >= 0; k++) assert_true(tr.stages[k].layer <= st->layer);
            // (one exception: multi-head latent attention's k_heads joins k_C and the shared k_R, kind MLA_KEY)
            if (!(st->id == STAGE_K_HEADS && tr.mla_rank > 0 && st->kind == STAGE_KIND_MLA_KEY))
                assert_int_equal(st->kind, in->kind);
            assert_int_equal(st->step, in->step);
            // its parameters: its row's slots in its layer's weights (the model's own: layer 0's)
            AttnWeights *w = &ls.w[st->layer > 0 && in->weight < WEIGHT_EMBED ? st->layer : 0];
            if (st->weight != want_param(c, w, in->weight) || st->bias != want_param(c, w, in->bias))
                fail_msg("%s: %s records weight %p bias %p, its table row (%s, %s) says %p %p", g.gl_pathv[f],
                         st->name, (void *)st->weight, (void *)st->bias,
                         in->weight >= 0 ? WEIGHT_INFO[in->weight].name : "none",
                         in->bias >= 0 ? WEIGHT_INFO[in->bias].name : "none", (void *)want_param(c, w, in->weight),
                         (void *)want_param(c, w, in->bias));
            if (st->kind == STAGE_KIND_PROJECTION || st->kind == STAGE_KIND_OUT_PROJ || st->kind == STAGE_KIND_NORM)
                check_applied(&tr, st, c);
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
    for (int i = 0; i < STAGE_ID_COUNT; i++) // (the backward view's: test_backward's backward_trace)
        if (!seen[i] && STAGE_INFO[i].step != STEP_BACKWARD) fail_msg("no lesson records stage %s", STAGE_INFO[i].name);
    for (int i = 0; i < N_CASES; i++)
        if (!cases[i]) fail_msg("no lesson meets exception %d of the table (enum in test_stage_table)", i);
}

// Two ways to the same numbers: the tiled online softmax gives head_out again, and
// generating token by token from the K/V cache gives output again (and the cache holds
// the keys and values of the full pass), for every lesson and reference that has them.
static void test_flash_and_decode_agree(void **state)
{
    (void)state;
    glob_t g;
    glob("lessons/*.json", 0, NULL, &g);
    glob(REF_DIR "/*.lesson.json", GLOB_APPEND, NULL, &g);
    int flash = 0, decode = 0;
    const char *pairs[][2] = {{"flash_out", "head_out"}, {"decode_output", "output"}, {"cache_v", "v_heads"}};
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        load_forward(g.gl_pathv[f], &ls, &tr);
        // (every layer of a model of several: each stage with its own layer's partner)
        for (int s = 0; s < tr.n; s++) {
            const Stage *a = &tr.stages[s];
            flash += a->id == STAGE_FLASH_OUT && a->layer <= 0;
            decode += a->id == STAGE_DECODE_OUTPUT && a->layer <= 0;
            const char *partner = NULL;
            // the cache holds the keys the scores used: k_rope with RoPE, else k_heads (StreamingLLM's pos_shift:
            // the keys before RoPE, turned at each step to their places in the cache)
            const bool shift = ls.cfg.stream_pos == STREAM_POS_CACHE && ls.cfg.rope != ROPE_NONE;
            if (a->id == STAGE_CACHE_K) partner = ls.cfg.rope != ROPE_NONE && !shift ? "k_rope" : "k_heads";
            for (int p = 0; p < 3; p++)
                if (strcmp(STAGE_INFO[a->id].name, pairs[p][0]) == 0) partner = pairs[p][1];
            if (shift && a->id == STAGE_DECODE_OUTPUT) continue; // (its own positions: test_conventions)
            if (!partner) continue;
            int bi = trace_find_near(&tr, s, partner);
            assert_true(bi >= 0);
            const Stage *b = &tr.stages[bi];
            assert_int_equal(b->layer, a->layer);
            assert_int_equal(a->t.size, b->t.size);
            for (size_t i = 0; i < a->t.size; i++)
                if (!close_enough(a->t.data[i], b->t.data[i]))
                    fail_msg("%s: %s[%zu] = %.9g but %s %.9g", g.gl_pathv[f], a->name, i, (double)a->t.data[i],
                             b->name, (double)b->t.data[i]);
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
    print_message("flash_out = head_out in %d lessons, decode_output = output in %d\n", flash, decode);
    assert_true(flash >= 4 && decode >= 3);
}

// The default lesson is the classic example and is one of the references.
static void test_default_lesson_is_reference(void **state)
{
    (void)state;
    char *a = read_all("lessons/arange-2x4x4.json"), *b = read_all(REF_DIR "/arange-2x4x4.lesson.json");
    assert_non_null(a);
    assert_non_null(b);
    cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
    // same model, input and weights (the lesson may add narration)
    const char *keys[] = {"model", "input", "weights", "mask"};
    for (int i = 0; i < 4; i++)
        if (cJSON_GetObjectItem(ja, keys[i]) || cJSON_GetObjectItem(jb, keys[i]))
            assert_true(cJSON_Compare(cJSON_GetObjectItem(ja, keys[i]), cJSON_GetObjectItem(jb, keys[i]), 1));
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    free(a);
    free(b);
}

// --- properties on lessons built in memory -------------------------------------

static bool forward_text(const char *json, Lesson *ls, Trace *tr)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(ls, "mem.json", json, strlen(json), err, sizeof err)) {
        print_error("%s\n", err);
        return false;
    }
    trace_init(tr);
    return attn_forward(&ls->cfg, ls->w, &ls->in, tr);
}

static const float *stage(const Trace *tr, const char *name)
{
    const Stage *s = trace_get(tr, name);
    assert_non_null(s);
    return s->t.data;
}

static void test_softmax_and_masks(void **state)
{
    (void)state;
    const char *fills[] = {"-1e9", "\"-inf\"", "-1e10"};
    const char *masks[] = {"\"causal\"", "{\"key_padding\": [2, 4]}", "[[1, 0, 1, 1]]"};
    for (int f = 0; f < 3; f++)
        for (int m = 0; m < 3; m++) {
            char json[1024];
            snprintf(json, sizeof json,
                     "{\"title\": \"p\", \"model\": {\"d_model\": 6, \"n_heads\": 3, \"mask_fill\": %s},"
                     " \"input\": {\"query\": {\"shape\": [2, 4, 6], \"arange\": [-3, 3, 0.125]}},"
                     " \"mask\": %s, \"weights\": {\"init\": {\"seed\": %d}}}",
                     fills[f], masks[m], 7 + f);
            Lesson ls;
            Trace tr;
            assert_true(forward_text(json, &ls, &tr));
            const float *attn = stage(&tr, "attn"), *mask = stage(&tr, "mask");
            int B = 2, H = 3, L = 4;
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++)
                    for (int i = 0; i < L; i++) {
                        double sum = 0;
                        for (int j = 0; j < L; j++) {
                            float a = attn[(((size_t)b * H + h) * L + i) * L + j];
                            assert_false(isnan(a));   // no row is fully masked here
                            if (mask[((size_t)b * L + i) * L + j] == 0.0f) assert_true(a == 0.0f);
                            sum += (double)a;
                        }
                        assert_true(fabs(sum - 1.0) < 1e-6);
                    }
            trace_free(&tr);
            lesson_free(&ls);
        }
}

static void test_split_concat_round_trip(void **state)
{
    (void)state;
    const char *json = "{\"title\": \"p\", \"model\": {\"d_model\": 6, \"n_heads\": 2, \"d_k\": 2, \"d_v\": 5},"
                       " \"input\": {\"query\": {\"shape\": [3, 5, 6], \"arange\": [0, 9, 0.1]}},"
                       " \"weights\": {\"init\": {\"seed\": 3}}}";
    Lesson ls;
    Trace tr;
    assert_true(forward_text(json, &ls, &tr));
    const int B = 3, L = 5, H = 2, dk = 2, dv = 5;
    const float *qp = stage(&tr, "q_proj"), *qh = stage(&tr, "q_heads");
    const float *vp = stage(&tr, "v_proj"), *vh = stage(&tr, "v_heads");
    const float *ho = stage(&tr, "head_out"), *cc = stage(&tr, "concat");
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int l = 0; l < L; l++) {
                for (int d = 0; d < dk; d++)
                    assert_true(qh[(((size_t)b * H + h) * L + l) * dk + d] ==
                                qp[((size_t)b * L + l) * H * dk + h * dk + d]);
                for (int d = 0; d < dv; d++) {
                    assert_true(vh[(((size_t)b * H + h) * L + l) * dv + d] ==
                                vp[((size_t)b * L + l) * H * dv + h * dv + d]);
                    assert_true(cc[((size_t)b * L + l) * H * dv + h * dv + d] ==
                                ho[(((size_t)b * H + h) * L + l) * dv + d]);
                }
            }
    trace_free(&tr);
    lesson_free(&ls);
}

// Appends a (rows, cols) matrix of pseudo-random weights as nested JSON arrays.
static size_t put_matrix(char *buf, size_t n, const float *w, int rows, int cols)
{
    size_t u = (size_t)snprintf(buf, n, "[");
    for (int r = 0; r < rows; r++) {
        u += (size_t)snprintf(buf + u, n - u, r ? ",[" : "[");
        for (int c = 0; c < cols; c++)
            u += (size_t)snprintf(buf + u, n - u, c ? ",%.9g" : "%.9g", (double)w[r * cols + c]);
        u += (size_t)snprintf(buf + u, n - u, "]");
    }
    return u + (size_t)snprintf(buf + u, n - u, "]");
}

// Per-head modules (each head its own nn.Linear(d_model, d_k)) give exactly the
// heads of one fused projection whose weight stacks them along the output dim.
static void test_fused_equals_per_head(void **state)
{
    (void)state;
    enum { C = 4, H = 2, DK = 3, DV = 2, L = 5 };
    float wq[H * DK * C], wk[H * DK * C], wv[H * DV * C], wo[C * DV];
    for (int i = 0; i < H * DK * C; i++) wq[i] = attn_init_value(11, 0, (size_t)i, C);
    for (int i = 0; i < H * DK * C; i++) wk[i] = attn_init_value(11, 1, (size_t)i, C);
    for (int i = 0; i < H * DV * C; i++) wv[i] = attn_init_value(11, 2, (size_t)i, C);
    for (int i = 0; i < C * DV; i++) wo[i] = attn_init_value(11, 3, (size_t)i, DV);
    static char json[16384];
#define HEAD_JSON                                                                                  \
    "{\"title\": \"p\", \"model\": {\"d_model\": 4, \"n_heads\": %d, \"d_k\": 3, \"d_v\": 2,"                \
    " \"qkv_bias\": false, \"out_bias\": false}, \"mask\": \"causal\","                               \
    " \"input\": {\"query\": {\"shape\": [1, 5, 4], \"arange\": [-1, 1, 0.1]}}, \"weights\": {"
    // fused, H = 2
    size_t u = (size_t)snprintf(json, sizeof json, HEAD_JSON, H);
    u += (size_t)snprintf(json + u, sizeof json - u, "\"w_q\": ");
    u += put_matrix(json + u, sizeof json - u, wq, H * DK, C);
    u += (size_t)snprintf(json + u, sizeof json - u, ", \"w_k\": ");
    u += put_matrix(json + u, sizeof json - u, wk, H * DK, C);
    u += (size_t)snprintf(json + u, sizeof json - u, ", \"w_v\": ");
    u += put_matrix(json + u, sizeof json - u, wv, H * DV, C);
    u += (size_t)snprintf(json + u, sizeof json - u, ", \"init\": {\"seed\": 5}}}");
    Lesson fused;
    Trace tf;
    assert_true(forward_text(json, &fused, &tf));
    const float *ho = stage(&tf, "head_out");
    for (int h = 0; h < H; h++) {
        // one head as its own module: rows h*d .. h*d+d-1 of the fused weights
        u = (size_t)snprintf(json, sizeof json, HEAD_JSON, 1);
        u += (size_t)snprintf(json + u, sizeof json - u, "\"w_q\": ");
        u += put_matrix(json + u, sizeof json - u, wq + h * DK * C, DK, C);
        u += (size_t)snprintf(json + u, sizeof json - u, ", \"w_k\": ");
        u += put_matrix(json + u, sizeof json - u, wk + h * DK * C, DK, C);
        u += (size_t)snprintf(json + u, sizeof json - u, ", \"w_v\": ");
        u += put_matrix(json + u, sizeof json - u, wv + h * DV * C, DV, C);
        u += (size_t)snprintf(json + u, sizeof json - u, ", \"w_o\": ");
        u += put_matrix(json + u, sizeof json - u, wo, C, DV);
        snprintf(json + u, sizeof json - u, "}}");
        Lesson one;
        Trace t1;
        assert_true(forward_text(json, &one, &t1));
        const float *h1 = stage(&t1, "head_out");
        for (int i = 0; i < L * DV; i++) assert_true(h1[i] == ho[(size_t)h * L * DV + (size_t)i]);
        trace_free(&t1);
        lesson_free(&one);
    }
    trace_free(&tf);
    lesson_free(&fused);
}

// The rank-3 per-head weight form stacks to the same fused weights.
static void test_per_head_weight_form(void **state)
{
    (void)state;
    const char *stacked = "{\"title\": \"p\", \"model\": {\"d_model\": 2, \"n_heads\": 2, \"d_k\": 1},"
        " \"input\": {\"query\": [[1, 2], [3, -1]]}, \"weights\": {\"init\": {\"seed\": 1},"
        " \"w_q\": [[1, 2], [3, 4]], \"b_q\": [0.5, -0.5]}}";
    const char *per_head = "{\"title\": \"p\", \"model\": {\"d_model\": 2, \"n_heads\": 2, \"d_k\": 1},"
        " \"input\": {\"query\": [[1, 2], [3, -1]]}, \"weights\": {\"init\": {\"seed\": 1},"
        " \"w_q\": [[[1, 2]], [[3, 4]]], \"b_q\": [[0.5], [-0.5]]}}";
    Lesson a, b;
    Trace ta, tb;
    assert_true(forward_text(stacked, &a, &ta));
    assert_true(forward_text(per_head, &b, &tb));
    assert_int_equal(ta.n, tb.n);
    for (int i = 0; i < ta.n; i++) {
        assert_int_equal(ta.stages[i].t.size, tb.stages[i].t.size);
        assert_memory_equal(ta.stages[i].t.data, tb.stages[i].t.data, ta.stages[i].t.size * sizeof(float));
    }
    const float *q = stage(&ta, "q_proj");   // x·Wᵀ + b for x = (1, 2): (1+4+0.5, 3+8-0.5)
    assert_true(q[0] == 5.5f && q[1] == 10.5f);
    trace_free(&ta), trace_free(&tb);
    lesson_free(&a), lesson_free(&b);
}

static void test_stage_order_and_names(void **state)
{
    (void)state;
    Lesson ls;
    char err[LESSON_ERR_MAX];
    assert_true(lesson_load(&ls, REF_DIR "/dk-dv-ffn-norm.lesson.json", err, sizeof err));
    Trace tr;
    trace_init(&tr);
    assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
    const char *order[] = {"q_proj", "k_proj", "v_proj", "q_heads", "k_heads", "v_heads", "scores",
                           "masked_scores", "attn", "head_out", "concat", "output", "residual_sum",
                           "residual_norm", "ffn_hidden", "ffn_sum", "ffn_out"};
    int last = -1;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        int at = trace_find(&tr, order[i]);
        assert_true(at > last);
        last = at;
    }
    // every step present in order, and the timeline groups are contiguous
    for (int i = 1; i < tr.n; i++) assert_true(tr.stages[i].step >= tr.stages[i - 1].step);
    for (int i = 0; i < tr.n; i++)
        for (int k = 0; k < TRACE_MAX_OPERANDS; k++) assert_true(tr.stages[i].operands[k] < i);
    trace_free(&tr);
    lesson_free(&ls);
}

// --- the threaded core ---------------------------------------------------------

static bool same_stages(const char *name, const Trace *a, const Trace *b, int threads)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        const Tensor *x = &a->stages[i].t, *y = &b->stages[i].t;
        if (x->size != y->size || memcmp(x->data, y->data, x->size * sizeof(float)) != 0) {
            print_error("%s: stage %s differs on %d threads\n", name, a->stages[i].name, threads);
            return false;
        }
    }
    return true;
}

// Forward on 1 thread, then on 2, 3, 4 and 5 with every job shared however small:
// every stage of every lesson, reference variant and long lesson is bit-identical.
static void check_threads(const char *name, const Lesson *ls)
{
    Trace one, many;
    parallel_set_threads(1);
    trace_init(&one);
    assert_true(attn_forward(&ls->cfg, ls->w, &ls->in, &one));
    parallel_set_min_work(0);
    for (int th = 2; th <= 5; th++) {
        parallel_set_threads(th);
        trace_init(&many);
        assert_true(attn_forward(&ls->cfg, ls->w, &ls->in, &many));
        assert_true(same_stages(name, &one, &many, th));
        trace_free(&many);
    }
    parallel_set_min_work(PARALLEL_MIN_WORK);
    parallel_set_threads(0);
    trace_free(&one);
}

static void test_threads_identical(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    glob(REF_DIR "/*.lesson.json", GLOB_APPEND, NULL, &g);
    glob("tests/big/*.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 20);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        Lesson ls;
        char err[LESSON_ERR_MAX];
        assert_true(lesson_load(&ls, g.gl_pathv[i], err, sizeof err));
        check_threads(g.gl_pathv[i], &ls);
        lesson_free(&ls);
    }
    globfree(&g);
    // the benchmark's size: B=1 L=256 d_model=256 8 heads, causal, with the FFN
    const char *json = "{\"title\": \"t\", \"model\": {\"d_model\": 256, \"n_heads\": 8, \"residual_norm\": true,"
                       " \"ffn_hidden\": 300}, \"input\": {\"query\": {\"shape\": [1, 256, 256],"
                       " \"arange\": [-1, 1, 0.000030517578125]}}, \"mask\": \"causal\","
                       " \"weights\": {\"init\": {\"seed\": 1}}}";
    Lesson big;
    char err[LESSON_ERR_MAX];
    assert_true(lesson_parse(&big, "big.json", json, strlen(json), err, sizeof err));
    check_threads("big.json", &big);
    lesson_free(&big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_variants), cmocka_unit_test(test_stage_table), cmocka_unit_test(test_flash_and_decode_agree),
        cmocka_unit_test(test_lesson_library),  cmocka_unit_test(test_default_lesson_is_reference),
        cmocka_unit_test(test_softmax_and_masks),   cmocka_unit_test(test_split_concat_round_trip),
        cmocka_unit_test(test_fused_equals_per_head), cmocka_unit_test(test_per_head_weight_form),
        cmocka_unit_test(test_stage_order_and_names), cmocka_unit_test(test_threads_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
