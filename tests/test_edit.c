// test_edit.c — the what-if lab's engine (edit.h, session.h): every editable kind,
// its effect on the forward pass, undo / redo / reset, saved lessons that reproduce
// exactly what was computed, the Δ trace, and bad edits refused with one line and
// nothing changed. SDL-free: the core, the session and the view's edit targets.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"
#include "attention.h"
#include "edit.h"
#include "i18n.h"
#include "layout.h"
#include "scene.h"
#include "trace_ops.h"

#define CLASSIC "lessons/arange-2x4x4.json"
#define CROSS "lessons/cross-attention-padding.json"
#define FFN "lessons/dk-dv-residual-ffn.json"
#define MASKED_ROW "lessons/pitfalls-masked-row.json"

#include "pure_support.h"


// Applies "KEY=VALUE" through the engine (parse, then the session); fails the test on an error.
static void set(Session *s, const char *arg)
{
    Edit e;
    char err[EDIT_ERR_MAX];
    if (!edit_parse(&s->lesson, arg, &e, err, sizeof err)) fail_msg("parse %s: %s", arg, err);
    if (!session_edit(s, &e, false, NULL, err, sizeof err)) fail_msg("apply %s: %s", arg, err);
}

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

// Every stage of a equals b's bit for bit (same names, shapes, values).
static void assert_traces_equal(const Trace *a, const Trace *b, const char *what)
{
    if (a->n != b->n) fail_msg("%s: %d stages vs %d", what, a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const Stage *x = &a->stages[i], *y = &b->stages[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->t.size, y->t.size);
        for (size_t k = 0; k < x->t.size; k++)
            if (!same_bits(x->t.data[k], y->t.data[k]))
                fail_msg("%s: %s[%zu] = %.9g vs %.9g", what, x->name, k, (double)x->t.data[k], (double)y->t.data[k]);
    }
}

static void assert_round_trip(Session *s, const char *what);

static const float *stage(const Session *s, const char *name)
{
    const Stage *st = trace_get(&s->trace, name);
    if (!st) fail_msg("no stage %s", name);
    return st->t.data;
}

// ---- every editable kind ------------------------------------------------------------

static void test_element_edits(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    // the input, in a self-attention lesson: the key and the value are the query
    set(s, "input.query[0,1,2]=5");
    assert_true(s->lesson.in.query.data[1 * 4 + 2] == 5.0f);
    assert_true(s->lesson.in.key.data[1 * 4 + 2] == 5.0f);
    assert_true(s->lesson.in.value.data[1 * 4 + 2] == 5.0f);
    assert_true(stage(s, "input")[6] == 5.0f);
    // a weight in nn.Linear layout (out, in): w_q[3,1] is flat 3·4 + 1
    float before = stage(s, "q_proj")[3];
    set(s, "weights.w_q[3,1]=-0.25");
    assert_true(s->lesson.w[0].w_q.data[13] == -0.25f);
    assert_true(stage(s, "q_proj")[3] != before); // Q[0,0,3] = Σ_k x[0,0,k]·W_Q[3,k] + b: x[0,0,1] = 1
    // a bias: every element, no index
    set(s, "weights.b_o=1");
    for (int j = 0; j < 4; j++) assert_true(s->lesson.w[0].b_o.data[j] == 1.0f);
    assert_int_equal(s->log.applied, 3);
    assert_true(session_edited(s));
    session_destroy(s);

    // cross-attention: the key and the value are separate inputs; the value is the key
    s = open_session(CROSS);
    set(s, "input.key[1,0,3]=2.5");
    size_t k = (size_t)(1 * s->lesson.len_k + 0) * 4 + 3;
    assert_true(s->lesson.in.key.data[k] == 2.5f);
    assert_true(s->lesson.in.value.data[k] == 2.5f);
    assert_true(trace_get(&s->trace, "key_input")->t.data[k] == 2.5f);
    session_destroy(s);

    // LayerNorm γ and β, and the FFN
    s = open_session(FFN);
    set(s, "weights.norm_weight[2]=3");
    set(s, "weights.ffn_norm_bias[0]=-1");
    set(s, "weights.ffn_w1[0,0]=0.5");
    assert_true(s->lesson.w[0].norm_weight.data[2] == 3.0f);
    assert_true(s->lesson.w[0].ffn_norm_bias.data[0] == -1.0f);
    const Stage *rn = trace_get(&s->trace, "residual_norm");
    assert_non_null(rn);
    assert_true(rn->weight == &s->lesson.w[0].norm_weight); // the trace borrows the edited tensor in place
    session_destroy(s);
}

