// The model keys and the enum names, reader against writer: every value of every enum
// (activation, norm, positions, RoPE style and scaling, the causal mask's alignment) and
// every model key written away from its default is read, written by lesson_write, read
// back and compared — the value the file named and the whole AttnConfig. A reader and a
// writer whose name lists disagree (an offset, a renamed value) fail here.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "edit.h"
#include "lesson.h"

// json read, written and read again; *a the first reading, *b the second.
static void round_trip(const char *json, Lesson *a, Lesson *b)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(a, "mem.json", json, strlen(json), err, sizeof err)) fail_msg("%s\n%s", err, json);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_true(lesson_write(a, f));
    assert_int_equal(fclose(f), 0);
    if (!lesson_parse(b, "saved.json", buf, n, err, sizeof err)) fail_msg("%s\n%s", err, buf);
    // every field the file gave (and every default) as it was
    if (memcmp(&a->cfg, &b->cfg, sizeof a->cfg) != 0) fail_msg("the model changed on the way:\n%s\n%s", json, buf);
    assert_int_equal(a->in.mask_kind, b->in.mask_kind);
    assert_int_equal(a->in.causal_bottom_right, b->in.causal_bottom_right);
    free(buf);
}

#define PLAIN_INPUT "\"input\": {\"query\": {\"shape\": [1, 4, 8], \"arange\": [0, 32]}}, \"weights\": {\"init\": {\"seed\": 3}}"

static void lesson_with(char *out, size_t n, const char *model_extra, const char *mask)
{
    snprintf(out, n, "{\"title\": \"t\", \"model\": {\"d_model\": 8, \"n_heads\": 2%s}, " PLAIN_INPUT ", \"mask\": %s}",
             model_extra, mask);
}

static void test_activations(void **state)
{
    (void)state;
    const struct { const char *name; FfnAct act; } acts[] = {
        {"relu", FFN_RELU}, {"gelu", FFN_GELU}, {"gelu_tanh", FFN_GELU_TANH}, {"swiglu", FFN_SWIGLU}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        char extra[128], json[512];
        snprintf(extra, sizeof extra, ", \"ffn_hidden\": 4, \"activation\": \"%s\"", acts[i].name);
        lesson_with(json, sizeof json, extra, "null");
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(a.cfg.ffn_act, acts[i].act);
        assert_int_equal(b.cfg.ffn_act, acts[i].act);
        lesson_free(&a), lesson_free(&b);
    }
}

static void test_norms_and_positions(void **state)
{
    (void)state;
    const struct { const char *extra; NormKind norm; } norms[] = {
        {", \"residual_norm\": true, \"norm\": \"layer\"", NORM_LAYER}, {", \"residual_norm\": true, \"norm\": \"rms\"", NORM_RMS}};
    for (size_t i = 0; i < 2; i++) {
        char json[512];
        lesson_with(json, sizeof json, norms[i].extra, "null");
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(a.cfg.norm, norms[i].norm);
        assert_int_equal(b.cfg.norm, norms[i].norm);
        lesson_free(&a), lesson_free(&b);
    }
    const struct { const char *name; PosKind pos; } pos[] = {
        {"none", POS_NONE}, {"learned", POS_LEARNED}, {"sinusoidal", POS_SINUSOIDAL}};
    for (size_t i = 0; i < 3; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"title\": \"t\", \"vocab\": [\"a\", \"b\", \"c\"], \"model\": {\"d_model\": 4, "
                 "\"n_heads\": 2, \"positions\": \"%s\", \"temperature\": 0.5, \"tie_embeddings\": true, "
                 "\"final_norm\": false}, \"input\": {\"text\": \"abca\"}, \"weights\": {\"init\": {\"seed\": 1}}}",
                 pos[i].name);
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(a.cfg.positions, pos[i].pos);
        assert_int_equal(b.cfg.positions, pos[i].pos);
        assert_true(b.cfg.temperature == 0.5f && b.cfg.tie_embeddings && !b.cfg.final_norm);
        lesson_free(&a), lesson_free(&b);
    }
}

