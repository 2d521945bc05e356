// The lesson format: every accepted form, its defaults, and the init generator.
// (The rejected forms are the corpus in tests/bad/, checked by bad_lessons_test.sh.)
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lesson.h"
#include "utf8.h"

static Lesson L;

static void load_ok(const char *json)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(&L, "mem.json", json, strlen(json), err, sizeof err)) fail_msg("%s", err);
}

static void load_bad(const char *json, const char *want)
{
    char err[LESSON_ERR_MAX];
    assert_false(lesson_parse(&L, "mem.json", json, strlen(json), err, sizeof err));
    if (!strstr(err, want)) fail_msg("got \"%s\", want \"%s\"", err, want);
    assert_null(strchr(err, '\n'));
    assert_true(strncmp(err, "mem.json: ", 10) == 0);
}

#define BASE "\"model\": {\"d_model\": 4, \"n_heads\": 2}, \"weights\": {\"init\": {\"seed\": 1}}"

static void test_defaults(void **state)
{
    (void)state;
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[0,1,2,3],[4,5,6,7],[8,9,10,11]]}}");
    assert_int_equal(L.cfg.d_k, 2);
    assert_int_equal(L.cfg.d_v, 2);
    assert_true(L.cfg.qkv_bias && L.cfg.out_bias);
    assert_false(L.cfg.residual_norm);
    assert_int_equal(L.cfg.ffn_hidden, 0);
    assert_true(L.cfg.scale == sqrtf(2.0f));
    assert_true(L.cfg.mask_fill == -1e9f);
    assert_true(L.cfg.norm_eps == 1e-5f);
    assert_int_equal(L.in.mask_kind, MASK_NONE);
    // a (L, C) input is one batch; key and value default to the query
    assert_int_equal(L.batch, 1);
    assert_int_equal(L.len_q, 3);
    assert_int_equal(L.len_k, 3);
    assert_true(L.in.key_is_query && L.in.value_is_key);
    assert_memory_equal(L.in.key.data, L.in.query.data, 12 * sizeof(float));
    assert_string_equal(lesson_title(&L, LANG_ZH), "T");   // zh falls back to en
    assert_null(L.q_tokens);
    lesson_free(&L);
}

static void test_tensor_forms_agree(void **state)
{
    (void)state;
    const char *forms[] = {
        "[[[0,1,2,3],[4,5,6,7]],[[8,9,10,11],[12,13,14,15]]]",
        "{\"shape\": [2,2,4], \"data\": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}",
        "{\"shape\": [2,2,4], \"arange\": [0,16]}",
        "{\"shape\": [2,2,4], \"arange\": [0,8,0.5]}",
    };
    for (int f = 0; f < 4; f++) {
        char json[512];
        snprintf(json, sizeof json, "{\"title\": \"T\", " BASE ", \"input\": {\"query\": %s}}", forms[f]);
        load_ok(json);
        assert_int_equal(L.in.query.rank, 3);
        assert_int_equal(L.batch, 2);
        for (int i = 0; i < 16; i++)
            assert_true(L.in.query.data[i] == (f == 3 ? (float)i * 0.5f : (float)i));
        lesson_free(&L);
    }
}

