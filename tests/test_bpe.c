// test_bpe.c — byte-level byte-pair encoding (src/core/bpe.c, a lesson's "tokenizer": "bpe"):
// the token ids of 419 texts (English, Chinese, emoji, white space, control characters,
// the empty text, long ones) equal the Python BPE's (lessons/bpe.py, tests/gen_bpe.py ->
// tests/ref/bpe_cases.json) and decode back to the text; any text a student types reads
// (typed.c, session_retext); a text past the limit is one clear line; the lesson writer
// keeps the merges; and every bad vocabulary or merge list is one line naming its JSON path.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn_json.h"
#include "bpe.h"
#include "jsonpath.h"
#include "lesson.h"
#include "session.h"
#include "typed.h"

#include "pure_support.h"
#include "ref_support.h"

#define CASES "tests/ref/bpe_cases.json"

static cJSON *cases_root(void) { return ref_read_json(CASES); }

// The reference's vocab as C strings (borrowed from root).
static char **vocab_of(const cJSON *root, int *V)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "vocab");
    *V = cJSON_GetArraySize(v);
    char **out = calloc((size_t)*V, sizeof *out);
    assert_non_null(out);
    for (int i = 0; i < *V; i++) out[i] = cJSON_GetArrayItem(v, i)->valuestring;
    return out;
}

static void test_reference_ids(void **state)
{
    (void)state;
    cJSON *root = cases_root();
    int V;
    char **vocab = vocab_of(root, &V), err[LESSON_ERR_MAX];
    JsonCtx c = {CASES, err, sizeof err, false, false};
    Bpe *b = bpe_read(&c, cJSON_GetObjectItemCaseSensitive(root, "merges"), vocab, V);
    if (!b) fail_msg("%s", err);
    int n_cases = 0, n_tokens = 0, *ids = malloc(sizeof(int) * (LESSON_MAX_LEN + 1));
    char *back = malloc(LESSON_MAX_LEN * BPE_MAX_TOKEN_BYTES + 1);
    assert_non_null(ids), assert_non_null(back);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "cases")) {
        const char *text = cJSON_GetObjectItemCaseSensitive(e, "text")->valuestring;
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(e, "ids");
        const int n = bpe_encode(b, text, ids, LESSON_MAX_LEN);
        if (n != cJSON_GetArraySize(want)) fail_msg("\"%s\": %d tokens, Python %d", text, n, cJSON_GetArraySize(want));
        for (int i = 0; i < n; i++)
            if (ids[i] != cJSON_GetArrayItem(want, i)->valueint)
                fail_msg("\"%s\": token %d is %d, Python's %d", text, i, ids[i], cJSON_GetArrayItem(want, i)->valueint);
        assert_int_equal(bpe_decode(b, ids, n, back, LESSON_MAX_LEN * BPE_MAX_TOKEN_BYTES + 1), strlen(text));
        assert_string_equal(back, text);
        n_cases++, n_tokens += n;
    }
    assert_true(n_cases >= 400);
    print_message("%d texts, %d tokens as the Python BPE's\n", n_cases, n_tokens);
    // any bytes, even ones that are not UTF-8: byte tokens, never a refusal
    const char odd[] = "\xff\xfe caf\xc3 \xe4\xbd";
    const int n = bpe_encode(b, odd, ids, LESSON_MAX_LEN);
    assert_true(n > 0);
    assert_int_equal(bpe_decode(b, ids, n, back, 64), strlen(odd));
    assert_memory_equal(back, odd, sizeof odd);
    // past the limit: -2, also for a text far too long to look at
    char *lots = malloc(200001);
    assert_non_null(lots);
    for (int i = 0; i < 200000; i++) lots[i] = "a1,"[i % 3]; // chunks of one byte each: 200000 tokens
    lots[200000] = '\0';
    assert_int_equal(bpe_encode(b, lots, NULL, LESSON_MAX_LEN), -2);
    lots[LESSON_MAX_LEN] = '\0';
    assert_int_equal(bpe_encode(b, lots, NULL, LESSON_MAX_LEN), LESSON_MAX_LEN);
    // a copy encodes the same
    Bpe *copy = bpe_copy(b, vocab);
    assert_non_null(copy);
    assert_int_equal(bpe_encode(copy, "the cat 你好 😀", NULL, 99), bpe_encode(b, "the cat 你好 😀", NULL, 99));
    bpe_destroy(copy);
    free(lots), free(back), free(ids);
    bpe_destroy(b);
    free(vocab);
    cJSON_Delete(root);
}

// --- the lesson ----------------------------------------------------------------------

