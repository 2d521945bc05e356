// The conventions as switches (issue 41): each --compare set:model.KEY=VALUE changes exactly the
// stages it should, stage by stage, and no other. (Each convention's numbers against PyTorch are
// test_attention's tests/ref/conv-*.lesson.json, made by tests/gen_reference.py.)
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare.h"

typedef struct Case {
    const char *lesson, *spec;
    const char *differ;  // the stages that differ, in trace order, space separated ("" none)
    const char *rounding; // of those, the ones that differ only by float rounding (|Δ| ≤ 1e-6)
} Case;

// Each a reference lesson with the convention's default, B the other value.
static const Case CASES[] = {
    // W + 1 keys: the mask gains key i − W, then everything that reads it
    {"tests/ref/sliding-window-gqa.lesson.json", "set:model.window_convention=flash",
     "mask masked_scores attn head_out concat output", ""},
    // a fully masked row with −∞: NaN → 0 in attn, and on through W_O (the other rows identical)
    {"tests/ref/masked-row-neginf.lesson.json", "set:model.masked_rows=zero", "attn head_out concat output", ""},
    // with −1e9 the row was uniform: zeros instead
    {"tests/ref/masked-row-1e9.lesson.json", "set:model.masked_rows=zero", "attn head_out concat output", ""},
    // in FlashAttention's tiles: its running max, P, sum and acc as before, flash_out's row 0
    {"tests/ref/flash-masked-row-alibi.lesson.json", "set:model.masked_rows=zero",
     "attn head_out flash_out concat output", ""},
    // finfo.min instead of −1e9: another masked score, the same softmax (a fully masked row uniform
    // in both)
    {"tests/ref/masked-row-1e9.lesson.json", "set:model.mask_fill=finfo_min", "masked_scores", ""},
    // … but −inf makes the fully masked row NaN
    {"tests/ref/masked-row-1e9.lesson.json", "set:model.mask_fill=-inf", "masked_scores attn head_out concat output",
     ""},
    // ALiBi's m·j: other biases and scores, the same softmax up to rounding (each row moved by m·i)
    {"tests/ref/alibi-causal.lesson.json", "set:model.alibi_form=key",
     "position_bias scores masked_scores attn head_out concat output", "attn head_out concat output"},
    // FlashAttention-1's accumulator: each tile's P against its own max, the output normalised every
    // block; the sums and the output the same up to rounding, the standard pass untouched
    {"tests/ref/flash-causal.lesson.json", "set:model.flash_accumulator=fa1", "flash_p flash_sum flash_acc flash_out",
     "flash_sum flash_out"},
    {"tests/ref/flash-masked-row-alibi.lesson.json", "set:model.flash_accumulator=fa1", "flash_p flash_acc flash_out",
     "flash_out"},
    // StreamingLLM's positions within the cache: only the decoding; its cache holds the keys before RoPE
    {"lessons/streaming-sinks.json", "set:model.streaming_positions=cache",
     "cache_k decode_scores decode_attn decode_output", ""},
    // without a window nothing is evicted: the places in the cache are the text's positions
    // (bit for bit: the same angles), only the cache's rows are the keys before RoPE
    {"tests/ref/decode-gqa-rope.lesson.json", "set:model.streaming_positions=cache", "cache_k", ""},
    // without ALiBi the form changes nothing
    {"tests/ref/arange-2x4x4.lesson.json", "set:model.alibi_form=key", "", ""},
    // a sliding layer of a local/global pattern (layer 0): its window_mask, and what follows
    {"tests/ref/stack-3-local-global.lesson.json", "set:model.window_convention=flash",
     "l0.window_mask l0.masked_scores l0.attn l0.head_out l0.concat l0.output l0.residual_sum l0.ffn_norm l0.ffn_gate "
     "l0.ffn_hidden l0.ffn_sum l1.attn_norm l1.q_proj l1.k_proj l1.v_proj l1.q_heads l1.k_heads l1.v_heads l1.q_norm "
     "l1.k_norm l1.q_rope l1.k_rope l1.scores l1.capped_scores l1.masked_scores l1.attn l1.head_out l1.concat "
     "l1.output l1.residual_sum l1.ffn_norm l1.ffn_gate l1.ffn_hidden l1.ffn_sum l2.attn_norm l2.q_proj l2.k_proj "
     "l2.v_proj l2.q_heads l2.k_heads l2.v_heads l2.q_norm l2.k_norm l2.q_rope l2.k_rope l2.scores l2.capped_scores "
     "l2.window_mask l2.masked_scores l2.attn l2.head_out l2.concat l2.output l2.residual_sum l2.ffn_norm l2.ffn_gate "
     "l2.ffn_hidden l2.ffn_sum", ""},
};

// Whether name is a word of list.
static bool listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