static void test_switches(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    // scale 1: the scores are the plain dot products, and the softmax gets sharper
    float peak_before = 0.0f, peak_after = 0.0f;
    const Stage *attn = trace_get(&s->trace, "attn");
    for (size_t i = 0; i < attn->t.size; i++) peak_before = fmaxf(peak_before, attn->t.data[i]);
    float scaled = stage(s, "scores")[1];
    set(s, "model.scale=1");
    assert_true(s->trace.scale == 1.0f);
    assert_float_equal(stage(s, "scores")[1], scaled * sqrtf(2.0f), fabsf(scaled) * 1e-5f + 1e-6f);
    attn = trace_get(&s->trace, "attn");
    for (size_t i = 0; i < attn->t.size; i++) peak_after = fmaxf(peak_after, attn->t.data[i]);
    assert_true(peak_after >= peak_before);
    set(s, "model.scale=sqrt_dk");
    assert_true(s->trace.scale == sqrtf(2.0f));

    // mask kinds: none → causal → key padding (the last key) → none
    set(s, "mask=causal");
    assert_int_equal(s->trace.mask_kind, MASK_CAUSAL);
    assert_non_null(trace_get(&s->trace, "mask"));
    assert_true(stage(s, "masked_scores")[1] == -1e9f); // query 0 may not see key 1
    set(s, "mask=key_padding");
    assert_int_equal(s->trace.mask_kind, MASK_KEY_PADDING);
    assert_true(stage(s, "masked_scores")[3] == -1e9f);  // key 3 is padding
    assert_true(stage(s, "masked_scores")[2] != -1e9f);
    set(s, "mask.key_padding[1]=1");                      // batch 1 keeps one key
    assert_true(s->lesson.in.mask.data[16 + 1] == 0.0f);
    assert_true(s->lesson.in.mask.data[3] == 0.0f);       // batch 0 keeps its length
    set(s, "mask=none");
    assert_int_equal(s->trace.mask_kind, MASK_NONE);
    assert_null(trace_get(&s->trace, "mask"));

    // a mask cell: a named mask becomes an explicit 0/1 tensor
    set(s, "mask=causal");
    set(s, "mask[0,2,0]=0");
    assert_int_equal(s->lesson.in.mask_kind, MASK_TENSOR);
    assert_true(s->lesson.in.mask.data[2 * 4 + 0] == 0.0f);
    assert_true(s->lesson.in.mask.data[2 * 4 + 1] == 1.0f);  // the rest of the causal mask stays
    assert_true(s->lesson.in.mask.data[1 * 4 + 2] == 0.0f);

    // the fill: −∞ makes a fully masked row NaN, as PyTorch
    set(s, "mask[0,0,0]=0");
    set(s, "model.mask_fill=-inf");
    assert_true(isinf(s->trace.mask_fill));
    assert_true(isnan(stage(s, "attn")[0]));
    set(s, "model.mask_fill=-1e9");
    assert_false(isnan(stage(s, "attn")[0]));
    set(s, "model.norm_eps=1e-3");
    assert_true(s->lesson.cfg.norm_eps == 1e-3f);
    session_destroy(s);
}

// Choosing the kind a mask already has changes nothing (key padding keeps its lengths);
// a saved lesson keeps what labels it had; "value": "query" follows query edits.
static void test_same_kind_tokens_aliases(void **state)
{
    (void)state;
    Session *s = open_session(CROSS), *fresh = open_session(CROSS);
    Edit e;
    char err[EDIT_ERR_MAX];
    assert_true(edit_parse(&s->lesson, "mask=key_padding", &e, err, sizeof err));
    assert_true(edit_is_noop(&s->lesson, &e));
    assert_true(session_edit(s, &e, false, NULL, err, sizeof err));
    assert_false(session_edited(s));
    assert_traces_equal(&s->trace, &fresh->trace, "mask=key_padding on key padding");
    session_destroy(fresh);
    session_destroy(s);
    s = open_session("lessons/causal-decoder.json");
    assert_true(edit_parse(&s->lesson, "mask=causal", &e, err, sizeof err));
    assert_true(edit_is_noop(&s->lesson, &e));
    session_destroy(s);

    // tokens for the queries only, a separate key, the value is the query
    static const char *lesson =
        "{\"title\": \"t\", \"model\": {\"d_model\": 2, \"n_heads\": 1},"
        " \"input\": {\"query\": [[1, 2], [3, 4]], \"key\": [[5, 6], [7, 8]], \"value\": \"query\"},"
        " \"weights\": {\"init\": {\"seed\": 1}}, \"tokens\": {\"query\": [\"a\", \"b\"]}}";
    char path[] = "/tmp/attnviz-test-tokens-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, lesson, strlen(lesson)) == (ssize_t)strlen(lesson));
    close(fd);
    s = open_session(path);
    assert_null(s->lesson.k_tokens);
    set(s, "input.query[0,0,1]=9");
    assert_true(s->lesson.in.value.data[1] == 9.0f); // the value is the query
    assert_true(s->lesson.in.key.data[1] == 6.0f);   // the key is not
    assert_false(edit_parse(&s->lesson, "input.value[0,0,0]=1", &e, err, sizeof err));
    assert_non_null(strstr(err, "edit input.query"));
    assert_round_trip(s, "query tokens only");
    char err2[LESSON_ERR_MAX + 200];
    assert_true(session_save(s, path, true, err2, sizeof err2));
    Session *back = open_session(path);
    assert_null(back->lesson.k_tokens);              // the keys had no labels: still none
    assert_true(back->lesson.in.value_is_query);
    session_destroy(back);
    session_destroy(s);
    unlink(path);

    // the text of a mask edit in a lesson without a mask names (b, i, j)
    s = open_session(CLASSIC);
    edit_element(&s->lesson, LT_MASK, (size_t)(1 * 4 + 2) * 4 + 3, 0.0f, &e);
    assert_string_equal(e.text, "mask[1,2,3]=0");
    session_destroy(s);
}

// ---- undo, redo, reset ----------------------------------------------------------------