// A small BPE language model over the reference's vocab and merges, changed by `edit`.
static char *lesson_text(void (*edit)(cJSON *root))
{
    cJSON *ref = cases_root(), *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "title", "bpe");
    cJSON_AddItemToObject(root, "vocab", cJSON_DetachItemFromObject(ref, "vocab"));
    cJSON_AddStringToObject(root, "tokenizer", "bpe");
    cJSON_AddItemToObject(root, "merges", cJSON_DetachItemFromObject(ref, "merges"));
    cJSON *model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddNumberToObject(model, "d_model", 4);
    cJSON_AddNumberToObject(model, "n_heads", 2);
    cJSON_AddStringToObject(model, "positions", "learned");
    cJSON_AddNumberToObject(model, "max_positions", 24);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "input"), "text", "the cat 你好");
    cJSON_AddStringToObject(root, "mask", "causal");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "weights"), "init"), "seed", 1);
    if (edit) edit(root);
    char *text = cJSON_Print(root);
    assert_non_null(text);
    cJSON_Delete(root), cJSON_Delete(ref);
    return text;
}

static void parse_ok(Lesson *ls, void (*edit)(cJSON *))
{
    char *text = lesson_text(edit), err[LESSON_ERR_MAX];
    bool ok = lesson_parse(ls, "bpe.json", text, strlen(text), err, sizeof err);
    free(text);
    if (!ok) fail_msg("%s", err);
}

static void test_lesson_any_text(void **state)
{
    (void)state;
    Lesson ls;
    parse_ok(&ls, NULL);
    assert_non_null(ls.bpe);
    // labels: a space drawn ␣, a byte not a character of its own "<0xNN>"
    assert_string_equal(lesson_token_label(&ls, 0, 0), "the");
    assert_string_equal(lesson_token_label(&ls, 0, 1), "\xE2\x90\xA3" "cat");
    // typed texts: Chinese, emoji, punctuation, control characters all read
    const char *texts[] = {"你好，世界！", "😀 🎉 👍🏽", "naïve café, Zürich?!", "tab\there", "x", "ÿ\x01"};
    char why[512];
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        assert_false(typed_text_problem(&ls, texts[i], LANG_EN, why, sizeof why));
        char err[LESSON_ERR_MAX];
        assert_true(lesson_retext(&ls, texts[i], err, sizeof err));
    }
    // only what a model cannot take: nothing, or past its context (24 positions)
    assert_true(typed_text_problem(&ls, "", LANG_EN, why, sizeof why));
    assert_true(typed_text_problem(&ls, "一二三四五六七八九十一二三四五六七八九十", LANG_EN, why, sizeof why));
    assert_non_null(strstr(why, "24"));
    char err[LESSON_ERR_MAX];
    assert_false(lesson_retext(&ls, "一二三四五六七八九十一二三四五六七八九十", err, sizeof err));
    assert_non_null(strstr(err, "input.text"));
    assert_null(strchr(err, '\n'));
    // the writer keeps the tokenizer and its merges: written, read back, the same ids
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_true(lesson_write(&ls, f));
    fclose(f);
    Lesson back;
    bool ok = lesson_parse(&back, "saved.json", buf, len, err, sizeof err);
    if (!ok) fail_msg("%s", err);
    assert_non_null(back.bpe);
    assert_int_equal(back.bpe->n_merges, ls.bpe->n_merges);
    assert_int_equal(bpe_encode(back.bpe, "the cat sat on the mat 你好", NULL, 99),
                     bpe_encode(ls.bpe, "the cat sat on the mat 你好", NULL, 99));
    lesson_free(&back);
    free(buf);
    lesson_free(&ls);
}

static void test_session_retext(void **state)
{
    (void)state;
    char *text = lesson_text(NULL), path[] = "/tmp/attnviz-test-bpe-XXXXXX", err[LESSON_ERR_MAX];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    Session *s = session_create(path, err, sizeof err);
    unlink(path);
    if (!s) fail_msg("%s", err);
    Session *t = session_retext(s, "你好 😀 hi", err, sizeof err);
    if (!t) fail_msg("%s", err);
    assert_non_null(t->lesson.bpe); // (the copy keeps the tokenizer)
    assert_true(t->lesson.len_q > 4);
    session_destroy(t);
    session_destroy(s);
}

// --- bad vocabularies and merges: one line naming the JSON path ------------------------

static cJSON *item(cJSON *root, const char *key) { return cJSON_GetObjectItemCaseSensitive(root, key); }

