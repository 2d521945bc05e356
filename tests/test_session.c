// test_session.c — a Session: one lesson and its forward pass at stable
// addresses. A good lesson (the trace borrows the session's own weights, the
// same numbers as the core's forward pass), several sessions at once, a
// missing file and bad lessons (NULL with the loader's one-line error).
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edit.h"
#include "session.h"

#define GOOD "lessons/dk-dv-residual-ffn.json"

// Every weight and bias a stage borrows lies inside the session's own weights.
static void check_borrows(const Session *s)
{
    const char *lo = (const char *)s->lesson.w, *hi = lo + sizeof s->lesson.w;
    for (int i = 0; i < s->trace.n; i++) {
        const Tensor *t[2] = {s->trace.stages[i].weight, s->trace.stages[i].bias};
        for (int k = 0; k < 2; k++) {
            if (!t[k]) continue;
            const char *p = (const char *)t[k];
            if (p < lo || p >= hi) fail_msg("stage %s borrows a tensor outside the session", s->trace.stages[i].name);
        }
    }
}

static void test_good_lesson(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX] = "";
    Session *s = session_create(GOOD, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(err, "");
    assert_string_equal(s->path, GOOD);
    assert_true(s->trace.n > 0);
    int q = trace_find(&s->trace, "q_proj"), h = trace_find(&s->trace, "ffn_hidden");
    assert_true(q >= 0 && h >= 0);
    assert_ptr_equal(s->trace.stages[q].weight, &s->lesson.w[0].w_q);
    assert_ptr_equal(s->trace.stages[h].weight, &s->lesson.w[0].ffn_w1);
    assert_ptr_equal(s->trace.stages[h].bias, &s->lesson.w[0].ffn_b1);
    check_borrows(s);

    // the same numbers as the core's forward pass on the same file
    Lesson ls;
    Trace tr;
    assert_true(lesson_load(&ls, GOOD, err, sizeof err));
    trace_init(&tr);
    assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
    assert_int_equal(tr.n, s->trace.n);
    for (int i = 0; i < tr.n; i++) {
        const Tensor *a = &tr.stages[i].t, *b = &s->trace.stages[i].t;
        assert_string_equal(tr.stages[i].name, s->trace.stages[i].name);
        assert_int_equal(a->size, b->size);
        assert_memory_equal(a->data, b->data, a->size * sizeof *a->data);
    }
    trace_free(&tr);
    lesson_free(&ls);
    session_destroy(s);
    session_destroy(NULL); // a no-op
}

// The window opens another lesson while one is shown: the two sessions are
// independent, and destroying the old one leaves the new one whole.
static void test_two_sessions(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    Session *a = session_create("lessons/arange-2x4x4.json", err, sizeof err);
    assert_non_null(a);
    Session *b = session_create(GOOD, err, sizeof err);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
    int q = trace_find(&b->trace, "q_proj");
    float w0 = b->lesson.w[0].w_q.data[0];
    session_destroy(a);
    assert_ptr_equal(b->trace.stages[q].weight, &b->lesson.w[0].w_q);
    assert_true(b->trace.stages[q].weight->data[0] == w0);
    check_borrows(b);
    session_destroy(b);
}

static void test_missing_file(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX] = "";
    assert_null(session_create("tests/no/such/file.json", err, sizeof err));
    assert_non_null(strstr(err, "tests/no/such/file.json: cannot open"));
    assert_true(strncmp(err, "tests/no/such/file.json: ", 25) == 0);
    assert_null(strchr(err, '\n'));
}

// Every lesson of the bad corpus: NULL, and the loader's one line naming the file.
static void test_bad_lessons(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX] = "";
    assert_null(session_create("tests/bad/d-model-string.json", err, sizeof err));
    assert_string_equal(err, "tests/bad/d-model-string.json: model.d_model: expected an integer from 1 to 1024, got a string");
    glob_t g;
    assert_int_equal(glob("tests/bad/*.json", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 10);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        err[0] = '\0';
        Session *s = session_create(g.gl_pathv[i], err, sizeof err);
        if (s) fail_msg("%s: accepted", g.gl_pathv[i]);
        if (strncmp(err, g.gl_pathv[i], strlen(g.gl_pathv[i])) != 0) fail_msg("%s: \"%s\" does not name the file", g.gl_pathv[i], err);
        assert_null(strchr(err, '\n'));
    }
    globfree(&g);
}