static void test_model_options(void **state)
{
    (void)state;
    load_ok("{\"title\": {\"en\": \"E\", \"zh\": \"中\"}, \"model\": {\"d_model\": 6, \"n_heads\": 4, \"d_k\": 3,"
            " \"d_v\": 5, \"qkv_bias\": false, \"out_bias\": true, \"scale\": 1, \"mask_fill\": \"-inf\","
            " \"residual_norm\": true, \"norm_eps\": 1e-6, \"ffn_hidden\": 12},"
            " \"input\": {\"query\": {\"shape\": [1,2,6], \"arange\": [0,12]}},"
            " \"weights\": {\"init\": {\"seed\": 9}, \"norm_bias\": [1,1,1,1,1,1]}}");
    assert_int_equal(L.cfg.d_k, 3);   // 4 heads need not divide 6 when d_k is given
    assert_int_equal(L.cfg.d_v, 5);
    assert_false(L.cfg.qkv_bias);
    assert_true(isinf(L.cfg.mask_fill) && L.cfg.mask_fill < 0);
    assert_true(L.cfg.scale == 1.0f && L.cfg.norm_eps == 1e-6f);
    assert_int_equal(L.w[0].w_q.shape[0], 12);
    assert_int_equal(L.w[0].w_v.shape[0], 20);
    assert_int_equal(L.w[0].w_o.shape[1], 20);
    assert_int_equal(L.w[0].ffn_w1.shape[0], 12);
    assert_false(tensor_present(&L.w[0].b_q));
    for (int i = 0; i < 6; i++) {
        assert_true(L.w[0].norm_weight.data[i] == 1.0f);     // LayerNorm default weight
        assert_true(L.w[0].norm_bias.data[i] == 1.0f);       // explicit override
        assert_true(L.w[0].ffn_norm_bias.data[i] == 0.0f);
    }
    assert_string_equal(lesson_title(&L, LANG_ZH), "中");
    assert_string_equal(lesson_title(&L, LANG_EN), "E");
    lesson_free(&L);
}

static void test_init_generator(void **state)
{
    (void)state;
    // deterministic, within ±1/√fan_in, roughly centred, different per tensor
    double sum = 0;
    for (size_t i = 0; i < 4000; i++) {
        float v = attn_init_value(42, 0, i, 16);
        assert_true(v == attn_init_value(42, 0, i, 16));
        assert_true(fabsf(v) <= 0.25f);
        sum += (double)v;
    }
    assert_true(fabs(sum / 4000) < 0.01);
    assert_true(attn_init_value(42, 0, 0, 4) != attn_init_value(42, 1, 0, 4));
    assert_true(attn_init_value(42, 0, 0, 4) != attn_init_value(43, 0, 0, 4));
    // independent streams: no two consecutive values of one tensor come again, in that
    // order, in another (the old streams were one another shifted by an element: b_q[1:4]
    // was w_k[0,0:3] in the classic lesson)
    for (unsigned long long seed = 0; seed < 64; seed++)
        for (int t = 0; t < 12; t++)
            for (int t2 = 0; t2 < 12; t2++) {
                if (t2 == t) continue;
                for (size_t i = 0; i + 1 < 48; i++)
                    for (size_t j = 0; j + 1 < 48; j++)
                        if (attn_init_value(seed, t, i, 1) == attn_init_value(seed, t2, j, 1) &&
                            attn_init_value(seed, t, i + 1, 1) == attn_init_value(seed, t2, j + 1, 1))
                            fail_msg("seed %llu: tensor %d [%zu, %zu] repeats tensor %d [%zu, %zu]", seed, t, i, i + 1, t2,
                                     j, j + 1);
            }
    // explicit tensors override the generated ones
    load_ok("{\"title\": \"T\", \"model\": {\"d_model\": 2, \"n_heads\": 1}, \"input\": {\"query\": [[1,2]]},"
            " \"weights\": {\"init\": {\"seed\": 42}, \"w_k\": [[1,0],[0,1]]}}");
    assert_true(L.w[0].w_k.data[0] == 1.0f && L.w[0].w_k.data[1] == 0.0f);
    assert_true(L.w[0].w_q.data[0] == attn_init_value(42, 0, 0, 2));
    assert_true(L.w[0].b_o.data[1] == attn_init_value(42, 7, 1, 2));
    lesson_free(&L);
}

static void test_inputs_key_value(void **state)
{
    (void)state;
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": {\"shape\": [2,3,4], \"arange\": [0,24]},"
            " \"key\": {\"shape\": [2,5,4], \"arange\": [0,40]}, \"value\": \"key\"}}");
    assert_int_equal(L.len_q, 3);
    assert_int_equal(L.len_k, 5);
    assert_false(L.in.key_is_query);
    assert_true(L.in.value_is_key);
    lesson_free(&L);
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]], \"key\": \"query\","
            " \"value\": [[4,3,2,1]]}}");
    assert_true(L.in.key_is_query);
    assert_false(L.in.value_is_key);
    assert_true(L.in.value.data[0] == 4.0f);
    lesson_free(&L);
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]], \"key\": [[0,0,0,1]],"
            " \"value\": \"query\"}}");
    assert_false(L.in.value_is_key);
    assert_true(L.in.value.data[0] == 1.0f);
    lesson_free(&L);
}