static void drop_byte_e4(cJSON *r) // a byte's token missing
{
    cJSON *v = item(r, "vocab");
    for (int i = 0; i < cJSON_GetArraySize(v); i++)
        if (strcmp(cJSON_GetArrayItem(v, i)->valuestring, "<0xE4>") == 0) {
            cJSON_DeleteItemFromArray(v, i);
            return;
        }
    fail_msg("no <0xE4>");
}
static void bad_result(cJSON *r) // a merge whose result is not a token
{
    cJSON *m = cJSON_GetArrayItem(item(r, "merges"), 3);
    cJSON_ReplaceItemInArray(m, 1, cJSON_CreateString("q"));
}
static void drop_last_merge(cJSON *r) // a token that no merge makes
{
    cJSON *m = item(r, "merges");
    cJSON_DeleteItemFromArray(m, cJSON_GetArraySize(m) - 1);
}
static void swap_merges(cJSON *r) // a merge using a token made later
{
    cJSON *m = item(r, "merges");
    cJSON *first = cJSON_DetachItemFromArray(m, 0); // " t": the first, which later merges use
    cJSON_AddItemToArray(m, first);
}
static void part_unknown(cJSON *r)
{
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(item(r, "merges"), 0), 0, cJSON_CreateString("zzz"));
}
static void merge_again(cJSON *r)
{
    cJSON *m = item(r, "merges");
    cJSON_AddItemToArray(m, cJSON_Duplicate(cJSON_GetArrayItem(m, 0), true));
}
static void merge_not_pair(cJSON *r) { cJSON_ReplaceItemInArray(item(r, "merges"), 2, cJSON_CreateString("th")); }
static void no_merges(cJSON *r) { cJSON_DeleteItemFromObject(r, "merges"); }
static void merges_not_bpe(cJSON *r) { cJSON_ReplaceItemInObject(r, "tokenizer", cJSON_CreateString("char")); }
static void byte_twice(cJSON *r) { cJSON_AddItemToArray(item(r, "vocab"), cJSON_CreateString("<0x61>")); }
static void vocab_over(cJSON *r)
{
    cJSON *v = item(r, "vocab");
    for (int i = 0; cJSON_GetArraySize(v) <= 1024; i++) {
        char t[16];
        snprintf(t, sizeof t, "extra%d", i);
        cJSON_AddItemToArray(v, cJSON_CreateString(t));
    }
}

static void test_bad_lessons(void **state)
{
    (void)state;
    const struct {
        void (*edit)(cJSON *);
        const char *want;
    } bad[] = {
        {drop_byte_e4, "bpe.json: vocab: no token for the byte 0xE4 (\"<0xE4>\"); expected a token for each of the 256 bytes"},
        {bad_result, "bpe.json: merges[3]: "},
        {drop_last_merge, "is made by no merge; expected each token of several bytes to be a merge's result"},
        {swap_merges, "\" t\" is made by no merge before merges[2]; expected merges in the order they apply"},
        {part_unknown, "bpe.json: merges[0][0]: \"zzz\" is not in the vocab"},
        {merge_again, "again (merges[0] made it); expected one merge a token"},
        {merge_not_pair, "bpe.json: merges[2]: expected a pair of tokens"},
        {no_merges, "bpe.json: merges: missing; the \"bpe\" tokenizer expected"},
        {merges_not_bpe, "bpe.json: merges: are byte-pair encoding's; expected \"tokenizer\": \"bpe\""},
        {byte_twice, "is the bytes of vocab[97] (\"a\") again"},
        {vocab_over, "bpe.json: vocab: expected an array of 1 to 1024 token strings"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *text = lesson_text(bad[i].edit), err[LESSON_ERR_MAX];
        Lesson ls;
        const bool ok = lesson_parse(&ls, "bpe.json", text, strlen(text), err, sizeof err);
        free(text);
        if (ok) {
            lesson_free(&ls);
            fail_msg("case %zu read", i);
        }
        if (!strstr(err, bad[i].want)) fail_msg("case %zu: \"%s\", expected \"%s\"", i, err, bad[i].want);
        assert_null(strchr(err, '\n'));
    }
    // the result of bad_result's merge named with its parts
    char *text = lesson_text(bad_result), err[LESSON_ERR_MAX];
    Lesson ls;
    assert_false(lesson_parse(&ls, "bpe.json", text, strlen(text), err, sizeof err));
    assert_non_null(strstr(err, "+ \"q\" is not in the vocab; expected each merge's result among its tokens"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_ids),
        cmocka_unit_test(test_lesson_any_text),
        cmocka_unit_test(test_session_retext),
        cmocka_unit_test(test_bad_lessons),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
