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

#include "attn_names.h"
#include "edit.h"
#include "lesson.h"
#include "model_keys.h"

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
#define PLAIN_INPUT_KEY "\"input\": {\"query\": {\"shape\": [1, 3, 8], \"arange\": [0, 24]}, \"key\": {\"shape\": [1, 5, 8], \"arange\": [0, 40]}}, " \
    "\"weights\": {\"init\": {\"seed\": 3}}"

static void lesson_with(char *out, size_t n, const char *model_extra, const char *mask)
{
    snprintf(out, n, "{\"title\": \"t\", \"model\": {\"d_model\": 8, \"n_heads\": 2%s}, " PLAIN_INPUT ", \"mask\": %s}",
             model_extra, mask);
}

// round_trip of lesson_with(model_extra, mask)
static void round_trip_with(const char *model_extra, const char *mask, Lesson *a, Lesson *b)
{
    char json[1024];
    lesson_with(json, sizeof json, model_extra, mask);
    round_trip(json, a, b);
}

static void test_activations(void **state)
{
    (void)state;
    const struct { const char *name; FfnAct act; } acts[] = {
        {"relu", FFN_RELU}, {"gelu", FFN_GELU}, {"gelu_tanh", FFN_GELU_TANH}, {"swiglu", FFN_SWIGLU}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        char extra[128];
        snprintf(extra, sizeof extra, ", \"ffn_hidden\": 4, \"activation\": \"%s\"", acts[i].name);
        Lesson a, b;
        round_trip_with(extra, "null", &a, &b);
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
        Lesson a, b;
        round_trip_with(norms[i].extra, "null", &a, &b);
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
        char extra[300];
        snprintf(extra, sizeof extra, ", \"rope\": %s", r[i].rope);
        Lesson a, b;
        round_trip_with(extra, "\"causal\"", &a, &b);
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
        Lesson a, b;
        round_trip_with("", masks[i], &a, &b);
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

// --- over the tables ---------------------------------------------------------------

// A lesson that sets model key k away from its default (and what that needs), for every row:
// a row added without one fails test_every_row.
#define LM_LESSON(model) "{\"title\": \"t\", \"vocab\": [\"a\", \"b\", \"c\"], \"model\": {\"d_model\": 4, \"n_heads\": 2" \
    model "}, \"input\": {\"text\": \"abca\"}, \"weights\": {\"init\": {\"seed\": 1}}}"
#define PLAIN_LESSON(model) "{\"title\": \"t\", \"model\": {\"d_model\": 8, \"n_heads\": 2" model "}, " PLAIN_INPUT \
    ", \"mask\": \"causal\"}"
// DeepSeek's: multi-head latent attention (d_k 4 = 2 content + 2 RoPE dimensions) and the indexer
#define MLA_MODEL(more) ", \"qkv_bias\": false, \"rope\": {\"theta\": 100}, \"kv_lora_rank\": 2, " \
    "\"qk_rope_head_dim\": 2" more
#define DSA_MODEL ", \"index_n_heads\": 3, \"index_head_dim\": 2, \"index_topk\": 2"
static const char *const OFF_DEFAULT[MK_COUNT] = {
    [MK_N_LAYERS] = PLAIN_LESSON(", \"n_layers\": 3"),
    [MK_D_MODEL] = PLAIN_LESSON(""),
    [MK_N_HEADS] = PLAIN_LESSON(""),
    [MK_D_K] = PLAIN_LESSON(", \"d_k\": 6"),
    [MK_D_V] = PLAIN_LESSON(", \"d_v\": 7"),
    [MK_QKV_BIAS] = PLAIN_LESSON(", \"qkv_bias\": false"),
    [MK_OUT_BIAS] = PLAIN_LESSON(", \"out_bias\": false"),
    [MK_SCALE] = PLAIN_LESSON(", \"scale\": 0.25"),
    [MK_MASK_FILL] = PLAIN_LESSON(", \"mask_fill\": -3.5"),
    [MK_RESIDUAL_NORM] = PLAIN_LESSON(", \"residual_norm\": true"),
    [MK_NORM_EPS] = PLAIN_LESSON(", \"norm_eps\": 0.001"),
    [MK_FFN_HIDDEN] = PLAIN_LESSON(", \"ffn_hidden\": 5"),
    [MK_NORM] = PLAIN_LESSON(", \"residual_norm\": true, \"norm\": \"rms\""),
    [MK_NORM_FIRST] = PLAIN_LESSON(", \"residual_norm\": true, \"norm_first\": true"),
    [MK_ACTIVATION] = PLAIN_LESSON(", \"ffn_hidden\": 5, \"activation\": \"gelu_tanh\""),
    [MK_FFN_BIAS] = PLAIN_LESSON(", \"ffn_hidden\": 5, \"ffn_bias\": false"),
    [MK_ATTN_SINKS] = PLAIN_LESSON(", \"attn_sinks\": true"),
    [MK_N_KV_HEADS] = PLAIN_LESSON(", \"n_kv_heads\": 1"),
    [MK_ROPE] = PLAIN_LESSON(", \"rope\": {\"theta\": 100, \"style\": \"interleaved\", \"rotary_dim\": 2}"),
    [MK_ALIBI] = PLAIN_LESSON(", \"alibi\": true"),
    [MK_DECODE] = PLAIN_LESSON(", \"decode\": true"),
    [MK_FLASH] = PLAIN_LESSON(", \"flash\": {\"block_q\": 3, \"block_k\": 2}"),
    [MK_QUERY_PRE_ATTN_SCALAR] = PLAIN_LESSON(", \"query_pre_attn_scalar\": 7"),
    [MK_QK_NORM] = PLAIN_LESSON(", \"qk_norm\": true"),
    [MK_SOFTCAP] = PLAIN_LESSON(", \"attn_logit_softcapping\": 2.5"),
    [MK_ATTN_GATE] = PLAIN_LESSON(", \"attn_gate\": true"),
    [MK_LAYER_TYPES] = PLAIN_LESSON(", \"n_layers\": 3, \"layer_types\": [\"full_attention\"]"),
    [MK_SLIDING_WINDOW] = PLAIN_LESSON(", \"n_layers\": 2, \"layer_types\": [\"sliding_attention\", \"full_attention\"], "
                                       "\"sliding_window\": 2"),
    [MK_ROPE_LOCAL_BASE_FREQ] = PLAIN_LESSON(", \"n_layers\": 2, \"rope\": {\"theta\": 1e6}, \"layer_types\": "
                                             "[\"sliding_attention\", \"full_attention\"], \"sliding_window\": 2, "
                                             "\"rope_local_base_freq\": 10"),
    [MK_Q_LORA_RANK] = PLAIN_LESSON(MLA_MODEL(", \"q_lora_rank\": 3")),
    [MK_KV_LORA_RANK] = PLAIN_LESSON(MLA_MODEL("")),
    [MK_QK_ROPE_HEAD_DIM] = PLAIN_LESSON(MLA_MODEL("")),
    [MK_INDEX_N_HEADS] = PLAIN_LESSON(DSA_MODEL),
    [MK_INDEX_HEAD_DIM] = PLAIN_LESSON(DSA_MODEL),
    [MK_INDEX_TOPK] = PLAIN_LESSON(DSA_MODEL),
    [MK_POSITIONS] = LM_LESSON(", \"positions\": \"sinusoidal\""),
    [MK_MAX_POSITIONS] = LM_LESSON(", \"positions\": \"learned\", \"max_positions\": 9"),
    [MK_FINAL_NORM] = LM_LESSON(", \"final_norm\": false"),
    [MK_TIE_EMBEDDINGS] = LM_LESSON(", \"tie_embeddings\": true"),
    [MK_TEMPERATURE] = LM_LESSON(", \"temperature\": 2.5"),
    [MK_TOP_K] = LM_LESSON(", \"top_k\": 2"),
    [MK_TOP_P] = LM_LESSON(", \"top_p\": 0.9"),
    [MK_WINDOW_CONVENTION] = PLAIN_LESSON(", \"window_convention\": \"flash\""),
    [MK_MASKED_ROWS] = PLAIN_LESSON(", \"masked_rows\": \"zero\""),
    [MK_ALIBI_FORM] = PLAIN_LESSON(", \"alibi\": true, \"alibi_form\": \"key\""),
    [MK_STREAMING_POSITIONS] = PLAIN_LESSON(", \"streaming_positions\": \"cache\""),
    [MK_FLASH_ACCUMULATOR] = PLAIN_LESSON(", \"flash\": {\"block_q\": 2, \"block_k\": 2}, \"flash_accumulator\": \"fa1\""),
    // an encoder–decoder: 1 encoder block, 1 decoder layer (2 blocks); the source is input.key, no mask
    [MK_DECODER_LAYERS] = "{\"title\": \"t\", \"model\": {\"d_model\": 8, \"n_heads\": 2, \"n_layers\": 3, "
                          "\"decoder_layers\": 1, \"residual_norm\": true, \"ffn_hidden\": 4}, " PLAIN_INPUT_KEY "}",
    [MK_LINEAR_RULE] = PLAIN_LESSON(", \"n_layers\": 2, \"layer_types\": [\"linear_attention\", \"full_attention\"], "
                                    "\"linear_rule\": \"delta\""),
    [MK_LINEAR_FORM] = PLAIN_LESSON(", \"n_layers\": 2, \"layer_types\": [\"linear_attention\"], "
                                    "\"linear_form\": \"parallel\""),
};

static bool field_is_default(const Lesson *ls, int k)
{
    Lesson d;
    char err[LESSON_ERR_MAX];
    const char *json = MODEL_KEYS[k].flags & MK_LM ? LM_LESSON("") : PLAIN_LESSON("");
    if (!lesson_parse(&d, "default.json", json, strlen(json), err, sizeof err)) fail_msg("%s", err);
    // (an OBJECT: its first field, rope's style, flash's block_q)
    const size_t at = MODEL_KEYS[k].offset, size = MODEL_KEYS[k].type == MK_BOOL ? sizeof(bool) : sizeof(int);
    const bool same = memcmp((const char *)&ls->cfg + at, (const char *)&d.cfg + at, size) == 0;
    lesson_free(&d);
    return same;
}

// every row: a file that sets it reads it (away from the default), lesson_write writes it
// (by its name), and the file written reads back to the same model
static void test_every_row(void **state)
{
    (void)state;
    for (int k = 0; k < MK_COUNT; k++) {
        if (!OFF_DEFAULT[k]) fail_msg("model key %s: no lesson in OFF_DEFAULT sets it", MODEL_KEYS[k].name);
        Lesson a, b;
        round_trip(OFF_DEFAULT[k], &a, &b);
        if (!(MODEL_KEYS[k].flags & MK_REQUIRED) && field_is_default(&b, k))
            fail_msg("model key %s: read back as its default", MODEL_KEYS[k].name);
        char *buf = NULL, want[40];
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        assert_true(lesson_write(&a, f));
        fclose(f);
        snprintf(want, sizeof want, "\"%s\": ", MODEL_KEYS[k].name);
        if (!strstr(buf, want)) fail_msg("model key %s: not written\n%s", MODEL_KEYS[k].name, buf);
        free(buf);
        lesson_free(&a), lesson_free(&b);
    }
}

// every named value of every enum a model key takes: read as its value, and back
static void test_every_enum_value(void **state)
{
    (void)state;
    for (int k = 0; k < MK_COUNT; k++) {
        if (MODEL_KEYS[k].type != MK_ENUM) continue;
        const AttnNames *e = model_key_names(k);
        assert_non_null(e);
        for (int v = 0; v < e->n; v++) {
            char json[600], extra[160];
            snprintf(extra, sizeof extra, ", \"residual_norm\": true, \"ffn_hidden\": 4, \"%s\": \"%s\"", MODEL_KEYS[k].name,
                     attn_names_name(e, v));
            if (MODEL_KEYS[k].flags & MK_LM)
                snprintf(json, sizeof json, "{\"title\": \"t\", \"vocab\": [\"a\", \"b\"], \"model\": {\"d_model\": 4, "
                         "\"n_heads\": 2%s}, \"input\": {\"text\": \"ab\"}, \"weights\": {\"init\": {\"seed\": 1}}}", extra);
            else
                lesson_with(json, sizeof json, extra, "null");
            Lesson a, b;
            round_trip(json, &a, &b);
            int got;
            memcpy(&got, (const char *)&b.cfg + MODEL_KEYS[k].offset, sizeof got);
            assert_int_equal(got, v);
            lesson_free(&a), lesson_free(&b);
        }
    }
    // the RoPE styles and scalings, the causal alignments: each named value read as itself
    for (int v = 0; v < ATTN_NAMES_ROPE_STYLE.n; v++) {
        const char *name = attn_names_name(&ATTN_NAMES_ROPE_STYLE, v);
        if (!name) continue;
        char extra[120];
        snprintf(extra, sizeof extra, ", \"rope\": {\"style\": \"%s\"}", name);
        Lesson a, b;
        round_trip_with(extra, "null", &a, &b);
        assert_int_equal(b.cfg.rope, v);
        lesson_free(&a), lesson_free(&b);
    }
    for (int v = 0; v < ATTN_NAMES_ROPE_SCALE.n; v++) {
        const char *name = attn_names_name(&ATTN_NAMES_ROPE_SCALE, v);
        if (!name) continue;
        char extra[300], json[800];
        snprintf(extra, sizeof extra, ", \"rope\": {\"scaling\": {\"type\": \"%s\", \"factor\": 2%s}}", name,
                 v == ROPE_SCALE_LINEAR ? "" : ", \"original_max_position_embeddings\": 2");
        lesson_with(json, sizeof json, extra, "null");
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(b.cfg.rope_scale.type, v);
        lesson_free(&a), lesson_free(&b);
    }
    for (int v = 0; v < ATTN_NAMES_CAUSAL.n; v++) {
        char mask[80], json[600];
        snprintf(mask, sizeof mask, "{\"causal\": \"%s\"}", attn_names_name(&ATTN_NAMES_CAUSAL, v));
        lesson_with(json, sizeof json, "", mask);
        Lesson a, b;
        round_trip(json, &a, &b);
        assert_int_equal(b.in.causal_bottom_right, v == CAUSAL_BOTTOM_RIGHT);
        lesson_free(&a), lesson_free(&b);
    }
}

// an unknown model key's message lists every key of the table (it was cut at 256 bytes,
// in the middle of tie_embeddings, without temperature)
static void test_unknown_key_lists_every_key(void **state)
{
    (void)state;
    const char *json = PLAIN_LESSON(", \"bogus\": 1");
    Lesson ls;
    char err[LESSON_ERR_MAX];
    assert_false(lesson_parse(&ls, "mem.json", json, strlen(json), err, sizeof err));
    for (int k = 0; k < MK_COUNT; k++) {
        char want[40];
        snprintf(want, sizeof want, "%s%s", MODEL_KEYS[k].name, k == MK_COUNT - 1 ? "" : ",");
        if (!strstr(err, want)) fail_msg("%s: not listed in \"%s\"", MODEL_KEYS[k].name, err);
    }
}

// the editable keys: --set applies each, and refuses a value out of the range the reader
// refuses too (one range, one place)
static void test_editable_keys(void **state)
{
    (void)state;
    for (int k = 0; k < MK_COUNT; k++) {
        if (!MODEL_KEYS[k].editable) continue;
        const bool lm = MODEL_KEYS[k].flags & MK_LM;
        const char *json = lm ? LM_LESSON("") : k == MK_INDEX_TOPK ? PLAIN_LESSON(DSA_MODEL) : PLAIN_LESSON("");
        Lesson ls;
        char err[EDIT_ERR_MAX], arg[64];
        assert_true(lesson_parse(&ls, "mem.json", json, strlen(json), err, sizeof err));
        Edit e;
        const bool en = MODEL_KEYS[k].type == MK_ENUM; // (a convention's: its second name)
        const float val = MODEL_KEYS[k].type == MK_INT ? 3.0f : en ? 1.0f : 0.5f; // (an INT key's: whole)
        if (en)
            snprintf(arg, sizeof arg, "model.%s=%s", MODEL_KEYS[k].name, attn_names_name(model_key_names(k), 1));
        else
            snprintf(arg, sizeof arg, "model.%s=%g", MODEL_KEYS[k].name, (double)val);
        if (!edit_parse(&ls, arg, &e, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(edit_model_key(e.kind), k);
        assert_string_equal(e.text, arg);
        assert_true(edit_apply(&ls, &e, err, sizeof err));
        assert_true(model_key_get(&ls.cfg, k) == val);
        assert_true(edit_is_noop(&ls, &e));
        if (en) { // a number, or a name it does not have: refused by --set and by the reader
            snprintf(arg, sizeof arg, "model.%s=1", MODEL_KEYS[k].name);
            assert_false(edit_parse(&ls, arg, &e, err, sizeof err));
            snprintf(arg, sizeof arg, "model.%s=both", MODEL_KEYS[k].name);
            assert_false(edit_parse(&ls, arg, &e, err, sizeof err));
            if (!strstr(err, model_key_edit_expect(k))) fail_msg("%s", err);
        } else if (MODEL_KEYS[k].lo > -INFINITY) { // below the range: refused by --set and by the reader
            snprintf(arg, sizeof arg, "model.%s=%g", MODEL_KEYS[k].name, (double)MODEL_KEYS[k].lo / 2.0 - 1.0);
            assert_false(edit_parse(&ls, arg, &e, err, sizeof err));
            char bad[600], model[80];
            snprintf(model, sizeof model, ", \"%s\": %g", MODEL_KEYS[k].name, (double)MODEL_KEYS[k].lo / 2.0 - 1.0);
            if (lm)
                snprintf(bad, sizeof bad, "{\"title\": \"t\", \"vocab\": [\"a\"], \"model\": {\"d_model\": 4, \"n_heads\": 2%s}, "
                         "\"input\": {\"text\": \"a\"}, \"weights\": {\"init\": {\"seed\": 1}}}", model);
            else
                lesson_with(bad, sizeof bad, model, "null");
            Lesson b;
            char lerr[LESSON_ERR_MAX];
            assert_false(lesson_parse(&b, "mem.json", bad, strlen(bad), lerr, sizeof lerr));
            char want_path[60];
            snprintf(want_path, sizeof want_path, "model.%s: expected", MODEL_KEYS[k].name);
            if (!strstr(lerr, want_path)) fail_msg("%s", lerr);
        }
        lesson_free(&ls);
    }
}

// Gemma's query_pre_attn_scalar makes the scale √s; an edit of model.scale then wins, and the
// lesson written after it still loads (it wrote both, and the reader refused the pair)
static void test_qpas_scale_edit(void **state)
{
    (void)state;
    const char *json = PLAIN_LESSON(", \"query_pre_attn_scalar\": 16");
    Lesson ls, back;
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(&ls, "q.json", json, strlen(json), err, sizeof err)) fail_msg("%s", err);
    assert_true(ls.cfg.scale == 4.0f);
    model_key_set(&ls.cfg, MK_SCALE, 3.0f);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_true(lesson_write(&ls, f));
    fclose(f);
    assert_null(strstr(buf, "query_pre_attn_scalar"));
    if (!lesson_parse(&back, "q.json", buf, n, err, sizeof err)) fail_msg("%s\n%s", err, buf);
    assert_true(back.cfg.scale == 3.0f);
    free(buf);
    lesson_free(&ls), lesson_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations),       cmocka_unit_test(test_norms_and_positions),
        cmocka_unit_test(test_rope_styles_and_scalings), cmocka_unit_test(test_causal_alignments),
        cmocka_unit_test(test_every_key_off_default), cmocka_unit_test(test_every_row),
        cmocka_unit_test(test_every_enum_value),  cmocka_unit_test(test_unknown_key_lists_every_key),
        cmocka_unit_test(test_editable_keys),      cmocka_unit_test(test_qpas_scale_edit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