static float mask_at(int b, int i, int j)
{
    return L.in.mask.data[((size_t)b * L.len_q + i) * L.len_k + j];
}

static void test_mask_forms(void **state)
{
    (void)state;
    const char *q = "\"input\": {\"query\": {\"shape\": [2,3,4], \"arange\": [0,24]}}";
    char json[512];
    // causal
    snprintf(json, sizeof json, "{\"title\": \"T\", " BASE ", %s, \"mask\": \"causal\"}", q);
    load_ok(json);
    assert_int_equal(L.in.mask_kind, MASK_CAUSAL);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) assert_true(mask_at(b, i, j) == (j <= i ? 1.0f : 0.0f));
    lesson_free(&L);
    // key padding
    snprintf(json, sizeof json, "{\"title\": \"T\", " BASE ", %s, \"mask\": {\"key_padding\": [3, 1]}}", q);
    load_ok(json);
    assert_int_equal(L.in.mask_kind, MASK_KEY_PADDING);
    assert_true(mask_at(0, 2, 2) == 1.0f && mask_at(1, 0, 0) == 1.0f && mask_at(1, 0, 1) == 0.0f);
    lesson_free(&L);
    // broadcast forms: (Lk), (Lq, Lk), (B, 1, Lk), (B, 1, 1, Lk), booleans
    const char *forms[] = {"[1, 0, 1]", "[[1,0,1],[1,0,1],[1,0,1]]", "[[[1,0,1]],[[1,0,1]]]",
                           "[[[[1,0,1]]],[[[1,0,1]]]]", "[true, false, true]", "null"};
    for (int f = 0; f < 6; f++) {
        snprintf(json, sizeof json, "{\"title\": \"T\", " BASE ", %s, \"mask\": %s}", q, forms[f]);
        load_ok(json);
        if (f == 5) {
            assert_int_equal(L.in.mask_kind, MASK_NONE);
        } else {
            assert_int_equal(L.in.mask_kind, MASK_TENSOR);
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) assert_true(mask_at(b, i, j) == (j == 1 ? 0.0f : 1.0f));
        }
        lesson_free(&L);
    }
    // per-batch (B, Lq, Lk)
    snprintf(json, sizeof json, "{\"title\": \"T\", " BASE ", %s, \"mask\": {\"shape\": [2,3,3], \"data\": "
             "[1,1,1, 1,1,1, 1,1,1, 0,0,0, 0,0,0, 0,0,1]}}", q);
    load_ok(json);
    assert_true(mask_at(0, 1, 1) == 1.0f && mask_at(1, 1, 1) == 0.0f && mask_at(1, 2, 2) == 1.0f);
    lesson_free(&L);
}