static void run_case(const Case *k)
{
    char err[800];
    Session *a = session_open(k->lesson, NULL, err, sizeof err);
    if (!a) fail_msg("%s", err);
    CompareSpec sp;
    assert_true(compare_parse_spec(k->spec, &sp, err, sizeof err));
    Session *b = compare_open_b(a, NULL, &sp, err, sizeof err);
    if (!b) fail_msg("%s", err);
    Compare c;
    if (!compare_traces(&a->trace, &b->trace, &c, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(c.n_only, 0);
    char got[2048] = "";
    size_t used = 0;
    for (int i = 0; i < c.n; i++) {
        const CompareStage *s = &c.st[i];
        const char *name = a->trace.stages[s->a].name;
        if (s->n_diff == 0) continue;
        used += (size_t)snprintf(got + used, sizeof got - used, "%s%s", used ? " " : "", name);
        if (listed(k->rounding, name) && !(s->max_abs <= 1e-6f))
            fail_msg("%s %s: %s differs by %g, more than rounding", k->lesson, k->spec, name, (double)s->max_abs);
        if (!listed(k->rounding, name) && s->max_abs <= 1e-6f)
            fail_msg("%s %s: %s differs only by %g", k->lesson, k->spec, name, (double)s->max_abs);
    }
    if (strcmp(got, k->differ) != 0)
        fail_msg("%s %s:\n  differ: %s\n  wanted: %s", k->lesson, k->spec, got, k->differ);
    compare_free(&c);
    session_destroy(b), session_destroy(a);
}

static void test_each_switch_changes_its_stages(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) run_case(&CASES[i]);
}

// The W + 1 window's mask: row i gains exactly key i − W (FlashAttention's window_size = (W, 0):
// i − W ≤ j ≤ i); the fully masked rows are zeros in attn, and a row of -inf's head_out is 0
static void test_window_and_rows(void **state)
{
    (void)state;
    char err[800];
    const char *set[] = {"model.window_convention=flash"};
    SessionEdits ed = {set, 1, NULL, false, 0, false};
    Session *a = session_open("tests/ref/sliding-window-gqa.lesson.json", &ed, err, sizeof err);
    if (!a) fail_msg("%s", err);
    const Tensor *m = &a->trace.stages[trace_find(&a->trace, "mask")].t;
    const int L = m->shape[1], W = 3;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) assert_true(m->data[(size_t)i * L + j] == (j <= i && j >= i - W ? 1.0f : 0.0f));
    session_destroy(a);
    const char *zero[] = {"model.masked_rows=zero"};
    ed = (SessionEdits){zero, 1, NULL, false, 0, false};
    a = session_open("tests/ref/masked-row-neginf.lesson.json", &ed, err, sizeof err);
    if (!a) fail_msg("%s", err);
    const Tensor *at = &a->trace.stages[trace_find(&a->trace, "attn")].t, *ho = &a->trace.stages[trace_find(&a->trace, "head_out")].t;
    for (size_t k = 0; k < at->size; k++) assert_false(isnan(at->data[k]));
    for (size_t k = 0; k < ho->size; k++) assert_false(isnan(ho->data[k]));
    session_destroy(a);
}

// pos_shift: until the window evicts a key the steps are the text's (to rounding); after it a
// sink's distance to the query is the cache's length, and the output moves
static void test_streaming_positions(void **state)
{
    (void)state;
    char err[800];
    Session *a = session_open("lessons/streaming-sinks.json", NULL, err, sizeof err);
    if (!a) fail_msg("%s", err);
    CompareSpec sp;
    assert_true(compare_parse_spec("set:model.streaming_positions=cache", &sp, err, sizeof err));
    Session *b = compare_open_b(a, NULL, &sp, err, sizeof err);
    if (!b) fail_msg("%s", err);
    const Trace *ta = &a->trace, *tb = &b->trace;
    const int W = ta->window, S = ta->sink_tokens, L = ta->len_q, C = ta->d_model;
    assert_true(W > 0 && S > 0 && S + W < L);
    const Tensor *oa = &ta->stages[trace_find(ta, "decode_output")].t, *ob = &tb->stages[trace_find(tb, "decode_output")].t;
    for (int t = 0; t < L; t++) {
        float d = 0.0f;
        for (int c = 0; c < C; c++) d = fmaxf(d, fabsf(oa->data[(size_t)t * C + c] - ob->data[(size_t)t * C + c]));
        if (t < S + W) { // nothing evicted yet: every key at its own position
            if (!(d <= 1e-5f)) fail_msg("step %d: %g before any eviction", t, (double)d);
        } else if (!(d > 1e-4f)) {
            fail_msg("step %d: the same output (%g) although keys were evicted", t, (double)d);
        }
    }
    // B's cache holds the keys before RoPE: k_heads
    const Tensor *kb = &tb->stages[trace_find(tb, "cache_k")].t, *kh = &tb->stages[trace_find(tb, "k_heads")].t;
    assert_int_equal(kb->size, kh->size);
    assert_memory_equal(kb->data, kh->data, kb->size * sizeof(float));
    session_destroy(b), session_destroy(a);
}

// Bad values: one line naming the key and what it takes
static void test_bad_values(void **state)
{
    (void)state;
    char err[800];
    Session *a = session_open("tests/ref/alibi-causal.lesson.json", NULL, err, sizeof err);
    if (!a) fail_msg("%s", err);
    CompareSpec sp;
    assert_true(compare_parse_spec("set:model.alibi_form=both", &sp, err, sizeof err));
    assert_null(compare_open_b(a, NULL, &sp, err, sizeof err));
    assert_non_null(strstr(err, "model.alibi_form"));
    assert_non_null(strstr(err, "\"relative\" or \"key\""));
    assert_null(strchr(err, '\n'));
    session_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_switch_changes_its_stages),
        cmocka_unit_test(test_window_and_rows),
        cmocka_unit_test(test_streaming_positions),
        cmocka_unit_test(test_bad_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