// The version a window watches: it changes with every edit, undo, redo and reset, and
// not when nothing changes (the same value again, a reset with nothing to reset).
static void test_version(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    Session *s = session_create("lessons/arange-2x4x4.json", err, sizeof err);
    assert_non_null(s);
    unsigned v0 = s->version;
    Edit e;
    assert_true(edit_parse(&s->lesson, "weights.w_q[0,0]=0.5", &e, err, sizeof err));
    assert_true(session_edit(s, &e, false, NULL, err, sizeof err));
    assert_true(s->version != v0);
    unsigned v1 = s->version;
    assert_true(session_edit(s, &e, false, NULL, err, sizeof err)); // the same value again: no change
    assert_int_equal(s->version, v1);
    assert_true(session_undo(s, NULL, err, sizeof err));
    assert_true(s->version != v1);
    unsigned v2 = s->version;
    assert_true(session_redo(s, NULL, err, sizeof err));
    assert_true(s->version != v2);
    unsigned v3 = s->version;
    assert_true(session_reset(s, NULL, err, sizeof err));
    assert_true(s->version != v3);
    unsigned v4 = s->version;
    assert_false(session_reset(s, NULL, err, sizeof err)); // nothing left to reset: nothing changes
    assert_int_equal(s->version, v4);
    session_destroy(s);
}