static void test_tokens_and_steps(void **state)
{
    (void)state;
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4],[5,6,7,8]]},"
            " \"tokens\": [\"the\", \"cat\"], \"steps\": {\"scores\": \"Dot products.\","
            " \"softmax\": {\"en\": \"Normalise.\", \"zh\": \"归一化。\"}}}");
    assert_string_equal(L.q_tokens[1], "cat");
    assert_string_equal(L.k_tokens[0], "the");
    assert_string_equal(lesson_step_text(&L, "scores", LANG_EN), "Dot products.");
    assert_string_equal(lesson_step_text(&L, "scores", LANG_ZH), "Dot products.");   // fallback
    assert_string_equal(lesson_step_text(&L, "softmax", LANG_ZH), "归一化。");
    assert_null(lesson_step_text(&L, "concat", LANG_EN));
    assert_int_equal(L.n_notes, 0);
    assert_null(lesson_note_text(&L, "scores", LANG_EN));
    lesson_free(&L);
    // the teacher's notes: keyed like the narration, separate from it
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4],[5,6,7,8]]},"
            " \"steps\": {\"scores\": \"Dot products.\"},"
            " \"notes\": {\"scores\": {\"en\": \"Ask: why divide?\\nThen show row 0.\", \"zh\": \"问：为什么要除？\"},"
            " \"attn\": \"Rows sum to 1.\"}}");
    assert_int_equal(L.n_notes, 2);
    assert_string_equal(lesson_note_text(&L, "scores", LANG_EN), "Ask: why divide?\nThen show row 0.");
    assert_string_equal(lesson_note_text(&L, "scores", LANG_ZH), "问：为什么要除？");
    assert_string_equal(lesson_note_text(&L, "attn", LANG_ZH), "Rows sum to 1.");   // fallback
    assert_null(lesson_note_text(&L, "softmax", LANG_EN));
    assert_string_equal(lesson_step_text(&L, "scores", LANG_EN), "Dot products.");
    assert_null(lesson_step_text(&L, "attn", LANG_EN));
    lesson_free(&L);
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]]}, \"notes\": [\"x\"]}",
             "mem.json: notes: expected an object mapping a stage name to its teacher's notes, got an array");
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]]}, \"notes\": {\"scorez\": \"x\"}}",
             "mem.json: notes.scorez: unknown key");
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]]}, \"notes\": {\"attn\": 3}}",
             "mem.json: notes.attn:");
    load_ok("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[1,2,3,4]], \"key\": [[1,1,1,1],[2,2,2,2]]},"
            " \"tokens\": {\"query\": [\"q\"], \"key\": [\"k0\", \"k1\"]}}");
    assert_string_equal(L.q_tokens[0], "q");
    assert_string_equal(L.k_tokens[1], "k1");
    lesson_free(&L);
}

static void test_errors_are_one_line(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    load_bad("{\"title\": \"T\", \"model\": {\"d_model\": 4, \"n_heads\": 3}}",
             "mem.json: model.n_heads: 3 does not divide d_model 4");
    load_bad("{\"title\": \"T\",\n  \"model\": }", "mem.json: 2:12: JSON syntax error");
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": {\"shape\": [64, 1024, 1024], \"arange\": [0, 1]}}}",
             "input.query.shape: tensor too large");
    load_bad("{\"title\": \"a\\nb\", " BASE "}", "title: control character U+000A");
    load_bad("{\"title\": \"ab\", " BASE "}", "input: missing");
    // over the size limit: said as such, even when it is all white space
    size_t big = LESSON_MAX_FILE_BYTES + 1;
    char *spaces = malloc(big);
    assert_non_null(spaces);
    memset(spaces, ' ', big);
    assert_false(lesson_parse(&L, "big.json", spaces, big, err, sizeof err));
    assert_string_equal(err, "big.json: file is larger than 16 MiB, the limit for a lesson");
    free(spaces);
    // a very long file name keeps its tail and the reason
    char name[700];
    memset(name, 'd', sizeof name);
    memcpy(name + sizeof name - 10, "/long.json", 10);
    name[sizeof name - 1] = '\0';
    assert_false(lesson_parse(&L, name, "[]", 2, err, sizeof err));
    assert_non_null(strstr(err, "long.jso: expected a JSON object at the top level"));
    assert_true(strncmp(err, "...", 3) == 0);
    
    assert_false(lesson_load(&L, "tests/no/such/file.json", err, sizeof err));
    assert_non_null(strstr(err, "tests/no/such/file.json: cannot open"));
}

// One printable line of valid UTF-8: no C0, DEL or C1 control characters.
static void assert_printable_line(const char *err)
{
    size_t n = strlen(err);
    assert_true(n < LESSON_ERR_MAX);
    uint32_t cp;
    for (size_t i = 0, k; i < n; i += k) {
        k = utf8_decode((const unsigned char *)err + i, n - i, &cp);
        if (k == 0) fail_msg("invalid UTF-8 at byte %zu of \"%s\"", i, err);
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) fail_msg("control U+%04X in \"%s\"", (unsigned)cp, err);
    }
}