static void test_rope_styles_and_scalings(void **state)
{
    (void)state;
    const struct { const char *rope; RopeStyle style; RopeScaleType type; } r[] = {
        {"{}", ROPE_HALF, ROPE_SCALE_NONE},
        {"{\"style\": \"half\"}", ROPE_HALF, ROPE_SCALE_NONE},
        {"{\"style\": \"interleaved\", \"theta\": 500, \"rotary_dim\": 2}", ROPE_INTERLEAVED, ROPE_SCALE_NONE},
        {"{\"scaling\": {\"type\": \"linear\", \"factor\": 2}}", ROPE_HALF, ROPE_SCALE_LINEAR},
        {"{\"scaling\": {\"type\": \"dynamic\", \"factor\": 2, \"original_max_position_embeddings\": 2}}", ROPE_HALF,
         ROPE_SCALE_DYNAMIC},
        {"{\"scaling\": {\"type\": \"yarn\", \"factor\": 4, \"original_max_position_embeddings\": 2, \"beta_fast\": 16, "
         "\"beta_slow\": 2, \"attention_factor\": 1.5}}", ROPE_HALF, ROPE_SCALE_YARN},
        {"{\"scaling\": {\"type\": \"llama3\", \"factor\": 8, \"original_max_position_embeddings\": 2, "
         "\"low_freq_factor\": 1, \"high_freq_factor\": 4}}", ROPE_HALF, ROPE_SCALE_LLAMA3},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        char extra[300], json[800];
        snprintf(extra, sizeof extra, ", \"rope\": %s", r[i].rope);
        lesson_with(json, sizeof json, extra, "\"causal\"");
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(a.cfg.rope, r[i].style);
        assert_int_equal(b.cfg.rope, r[i].style);
        assert_int_equal(a.cfg.rope_scale.type, r[i].type);
        assert_int_equal(b.cfg.rope_scale.type, r[i].type);
        lesson_free(&a), lesson_free(&b);
    }
}

static void test_causal_alignments(void **state)
{
    (void)state;
    const char *masks[] = {"\"causal\"", "{\"causal\": \"top_left\"}", "{\"causal\": \"bottom_right\"}"};
    const bool br[] = {false, false, true};
    for (int i = 0; i < 3; i++) {
        char json[512];
        lesson_with(json, sizeof json, "", masks[i]);
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(a.in.mask_kind, MASK_CAUSAL);
        assert_int_equal(b.in.causal_bottom_right, br[i]);
        lesson_free(&a), lesson_free(&b);
    }
}

// every plain model key away from its default, at once, survives the trip
static void test_every_key_off_default(void **state)
{
    (void)state;
    char json[1024];
    lesson_with(json, sizeof json,
                ", \"n_layers\": 2, \"d_k\": 3, \"d_v\": 5, \"qkv_bias\": false, \"out_bias\": false, \"scale\": 1.5, "
                "\"mask_fill\": \"-inf\", \"residual_norm\": true, \"norm_eps\": 1e-6, \"ffn_hidden\": 6, \"norm\": \"rms\", "
                "\"norm_first\": true, \"activation\": \"gelu\", \"ffn_bias\": false, \"attn_sinks\": true, \"n_kv_heads\": 1, "
                "\"decode\": true, \"alibi\": true",
                "\"causal\"");
    Lesson a, b;
    round_trip(json, &a, &b);
    assert_int_equal(b.cfg.n_layers, 2);
    assert_int_equal(b.cfg.d_k, 3);
    assert_int_equal(b.cfg.d_v, 5);
    assert_true(!b.cfg.qkv_bias && !b.cfg.out_bias && b.cfg.residual_norm && b.cfg.norm_first && !b.cfg.ffn_bias);
    assert_true(b.cfg.scale == 1.5f && isinf(b.cfg.mask_fill) && b.cfg.norm_eps == 1e-6f);
    assert_true(b.cfg.attn_sinks && b.cfg.decode && b.cfg.alibi && b.cfg.n_kv_heads == 1 && b.cfg.ffn_hidden == 6);
    lesson_free(&a), lesson_free(&b);
    lesson_with(json, sizeof json, ", \"flash\": {\"block_q\": 2, \"block_k\": 3}", "null");
    round_trip(json, &a, &b);
    assert_true(b.cfg.flash_block_q == 2 && b.cfg.flash_block_k == 3);
    lesson_free(&a), lesson_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations),       cmocka_unit_test(test_norms_and_positions),
        cmocka_unit_test(test_rope_styles_and_scalings), cmocka_unit_test(test_causal_alignments),
        cmocka_unit_test(test_every_key_off_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