static void test_undo_redo(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC), *fresh = open_session(CLASSIC);
    char err[EDIT_ERR_MAX];
    assert_false(session_undo(s, NULL, err, sizeof err)); // nothing yet
    assert_string_equal(err, "");
    set(s, "model.scale=1");
    set(s, "input.query[1,3,0]=-7");
    set(s, "mask=causal");
    Session *three = open_session(CLASSIC);
    set(three, "model.scale=1"), set(three, "input.query[1,3,0]=-7"), set(three, "mask=causal");

    Trace prev;
    assert_true(session_undo(s, &prev, err, sizeof err));
    assert_int_equal(s->log.applied, 2);
    assert_non_null(trace_get(&prev, "mask")); // the trace before the undo, for the animation
    trace_free(&prev);
    assert_null(trace_get(&s->trace, "mask"));
    assert_true(session_undo(s, NULL, err, sizeof err));
    assert_true(session_undo(s, NULL, err, sizeof err));
    assert_false(session_edited(s));
    assert_traces_equal(&s->trace, &fresh->trace, "undone to the start");
    assert_true(session_redo(s, NULL, err, sizeof err));
    assert_true(session_redo(s, NULL, err, sizeof err));
    assert_true(session_redo(s, NULL, err, sizeof err));
    assert_false(session_redo(s, NULL, err, sizeof err));
    assert_traces_equal(&s->trace, &three->trace, "redone");

    // reset: back to the original in one step; redo brings the edits back
    assert_true(session_reset(s, NULL, err, sizeof err));
    assert_traces_equal(&s->trace, &fresh->trace, "reset");
    assert_true(session_redo(s, NULL, err, sizeof err));
    assert_int_equal(s->log.applied, 1);
    // a new edit drops what could be redone
    set(s, "weights.b_q[0]=2");
    assert_false(session_redo(s, NULL, err, sizeof err));
    assert_int_equal(s->log.n, 2);

    // a drag: merged edits of one value are one undo step
    Edit e;
    for (int k = 1; k <= 5; k++) {
        char arg[64];
        snprintf(arg, sizeof arg, "weights.w_v[0,0]=%d", k);
        assert_true(edit_parse(&s->lesson, arg, &e, err, sizeof err));
        assert_true(session_edit(s, &e, k > 1, NULL, err, sizeof err));
    }
    assert_int_equal(s->log.n, 3);
    assert_true(s->lesson.w[0].w_v.data[0] == 5.0f);
    assert_true(session_undo(s, NULL, err, sizeof err));
    assert_true(s->lesson.w[0].w_v.data[0] == fresh->lesson.w[0].w_v.data[0]);
    session_destroy(three);
    session_destroy(fresh);
    session_destroy(s);
}

// ---- saved lessons reproduce what was computed ---------------------------------------------

// Saves s, loads the file back and computes it: every stage equals s's trace.
static void assert_round_trip(Session *s, const char *what)
{
    char path[] = "/tmp/attnviz-test-edit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[LESSON_ERR_MAX + 200];
    if (!session_save(s, path, true, err, sizeof err)) fail_msg("%s: save: %s", what, err);
    Session *back = session_create(path, err, sizeof err);
    if (!back) fail_msg("%s: the saved lesson does not load: %s", what, err);
    assert_traces_equal(&back->trace, &s->trace, what);
    // the title says it was edited (once), and the original's narration is not carried over
    char t1[LESSON_MAX_TEXT + 64], t2[LESSON_MAX_TEXT + 64];
    assert_string_equal(session_title(back, LANG_EN, t1, sizeof t1), session_title(s, LANG_EN, t2, sizeof t2));
    // (nor the teacher's notes, written about the original numbers too); unedited, both
    // come back text for text
    if (session_edited(s)) {
        assert_int_equal(back->lesson.n_steps, 0);
        assert_int_equal(back->lesson.n_notes, 0);
    } else {
        assert_int_equal(back->lesson.n_steps, s->lesson.n_steps);
        assert_int_equal(back->lesson.n_notes, s->lesson.n_notes);
        for (int k = 0; k < s->lesson.n_notes; k++)
            for (int l = 0; l < LANG_COUNT; l++)
                assert_string_equal(lesson_note_text(&back->lesson, s->lesson.note_keys[k], (Lang)l),
                                    lesson_note_text(&s->lesson, s->lesson.note_keys[k], (Lang)l));
    }
    session_destroy(back);
    unlink(path);
}

static void test_save_round_trip(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 8);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        Session *s = open_session(g.gl_pathv[i]);
        assert_round_trip(s, g.gl_pathv[i]); // unedited: seeds and aranges written out
        // an edit of every kind the lesson has
        if (!s->lesson.classes) // (a language model: token ids in; a vision transformer: its image)
            set(s, s->lesson.vocab ? "weights.embed[0,0]=0.125" : "input.query[0,0,0]=0.125");
        set(s, "weights.w_o[0,0]=-3");
        set(s, "model.scale=0.7");
        set(s, "model.mask_fill=-inf");
        if (!s->lesson.cfg.decode && !s->lesson.cfg.n_layer_types && !s->lesson.cfg.decoder_layers && !s->lesson.classes)
            set(s, "mask[0,0,0]=0"); // decoding, a local/global pattern, an encoder–decoder and a ViT keep theirs (refused)
        if (s->lesson.cfg.qkv_bias) set(s, "weights.b_k[1]=1e-3");
        if (!s->lesson.in.key_is_query) set(s, "input.key[0,0,1]=9");
        assert_round_trip(s, g.gl_pathv[i]);
        session_destroy(s);
    }
    globfree(&g);
    Session *s = open_session("tests/scene/heads-12.json");
    set(s, "mask=causal");
    assert_round_trip(s, "heads-12 causal");
    set(s, "mask=key_padding");
    set(s, "mask.key_padding[0]=2");
    assert_round_trip(s, "heads-12 key padding");
    session_destroy(s);
}