// issue 15, item 7: C1 controls are control characters (rejected in titles and
// tokens, escaped in errors); a cut path stays UTF-8; the "expected ..." part
// survives however much escaping the path and file name need.
static void test_one_line_promise(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    load_bad("{\"title\": \"a\\u0085b\", " BASE "}", "title: control character U+0085");
    load_bad("{\"title\": \"a\xc2\x9b" "b\", " BASE "}", "title: control character U+009B");
    load_bad("{\"title\": {\"en\": \"ok\", \"zh\": \"\xc2\x85\"}, " BASE "}",
             "title.zh: control character U+0085");
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[0,1,2,3],[4,5,6,7]]},"
             " \"tokens\": [\"a\", \"\xc2\x9b[2J\"]}", "tokens[1]: control character U+009B");
    load_bad("{\"title\": \"T\", " BASE ", \"input\": {\"query\": [[0,1,2,3]]},"
             " \"tokens\": [\"a\"], \"steps\": {\"scores\": \"x\\u009by\"}}", "control character U+009B");
    // a key with raw C1 controls: escaped in the message
    load_bad("{\"ti\xc2\x85tle\xc2\x9b\": 1}", "ti\\u0085tle\\u009b: unknown key");
    assert_false(lesson_parse(&L, "mem.json", "{\"ti\xc2\x85\": 1}", 10, err, sizeof err));
    assert_printable_line(err);
    // a path cut mid-way through two-byte characters stays valid UTF-8
    char json[2048] = "{\"";
    for (int i = 0; i < 200; i++) strcat(json, "\xc3\xa9");
    strcat(json, "\": 1}");
    assert_false(lesson_parse(&L, "mem.json", json, strlen(json), err, sizeof err));
    assert_printable_line(err);
    assert_non_null(strstr(err, "...: unknown key; expected one of: title, description, vocab, tokenizer, model, input, "
                                "mask, weights, checkpoints, tokens, steps, notes"));
    // escaping a long path of control characters (×4 or ×6 each) keeps the message whole
    strcpy(json, "{\"");
    for (int i = 0; i < 150; i++) strcat(json, i % 2 ? "\\u0001" : "\\u0085");
    strcat(json, "\": 1}");
    assert_false(lesson_parse(&L, "mem.json", json, strlen(json), err, sizeof err));
    assert_printable_line(err);
    assert_non_null(strstr(err, "unknown key; expected one of: title, description, vocab, tokenizer, model, input, "
                                "mask, weights, checkpoints, tokens, steps, notes"));
    // a file name with a newline, C1 controls and bytes that are not UTF-8, long
    char name[400];
    memset(name, 'x', sizeof name);
    strcpy(name + 300, "\n\xc2\x85\xff\x01/a.json");
    assert_false(lesson_parse(&L, name, json, strlen(json), err, sizeof err));
    assert_printable_line(err);
    assert_non_null(strstr(err, "\\n\\u0085\\xff\\x01/a.json: "));
    assert_non_null(strstr(err, "unknown key; expected one of: title, description, vocab, tokenizer, model, input, "
                                "mask, weights, checkpoints, tokens, steps, notes"));
    // a small buffer still gets one valid line
    char small[40];
    assert_false(lesson_parse(&L, name, json, strlen(json), small, sizeof small));
    assert_printable_line(small);
    assert_true(strlen(small) < sizeof small);
}