// Writes text to a new temporary lesson file; its path into path (PATH_MAX).
static void write_lesson(char *path, const char *text)
{
    snprintf(path, 64, "/tmp/attnviz-test-session-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

// Issue 36, item 1: every path that changes the input passes the same size checks before
// computing. The text box (session_retext) refuses a text whose FlashAttention accumulator
// (block_k 1, d_v 1024: B·H·L·L·d_v) or whose 8 layers × 64 heads of scores pass the limit,
// with the same line as --text (session_open), and the session before stays as it was.
static void test_retext_limits(void **state)
{
    (void)state;
    static const char *const lessons[] = {
        "{\"title\": \"flash\", \"vocab\": [\"a\", \"b\"], \"model\": {\"d_model\": 8, \"n_heads\": 1, \"d_k\": 4, "
        "\"d_v\": 1024, \"positions\": \"none\", \"flash\": {\"block_q\": 1, \"block_k\": 1}}, \"input\": {\"text\": \"ab\"}, "
        "\"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}",
        "{\"title\": \"deep\", \"vocab\": [\"a\", \"b\"], \"model\": {\"n_layers\": 8, \"d_model\": 64, \"n_heads\": 64, "
        "\"positions\": \"none\"}, \"input\": {\"text\": \"ab\"}, \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}",
    };
    static const char *const want[] = {"--text: model.flash.block_k: 1: the accumulator after each key block would have",
                                       "--text: model.n_layers: 8 layers of scores"};
    char text[130];
    for (int i = 0; i < 128; i++) text[i] = "ab"[i % 2];
    text[128] = '\0';
    for (int k = 0; k < 2; k++) {
        char path[64], err[LESSON_ERR_MAX + 200] = "", err2[LESSON_ERR_MAX + 200] = "";
        write_lesson(path, lessons[k]);
        Session *s = session_create(path, err, sizeof err);
        if (!s) fail_msg("%s", err);
        const unsigned v = s->version;
        const int L = s->lesson.len_q;
        assert_null(session_retext(s, text, err, sizeof err));
        if (strncmp(err, want[k], strlen(want[k])) != 0) fail_msg("the text box: %s", err);
        assert_non_null(strstr(err, "limit of 4194304"));
        assert_null(strchr(err, '\n'));
        assert_true(s->version == v && s->lesson.len_q == L && s->trace.n > 0); // the last good state stays
        // --text: the same line
        const SessionEdits ed = {NULL, 0, text, false, 0, false};
        assert_null(session_open(path, &ed, err2, sizeof err2));
        assert_string_equal(err, err2);
        // a shorter text still reads
        Session *t = session_retext(s, "abba", err, sizeof err);
        if (!t) fail_msg("%s", err);
        session_destroy(t);
        session_destroy(s);
        unlink(path);
    }
}

// s saved to path (replacing it) and read back into back (fails the test when either fails).
static void save_reload(const Session *s, const char *path, Lesson *back)
{
    char err[LESSON_ERR_MAX + 200];
    if (!session_save(s, path, true, err, sizeof err)) fail_msg("%s", err);
    if (!lesson_load(back, path, err, sizeof err)) fail_msg("%s", err);
}

// Issue 36, item 5: a session with a typed text or another checkpoint saves without the
// author's narration, notes and questions (about the file's text and weights), its
// checkpoints kept; a plain one keeps both; an edited one at the default checkpoint of a
// lesson without "weights" keeps its edited weights.
static void test_save_other_numbers(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX + 200], out[64];
    Lesson back;
    Session *s = session_create("lessons/induction-heads.json", err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_true(s->lesson.n_steps > 0 && s->lesson.n_notes > 0 && s->lesson.n_checkpoints == 20);
    write_lesson(out, "");
    save_reload(s, out, &back);
    assert_int_equal(back.n_checkpoints, 20); // a plain copy: everything kept
    assert_int_equal(back.n_steps, s->lesson.n_steps);
    assert_int_equal(back.checkpoint, -1);
    lesson_free(&back);
    Session *t[2] = {session_retext(s, "abab", err, sizeof err), NULL}; // the text box
    if (!t[0]) fail_msg("%s", err);
    const SessionEdits ed = {NULL, 0, NULL, true, 0, false}; // the slider's checkpoint 0
    t[1] = session_open("lessons/induction-heads.json", &ed, err, sizeof err);
    if (!t[1]) fail_msg("%s", err);
    for (int k = 0; k < 2; k++) {
        save_reload(t[k], out, &back);
        assert_true(back.n_steps == 0 && back.n_notes == 0 && back.n_quiz == 0);
        assert_int_equal(back.n_checkpoints, 20);
        assert_memory_equal(back.w[0].w_q.data, t[k]->lesson.w[0].w_q.data, t[k]->lesson.w[0].w_q.size * sizeof(float));
        session_destroy(t[k]);
        lesson_free(&back);
    }
    session_destroy(s);
    // no "weights": the last checkpoint is the model; a copy keeps it so, an edit is written
    char path[64];
    write_lesson(path, "{\"title\": \"ck\", \"vocab\": [\"a\", \"b\"], \"model\": {\"d_model\": 4, \"n_heads\": 1, "
                       "\"positions\": \"none\"}, \"input\": {\"text\": \"ab\"}, \"steps\": {\"attn\": \"about these\"}, "
                       "\"checkpoints\": [{\"step\": 0, \"loss\": 1, \"weights\": {\"init\": {\"seed\": 1}}}, "
                       "{\"step\": 5, \"loss\": 0.5, \"weights\": {\"init\": {\"seed\": 2}}}]}");
    s = session_create(path, err, sizeof err);
    if (!s) fail_msg("%s", err);
    save_reload(s, out, &back);
    assert_true(back.checkpoint == 1 && back.n_checkpoints == 2 && back.n_steps == 1);
    lesson_free(&back);
    Edit e;
    assert_true(edit_parse(&s->lesson, "weights.w_q[0,0]=5", &e, err, sizeof err));
    assert_true(session_edit(s, &e, false, NULL, err, sizeof err));
    save_reload(s, out, &back);
    assert_true(back.checkpoint == -1 && back.n_checkpoints == 2 && back.n_steps == 0);
    assert_true(back.w[0].w_q.data[0] == 5.0f);
    lesson_free(&back);
    session_destroy(s);
    unlink(path);
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_lesson),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_two_sessions),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_bad_lessons),
        cmocka_unit_test(test_retext_limits),
        cmocka_unit_test(test_save_other_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