// The switches of today's decoders are written back: n_kv_heads, rope (theta and style),
// alibi and the sliding window, read again to the same config and the same stages.
static void test_save_round_trip_variants(void **state)
{
    (void)state;
    const char *paths[] = {"tests/ref/gqa-rope-causal.lesson.json", "tests/ref/mqa-rope-interleaved.lesson.json",
                           "tests/ref/sliding-window-gqa.lesson.json", "tests/ref/alibi-6-heads-gqa.lesson.json",
                           "tests/ref/gqa-cross-padding.lesson.json", "tests/ref/sliding-window-1.lesson.json",
                           "tests/ref/flash-window-neginf.lesson.json", "tests/ref/decode-gqa-rope.lesson.json",
                           "tests/ref/decode-mqa-flash.lesson.json", "tests/ref/decode-alibi-window.lesson.json"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        Session *s = open_session(paths[i]);
        for (int edited = 0; edited < 2; edited++) {
            if (edited) {
                set(s, "weights.w_k[1,0]=0.5");
                set(s, "weights.w_v[0,1]=-0.25");
            }
            assert_round_trip(s, paths[i]);
            char path[] = "/tmp/attnviz-test-edit-XXXXXX";
            int fd = mkstemp(path);
            assert_true(fd >= 0);
            close(fd);
            char err[LESSON_ERR_MAX + 200];
            assert_true(session_save(s, path, true, err, sizeof err));
            Lesson back;
            if (!lesson_load(&back, path, err, sizeof err)) fail_msg("%s", err);
            const AttnConfig *a = &s->lesson.cfg, *b = &back.cfg;
            assert_int_equal(b->n_kv_heads, a->n_kv_heads);
            assert_int_equal(b->rope, a->rope);
            assert_true(b->rope_theta == a->rope_theta);
            assert_int_equal(b->alibi, a->alibi);
            assert_int_equal(back.in.mask_kind, s->lesson.in.mask_kind);
            assert_int_equal(back.in.window, s->lesson.in.window);
            assert_int_equal(back.cfg.decode, a->decode);
            assert_int_equal(back.cfg.flash_block_q, a->flash_block_q);
            assert_int_equal(back.cfg.flash_block_k, a->flash_block_k);
            lesson_free(&back);
            unlink(path);
        }
        // at least one lesson of each switch
        session_destroy(s);
    }
    Session *s = open_session("tests/ref/sliding-window-gqa.lesson.json");
    assert_int_equal(s->lesson.in.mask_kind, MASK_SLIDING);
    assert_int_equal(s->lesson.in.window, 3);
    assert_int_equal(s->lesson.cfg.n_kv_heads, 2);
    assert_int_equal(s->lesson.cfg.rope, ROPE_HALF);
    set(s, "mask=causal");   // a named kind replaces the window
    assert_int_equal(s->lesson.in.mask_kind, MASK_CAUSAL);
    assert_round_trip(s, "sliding window -> causal");
    session_destroy(s);
    s = open_session("tests/ref/mqa-rope-interleaved.lesson.json");
    assert_int_equal(s->lesson.cfg.rope, ROPE_INTERLEAVED);
    assert_true(s->lesson.cfg.rope_theta == 500.0f);
    session_destroy(s);
    // decoding keeps its causal (or sliding-window) mask: edits that would change it are refused
    s = open_session("tests/ref/decode-alibi-window.lesson.json");
    assert_true(s->lesson.cfg.decode);
    const char *refused[] = {"mask=none", "mask=key_padding", "mask[0,1,1]=0", "mask.key_padding[0]=2"};
    for (int i = 0; i < 4; i++) {
        char err[EDIT_ERR_MAX];
        Edit e;
        bool ok = edit_parse(&s->lesson, refused[i], &e, err, sizeof err) && session_edit(s, &e, false, NULL, err, sizeof err);
        assert_false(ok);
        assert_non_null(strstr(err, "model.decode"));
    }
    set(s, "mask=causal"); // the sliding window becomes the causal mask: still decodable
    assert_round_trip(s, "decode, causal");
    session_destroy(s);
    // a local/global pattern's sliding layers narrow the causal mask: it stays causal too (the
    // saved lesson would not load otherwise)
    s = open_session("lessons/local-global-layers.json");
    for (int i = 0; i < 4; i++) {
        char err[EDIT_ERR_MAX];
        Edit e;
        bool ok = edit_parse(&s->lesson, refused[i], &e, err, sizeof err) && session_edit(s, &e, false, NULL, err, sizeof err);
        assert_false(ok);
        assert_non_null(strstr(err, "model.layer_types"));
    }
    set(s, "mask=causal");
    set(s, "input.query[0,0,0]=0.5");
    assert_round_trip(s, "local/global, edited");
    session_destroy(s);
    s = open_session("tests/ref/alibi-causal.lesson.json");
    assert_true(s->lesson.cfg.alibi);
    set(s, "weights.b_k[0]=2");
    assert_round_trip(s, "alibi edited");
    session_destroy(s);
}

// Issue 27 item 7: key padding masks keys in addition to the mask there (causal,
// sliding window, a 0/1 tensor), in its batch only; it never replaces the mask.
// Issue 27 item 9: a --set decimal is rounded to float32 once (strtof): just under
// FLT_MAX + 2^103 (the halfway point to infinity) it is FLT_MAX, not "infinity".
// DeepSeek sparse attention's top-k: off gives full attention (the compare), a top-k above L, one
// without an indexer and the mask taken away are refused with one line; an edited top-k saves and
// loads back
static void test_index_topk_edits(void **state)
{
    (void)state;
    Session *s = open_session("tests/ref/mla-dsa-prenorm.lesson.json");
    const float full = stage(s, "topk_mask")[0];
    assert_true(full == 1.0f); // (query 0 keeps its only key)
    set(s, "model.index_topk=5");
    assert_int_equal(s->lesson.cfg.index_topk, 5);
    assert_round_trip(s, "index_topk 5");
    set(s, "model.index_topk=off");
    assert_null(trace_get(&s->trace, "topk_mask"));
    assert_null(trace_get(&s->trace, "index_scores"));
    assert_round_trip(s, "index_topk off");
    static const char *const refused[][2] = {{"model.index_topk=8", "more keys than the input has"},
                                             {"mask=none", "model.index_topk"}};
    set(s, "model.index_topk=2");
    for (int i = 0; i < 2; i++) {
        char err[EDIT_ERR_MAX];
        Edit e;
        bool ok = edit_parse(&s->lesson, refused[i][0], &e, err, sizeof err) &&
                  session_edit(s, &e, false, NULL, err, sizeof err);
        assert_false(ok);
        if (!strstr(err, refused[i][1])) fail_msg("%s: %s", refused[i][0], err);
    }
    session_destroy(s);
    s = open_session(CLASSIC);
    char err[EDIT_ERR_MAX];
    Edit e;
    assert_false(edit_parse(&s->lesson, "model.index_topk=2", &e, err, sizeof err));
    assert_non_null(strstr(err, "no lightning indexer"));
    session_destroy(s);
}