// issue 15, item 5: every number that rounds to a finite float32 is accepted
// (-3.40282347e+38 is torch.finfo(torch.float32).min, the mask fill Hugging
// Face code uses); what rounds to infinity is not. Item 8: JSON's number grammar.
static void test_float32_range_and_number_grammar(void **state)
{
    (void)state;
    char json[512];
#define FMT "{\"title\": \"T\", \"model\": {\"d_model\": 4, \"n_heads\": 2, \"mask_fill\": %s}," \
            " \"weights\": {\"init\": {\"seed\": 1}}, \"mask\": \"causal\"," \
            " \"input\": {\"query\": [[%s, 0, 0, 0]]}}"
    static const struct { const char *fill, *x; float want_fill, want_x; } ok[] = {
        {"-3.40282347e+38", "3.40282347e+38", -FLT_MAX, FLT_MAX},
        {"-3.4028235e38", "3.4028235e+38", -FLT_MAX, FLT_MAX},       // 8 digits: above FLT_MAX, rounds to it
        {"-3.40282356e38", "3.402823567e38", -FLT_MAX, FLT_MAX},     // just below FLT_MAX + half an ulp
        {"-1e9", "-0", -1e9f, -0.0f},
        {"-1e-50", "1E+2", -0.0f, 100.0f},                           // underflow to 0 is finite
        // issue 27 item 9: within 2^74 below FLT_MAX + 2^103 a decimal reads as that
        // halfway double, yet rounds to FLT_MAX as a decimal (strtof): accepted
        {"-340282356779733652192806429718852141056", "3.4028235677973365e38", -FLT_MAX, FLT_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(json, sizeof json, FMT, ok[i].fill, ok[i].x);
        load_ok(json);
        assert_true(L.cfg.mask_fill == ok[i].want_fill);
        assert_true(L.in.query.data[0] == ok[i].want_x);
        lesson_free(&L);
    }
    static const char *const inf[] = {"3.4028236e38", "-3.40282357e+38", "1e39", "-1e309",
                                      "340282356779733661637539395458142568448"}; // (the halfway point itself)
    for (size_t i = 0; i < sizeof inf / sizeof inf[0]; i++) {
        snprintf(json, sizeof json, FMT, "-1e9", inf[i]);
        load_bad(json, "input.query[0][0]: number out of float32 range (it rounds to infinity)");
        snprintf(json, sizeof json, FMT, inf[i], "0");
        load_bad(json, "model.mask_fill: number out of float32 range");
    }
    // both kinds in one file cannot be told apart once cJSON has read them: refused
    snprintf(json, sizeof json, FMT, "-3.4028235677973365e38", "340282356779733661637539395458142568448");
    load_bad(json, "number out of float32 range");
    static const char *const bad[] = {"01", "-01", "00", "1.", "-.5", "1.e5", "1e", "1e+", "--1", "1.5.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(json, sizeof json, FMT, "-1e9", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "invalid number \"%s\"; expected a JSON number", bad[i]);
        load_bad(json, want);
    }
#undef FMT
}

// utf8_floor and utf8_whole: cuts never split a character ("a×€😀": 1, 2, 3, 4 bytes).
static void test_utf8_cuts(void **state)
{
    (void)state;
    const char *s = "a\xC3\x97\xE2\x82\xAC\xF0\x9F\x98\x80"; // a × € 😀
    const size_t starts[] = {0, 1, 3, 6, 10};
    for (size_t i = 0; i <= 10; i++) {
        size_t want = 0;
        for (size_t k = 0; k < 5; k++)
            if (starts[k] <= i) want = starts[k];
        assert_int_equal(utf8_floor(s, i), want);
    }
    // a prefix of n bytes keeps only whole characters
    for (size_t n = 0; n <= 10; n++) {
        size_t want = 0;
        for (size_t k = 0; k < 5; k++)
            if (starts[k] <= n) want = starts[k];
        assert_int_equal(utf8_whole(s, n), want);
    }
    assert_int_equal(utf8_whole("ab", 2), 2);
    assert_int_equal(utf8_whole("\x80\x80", 2), 2); // stray continuation bytes: nothing to complete
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),        cmocka_unit_test(test_tensor_forms_agree),
        cmocka_unit_test(test_model_options),   cmocka_unit_test(test_init_generator),
        cmocka_unit_test(test_inputs_key_value), cmocka_unit_test(test_mask_forms),
        cmocka_unit_test(test_tokens_and_steps), cmocka_unit_test(test_errors_are_one_line),
        cmocka_unit_test(test_one_line_promise), cmocka_unit_test(test_utf8_cuts),
        cmocka_unit_test(test_float32_range_and_number_grammar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