static void test_set_near_flt_max(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    Edit e;
    char err[EDIT_ERR_MAX];
    // FLT_MAX + 2^103 - 2^73: strtod gives the double FLT_MAX + 2^103 (the tie), which rounds to infinity
    assert_true(edit_parse(&s->lesson, "input.query[0,0,0]=340282356779733652192806429718852141056", &e, err, sizeof err));
    assert_true(e.value == FLT_MAX);
    assert_true(edit_parse(&s->lesson, "input.query[0,0,0]=-3.4028235677973365e38", &e, err, sizeof err));
    assert_true(e.value == -FLT_MAX);
    assert_false(edit_parse(&s->lesson, "input.query[0,0,0]=340282356779733661637539395458142568448", &e, err, sizeof err));
    session_destroy(s);
}

static void test_key_padding_combines(void **state)
{
    (void)state;
    const char *lessons[] = {"lessons/causal-decoder.json", "lessons/mistral-sliding-window.json"};
    for (int k = 0; k < 2; k++) {
        Session *s = open_session(lessons[k]);
        if (s->lesson.cfg.decode) {
            session_destroy(s);
            continue;
        }
        int B = s->lesson.batch, Lq = s->lesson.len_q, Lk = s->lesson.len_k;
        assert_true(Lk >= 3);
        size_t size = s->lesson.in.mask.size;
        float *before = malloc(size * sizeof *before);
        assert_non_null(before);
        memcpy(before, s->lesson.in.mask.data, size * sizeof *before);
        char arg[64];
        snprintf(arg, sizeof arg, "mask.key_padding[0]=%d", Lk - 1);
        set(s, arg);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < Lq; i++)
                for (int j = 0; j < Lk; j++) {
                    size_t at = ((size_t)b * Lq + i) * Lk + j;
                    float want = b == 0 && j >= Lk - 1 ? 0.0f : before[at]; // never attends to the future
                    if (s->lesson.in.mask.data[at] != want)
                        fail_msg("%s: mask[%d,%d,%d] = %g, expected %g", lessons[k], b, i, j,
                                 (double)s->lesson.in.mask.data[at], (double)want);
                }
        free(before);
        session_destroy(s);
    }
    // a 0/1 tensor: the other batches keep their cells
    Session *s = open_session(CLASSIC);
    set(s, "mask=causal");
    set(s, "mask[1,3,0]=0");
    set(s, "mask.key_padding[0]=2");
    assert_true(s->lesson.in.mask.data[16 + 3 * 4 + 0] == 0.0f); // batch 1's own cell kept
    assert_true(s->lesson.in.mask.data[16 + 3 * 4 + 1] == 1.0f);
    assert_true(s->lesson.in.mask.data[3 * 4 + 2] == 0.0f);      // batch 0: key 2 padded
    assert_true(s->lesson.in.mask.data[0 * 4 + 1] == 0.0f);      // and still causal
    assert_true(s->lesson.in.mask.data[1 * 4 + 1] == 1.0f);
    session_destroy(s);
}

static void test_save_errors(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    char err[LESSON_ERR_MAX + 200];
    assert_false(session_save(s, "/nonexistent-dir/x.json", true, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/x.json: cannot write"));
    assert_null(strchr(err, '\n'));
    // issue 27: a symbolic link is written through to its file, never replaced by a
    // file; the file keeps its mode; a dangling link, a FIFO and a device are refused
    char dir[] = "/tmp/attnviz-test-save-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[256], victim[256], other[256];
    snprintf(target, sizeof target, "%s/out.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("keep", f);
    fclose(f);
    assert_int_equal(chmod(victim, 0600), 0);
    assert_int_equal(symlink(victim, target), 0);
    assert_true(session_save(s, target, true, err, sizeof err));
    struct stat st;
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISLNK(st.st_mode));        // still the link
    assert_int_equal(stat(victim, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600); // the mode kept
    Session *back = session_create(target, err, sizeof err);
    assert_non_null(back);
    session_destroy(back);
    back = session_create(victim, err, sizeof err);  // the lesson is in the linked file
    assert_non_null(back);
    session_destroy(back);
    snprintf(other, sizeof other, "%s/dangling.json", dir);
    assert_int_equal(symlink("nowhere", other), 0);
    assert_false(session_save(s, other, true, err, sizeof err));
    assert_non_null(strstr(err, "symbolic link"));
    assert_int_equal(lstat(other, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    snprintf(other, sizeof other, "%s/fifo.json", dir);
    assert_int_equal(mkfifo(other, 0600), 0);
    assert_false(session_save(s, other, true, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(lstat(other, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    // overwriting a plain file keeps its mode too
    assert_int_equal(chmod(victim, 0640), 0);
    assert_true(session_save(s, victim, true, err, sizeof err));
    assert_int_equal(stat(victim, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    f = fopen(victim, "w");
    fputs("keep", f);
    fclose(f);
    char buf[8] = "";
    // a new file never replaces one (Ctrl+S): EEXIST, the file as it was
    assert_false(session_save(s, victim, false, err, sizeof err));
    assert_int_equal(errno, EEXIST);
    f = fopen(victim, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "keep");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    session_destroy(s);
}

// ---- bad edits: one line, nothing changed ------------------------------------------------

static void test_bad_edits(void **state)
{
    (void)state;
    static const struct { const char *lesson, *arg, *says; } BAD[] = {
        {CLASSIC, "foo=1", "unknown key"},
        {CLASSIC, "input.query", "expected KEY=VALUE"},
        {CLASSIC, "input.query[0,4,0]=1", "index 4 out of range for dimension 1"},
        {CLASSIC, "input.query[0,1]=1", "expected 3 indices"},
        {CLASSIC, "input.query[0,1,x]=1", "malformed index"},
        {CLASSIC, "input.query[0,1,2,]=1", "malformed index"},
        {CLASSIC, "input.query[]=1", "malformed index"},
        {CLASSIC, "input.query[0,999999999,0]=1", "index out of range"},
        {CLASSIC, "input.query[0,1,2]=abc", "expected a finite float32 number"},
        {CLASSIC, "input.query[0,1,2]=nan", "expected a finite float32 number"},
        {CLASSIC, "input.query[0,1,2]=1e39", "expected a finite float32 number"},
        {CLASSIC, "input.query[0,1,2]=", "expected a finite float32 number"},
        {CLASSIC, "input.key[0,0,0]=1", "self-attention"},
        {CLASSIC, "input.value[0,0,0]=1", "edit input.query"},
        {CROSS, "input.value[0,0,0]=1", "edit input.key"},
        {FFN, "weights.b_q[0]=1", "model.qkv_bias is false"},
        {CLASSIC, "weights.ffn_w1[0,0]=1", "model.ffn_hidden is 0"},
        {CLASSIC, "weights.norm_weight[0]=1", "model.residual_norm is false"},
        {CLASSIC, "weights.w_z[0,0]=1", "unknown key"},
        {CLASSIC, "w_q[0,0]=1", "unknown key"},
        {CLASSIC, "mask[0,0,0]=0.5", "0 (masked) or 1 (attend)"},
        {CLASSIC, "mask=sideways", "expected none, causal, key_padding"},
        {CROSS, "mask=causal", "as many queries as keys"},
        {CLASSIC, "mask.key_padding[2]=1", "batch 2 out of range"},
        {CLASSIC, "mask.key_padding[0]=5", "key length from 0 to 4"},
        {CLASSIC, "mask.key_padding[0]=1.5", "key length from 0 to 4"},
        {CLASSIC, "model.scale=0", "positive"},
        {CLASSIC, "model.scale=-inf", "positive"},
        {CLASSIC, "model.mask_fill=inf", "float32 number, -inf or finfo_min"},
        {CLASSIC, "model.norm_eps=0", "positive"},
        {CLASSIC, "model.d_model=8", "sizes cannot change"},
        {CLASSIC, "model.scale[0]=1", "takes no index"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        Session *s = open_session(BAD[i].lesson), *fresh = open_session(BAD[i].lesson);
        Edit e;
        char err[EDIT_ERR_MAX];
        if (edit_parse(&s->lesson, BAD[i].arg, &e, err, sizeof err)) fail_msg("accepted: %s", BAD[i].arg);
        if (!strstr(err, BAD[i].says)) fail_msg("%s: \"%s\" does not say \"%s\"", BAD[i].arg, err, BAD[i].says);
        assert_true(strncmp(err, BAD[i].arg, strlen(BAD[i].arg) < 100 ? strlen(BAD[i].arg) : 100) == 0);
        assert_null(strchr(err, '\n'));
        session_destroy(fresh);
        session_destroy(s);
    }
    // --set through session_open: the argument and what is wrong, nothing opened
    const char *sets[] = {"model.scale=1", "input.query[9,0,0]=1"};
    SessionEdits ed = {sets, 2, NULL, false, 0, false};
    char err[LESSON_ERR_MAX + 200];
    assert_null(session_open(CLASSIC, &ed, err, sizeof err));
    assert_non_null(strstr(err, "attnviz: --set input.query[9,0,0]=1: index 9 out of range"));
    // edits refused by the session leave it as it was: an element past the end, a causal
    // mask where Lq ≠ Lk (hand-made: the parser refuses both before)
    Session *s = open_session(CLASSIC), *fresh = open_session(CLASSIC);
    set(s, "model.scale=1");
    set(fresh, "model.scale=1");
    Edit e;
    edit_element(&s->lesson, LT_WEIGHT0 + 1, 0, 1.0f, &e); // b_q[0]
    e.index = 1000;
    assert_false(session_edit(s, &e, false, NULL, err, sizeof err));
    assert_int_equal(s->log.applied, 1);
    assert_traces_equal(&s->trace, &fresh->trace, "b_q[1000]");
    session_destroy(fresh);
    session_destroy(s);
    s = open_session(CROSS), fresh = open_session(CROSS);
    memset(&e, 0, sizeof e);
    e.kind = EDIT_MASK_KIND, e.mask_kind = MASK_CAUSAL;
    snprintf(e.text, sizeof e.text, "mask=causal");
    assert_false(session_edit(s, &e, false, NULL, err, sizeof err));
    assert_non_null(strstr(err, "as many queries as keys"));
    assert_false(session_edited(s));
    assert_traces_equal(&s->trace, &fresh->trace, "causal on cross-attention");
    session_destroy(fresh);
    session_destroy(s);
}

// ---- Δ and the in-between of an edit's animation -------------------------------------------

static void test_delta_and_lerp(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    set(s, "input.query[0,0,1]=3");   // was 1
    set(s, "weights.w_q[0,0]=1");
    set(s, "mask=causal");             // the original has no mask
    Trace d;
    AttnWeights dw[LESSON_MAX_LAYERS];
    assert_true(session_delta(s, &d, dw));
    const Trace *o = session_original_trace(s);
    for (int i = 0; i < d.n; i++) {
        const Stage *ds = &d.stages[i], *cs = &s->trace.stages[i];
        const Stage *os = trace_get(o, cs->name);
        for (size_t k = 0; k < ds->t.size; k++) {
            float was = os ? os->t.data[k] : 1.0f, now = cs->t.data[k];
            float want = (isnan(was) && isnan(now)) || was == now ? 0.0f : now - was;
            // a score masked before or after the edit: masked in the Δ view (−∞), no difference
            if (cs->kind == STAGE_KIND_MASKED &&
                ((s->trace.mask_kind && now == s->trace.mask_fill) || (os && o->mask_kind && was == o->mask_fill)))
                want = -INFINITY;
            if (!same_bits(ds->t.data[k], want)) fail_msg("Δ %s[%zu] = %g, want %g", ds->name, k, (double)ds->t.data[k], (double)want);
        }
        if (cs->weight) assert_true(ds->weight != cs->weight); // the weights' differences, not the weights
    }
    assert_true(trace_get(&d, "input")->t.data[1] == 2.0f);
    assert_true(trace_get(&d, "mask")->t.data[1] == -1.0f); // query 0 no longer sees key 1
    const Stage *q = trace_get(&d, "q_proj");
    assert_true(q->weight->data[0] == 1.0f - s->original.w[0].w_q.data[0]);
    trace_free(&d);
    for (int l = 0; l < LESSON_MAX_LAYERS; l++) attn_weights_free(&dw[l]);

    // the animation: t = 0 is the trace before, t = 1 the trace after
    Trace before, mid;
    char err[EDIT_ERR_MAX];
    Edit e;
    assert_true(edit_parse(&s->lesson, "model.scale=1", &e, err, sizeof err));
    assert_true(session_edit(s, &e, false, &before, err, sizeof err));
    assert_true(trace_clone(&mid, &s->trace));
    trace_lerp(&mid, &before, &s->trace, 0.0f);
    assert_traces_equal(&mid, &before, "lerp 0");
    trace_lerp(&mid, &before, &s->trace, 1.0f);
    assert_traces_equal(&mid, &s->trace, "lerp 1");
    trace_lerp(&mid, &before, &s->trace, 0.5f);
    const float *a = trace_get(&before, "scores")->t.data, *b = trace_get(&s->trace, "scores")->t.data;
    assert_float_equal(trace_get(&mid, "scores")->t.data[5], (a[5] + b[5]) / 2, 1e-4);
    trace_free(&mid);
    trace_free(&before);
    session_destroy(s);
}

// ---- a model of several layers: each layer's weights, edited by name and on screen -------

static void test_layer_edits(void **state)
{
    (void)state;
    Session *s = open_session("tests/ref/stack-2-post.lesson.json");
    assert_int_equal(s->trace.n_layers, 2);
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    Layout L;
    int found[2] = {0, 0};
    for (v.stage = 0; v.stage < s->trace.n; v.stage++) {
        layout_compute(&L, &s->trace, &v, 1280, 720);
        for (int p = 0; p < L.n_panels; p++) {
            const PanelSpec *ps = &L.spec[p];
            for (int r = 0; r < ps->rows; r++)
                for (int c = 0; c < ps->cols; c++) {
                    int t;
                    size_t idx;
                    if (!scene_edit_target(&L, &s->trace, &v, p, r, c, &t, &idx) || t < LT_WEIGHT0) continue;
                    // a weight panel of layer l's stage is layer l's tensor, the value on screen
                    int layer = (t - LT_WEIGHT0) / LESSON_N_WEIGHTS;
                    assert_int_equal(layer, s->trace.stages[ps->stage].layer);
                    const Tensor *tt = lesson_tensor(&s->lesson, t);
                    assert_true(idx < tt->size && tt->data[idx] == panel_value(ps, r, c));
                    found[layer]++;
                }
        }
    }
    assert_true(found[0] > 0 && found[0] == found[1]);
    // layer 1's W_Q by name: layer 0 unchanged, layer 1 from its queries on
    Trace before;
    assert_true(trace_clone(&before, &s->trace));
    set(s, "weights.layers[1].w_q[0,0]=3");
    assert_true(s->lesson.w[1].w_q.data[0] == 3.0f && s->lesson.w[0].w_q.data[0] != 3.0f);
    for (int i = 0; i < s->trace.n; i++) {
        const Stage *a = &before.stages[i], *b = &s->trace.stages[i];
        bool same = memcmp(a->t.data, b->t.data, a->t.size * sizeof(float)) == 0;
        if (b->layer < 1 || b->id == STAGE_K_PROJ || b->id == STAGE_V_PROJ || b->id == STAGE_K_HEADS || b->id == STAGE_V_HEADS)
            assert_true(same);
        else if (b->id == STAGE_Q_PROJ)
            assert_false(same);
    }
    trace_free(&before);
    // "weights.layers[0].NAME" is layer 0's "weights.NAME"; a layer past the model's is refused
    Edit e;
    char err[EDIT_ERR_MAX];
    assert_true(edit_parse(&s->lesson, "weights.layers[0].b_o[1]=2", &e, err, sizeof err));
    assert_string_equal(e.text, "weights.b_o[1]=2");
    assert_false(edit_parse(&s->lesson, "weights.layers[2].b_o[1]=2", &e, err, sizeof err));
    assert_non_null(strstr(err, "past model.n_layers"));
    session_destroy(s);
}

// ---- the window's edit targets: a cell on screen is the lesson number it shows ------------

static void test_edit_targets(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    Layout L;
    int found_w = 0, found_mask = 0;
    for (v.stage = 0; v.stage < s->trace.n; v.stage++) {
        for (v.batch = 0; v.batch < 2; v.batch++) {
            layout_compute(&L, &s->trace, &v, 1280, 720);
            for (int p = 0; p < L.n_panels; p++) {
                const PanelSpec *ps = &L.spec[p];
                for (int r = 0; r < ps->rows; r++)
                    for (int c = 0; c < ps->cols; c++) {
                        int t;
                        size_t idx;
                        if (!scene_edit_target(&L, &s->trace, &v, p, r, c, &t, &idx)) continue;
                        Tensor *tt = lesson_tensor(&s->lesson, t);
                        if (t == LT_MASK) { // the masked scores stand for the mask (none yet: all 1)
                            found_mask++;
                            assert_int_equal(idx, ((size_t)v.batch * 4 + (size_t)r) * 4 + (size_t)c);
                            continue;
                        }
                        assert_true(idx < tt->size);
                        assert_true(tt->data[idx] == panel_value(ps, r, c));
                        if (t == LT_WEIGHT0) { // W_Q shown transposed: cell (r, c) is w_q[c, r]
                            assert_int_equal(idx, (size_t)c * 4 + (size_t)r);
                            found_w++;
                        }
                    }
            }
        }
    }
    assert_true(found_w > 0);
    assert_true(found_mask > 0);
    // the window draws an in-between trace while an edit animates: a layout of that
    // trace gives the same targets when asked with it
    Trace mid;
    assert_true(trace_clone(&mid, &s->trace));
    v.stage = trace_find(&mid, "masked_scores"), v.batch = 1;
    layout_compute(&L, &mid, &v, 1280, 720);
    int tm;
    size_t im;
    assert_true(scene_edit_target(&L, &mid, &v, L.result_panel, 2, 3, &tm, &im));
    assert_int_equal(tm, LT_MASK);
    assert_int_equal(im, (size_t)(1 * 4 + 2) * 4 + 3);
    trace_free(&mid);
    // computed tensors are not editable
    v.stage = trace_find(&s->trace, "attn");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    int t;
    size_t idx;
    assert_false(scene_edit_target(&L, &s->trace, &v, L.result_panel, 0, 0, &t, &idx));
    session_destroy(s);

    // after an edit: changed cells are marked (and only those), the narration is generated
    s = open_session(MASKED_ROW);
    set(s, "input.query[0,1,2]=4.5");
    view_init(&v, &s->lesson, LANG_EN);
    v.edited = true;
    v.ref = session_original_trace(s);
    v.stage = trace_find(&s->trace, "input");
    layout_compute(&L, &s->trace, &v, 1280, 720);
    const PanelSpec *ps = &L.spec[L.result_panel];
    assert_true(ps->any_changed);
    for (int r = 0; r < ps->rows; r++)
        for (int c = 0; c < ps->cols; c++) assert_int_equal(scene_cell_changed(ps, r, c), r == 1 && c == 2);
    char buf[600];
    const char *narr = scene_narration(&s->trace, &v, buf, sizeof buf);
    assert_null(strstr(narr, lesson_step_text(&s->lesson, "input", LANG_EN)));
    v.edited = false;
    assert_string_equal(scene_narration(&s->trace, &v, buf, sizeof buf), lesson_step_text(&s->lesson, "input", LANG_EN));
    session_destroy(s);
}

// The lab's typed value (edit_value): only the number is parsed, and the edit and its
// errors are what --set gives for KEY=TEXT.
static void test_typed_value(void **state)
{
    (void)state;
    Session *s = open_session(CLASSIC);
    const char *texts[] = {"0.5", "-3e-2", "abc", "", "1e99", "nan", "2"};
    int tensors[] = {LT_QUERY, LT_WEIGHT0 + 1, LT_WEIGHT0 + 6};
    for (size_t ti = 0; ti < sizeof tensors / sizeof tensors[0]; ti++)
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            Edit target, typed, parsed;
            edit_element(&s->lesson, tensors[ti], 3, 0.0f, &target);
            char key[EDIT_TEXT_MAX], arg[EDIT_TEXT_MAX + 64], e1[EDIT_ERR_MAX] = "", e2[EDIT_ERR_MAX] = "";
            edit_key(&target, key, sizeof key);
            assert_null(strchr(key, '='));
            snprintf(arg, sizeof arg, "%s=%s", key, texts[k]);
            typed = target;
            bool a = edit_value(&s->lesson, &typed, texts[k], e1, sizeof e1);
            bool b = edit_parse(&s->lesson, arg, &parsed, e2, sizeof e2);
            assert_int_equal(a, b);
            if (a) {
                assert_int_equal(typed.index, parsed.index);
                assert_true(typed.value == parsed.value);
                assert_string_equal(typed.text, parsed.text);
            } else {
                assert_string_equal(e1, e2);
                assert_true(typed.value == target.value); // unchanged
            }
        }
    Edit sc;
    edit_scale(&s->lesson, 1.0f, &sc);
    char err[EDIT_ERR_MAX];
    assert_true(edit_value(&s->lesson, &sc, "sqrt_dk", err, sizeof err));
    assert_true(sc.kind == EDIT_SCALE && fabsf(sc.value - sqrtf((float)s->lesson.cfg.d_k)) == 0.0f);
    assert_false(edit_value(&s->lesson, &sc, "-1", err, sizeof err));
    assert_non_null(strstr(err, "model.scale=-1: expected a positive float32 divisor"));
    session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_element_edits),   cmocka_unit_test(test_switches),
        cmocka_unit_test(test_typed_value),     cmocka_unit_test(test_index_topk_edits),
        cmocka_unit_test(test_same_kind_tokens_aliases),
        cmocka_unit_test(test_undo_redo),       cmocka_unit_test(test_save_round_trip),
        cmocka_unit_test(test_save_round_trip_variants), cmocka_unit_test(test_save_errors),     cmocka_unit_test(test_bad_edits),
        cmocka_unit_test(test_delta_and_lerp),  cmocka_unit_test(test_edit_targets), cmocka_unit_test(test_layer_edits), cmocka_unit_test(test_key_padding_combines), cmocka_unit_test(test_set_near_flt_max),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
