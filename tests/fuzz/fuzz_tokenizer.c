// libFuzzer target (issue 36): a language model's tokenizer on arbitrary bytes, as the
// window's text box and --text give it (lesson_retext). The input's first byte picks the
// lesson (the shipped character-level ones, a word-level reference, and two built here with
// multi-byte tokens), the rest, up to its first NUL, is the text.
// Oracle: a refusal is one line "--text: …" in valid UTF-8 and leaves the lesson as it was;
// an accepted text is 1 to LESSON_MAX_LEN ids of the vocab whose tokens give the text back
// (characters: concatenated; words: joined by one space, the text's runs of spaces being
// one), batch 1, and its forward pass runs. Build and run: make fuzz.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "edit.h"
#include "lesson.h"
#include "utf8.h"

#ifndef FUZZ_TOKENIZER_ENTRY
#define FUZZ_TOKENIZER_ENTRY LLVMFuzzerTestOneInput
#endif

static const char *const tok_files[] = {"lessons/tiny-lm-fortunes.json", "lessons/reversal-anti-diagonal.json",
                                        "tests/ref/lm-word-sinusoidal-tied.lesson.json",
                                        "tests/ref/lm-char-2-layer.lesson.json"};
// multi-byte tokens (a space among the characters; words of several scripts)
static const char *const tok_inline[] = {
    "{\"title\": \"chars\", \"vocab\": [\"猫\", \"坐\", \" \", \"é\", \"a\", \"😀\"], \"model\": {\"d_model\": 4, \"n_heads\": 1, "
    "\"positions\": \"sinusoidal\"}, \"input\": {\"text\": \"猫 坐\"}, \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 3}}}",
    "{\"title\": \"words\", \"tokenizer\": \"word\", \"vocab\": [\"猫\", \"坐在\", \"the\", \"é\", \"x-y\", \"\\u00a0\"], "
    "\"model\": {\"d_model\": 4, \"n_heads\": 1, \"positions\": \"learned\", \"max_positions\": 64}, "
    "\"input\": {\"text\": \"the 猫\"}, \"mask\": {\"sliding_window\": 3}, \"weights\": {\"init\": {\"seed\": 4}}}",
};
enum { TOK_N_FILES = sizeof tok_files / sizeof *tok_files, TOK_N = TOK_N_FILES + sizeof tok_inline / sizeof *tok_inline };
static Lesson tok_lessons[TOK_N];

static void tok_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    char err[LESSON_ERR_MAX];
    for (int i = 0; i < TOK_N; i++) {
        bool ok = i < TOK_N_FILES ? lesson_load(&tok_lessons[i], tok_files[i], err, sizeof err)
                                  : lesson_parse(&tok_lessons[i], "inline.json", tok_inline[i - TOK_N_FILES],
                                                 strlen(tok_inline[i - TOK_N_FILES]), err, sizeof err);
        if (!ok) {
            fprintf(stderr, "fuzz_tokenizer: run from the repository: %s\n", err);
            abort();
        }
    }
}

// The text the ids of ls spell (words joined by one space) into out; false when it does not fit.
static bool tok_spell(const Lesson *ls, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (int l = 0; l < ls->len_q; l++) {
        const float id = ls->in.ids.data[l];
        if (!(id >= 0.0f && id < (float)ls->n_vocab && id == (float)(int)id)) __builtin_trap();
        int w = snprintf(out + k, n - k, "%s%s", ls->word_tokens && l ? " " : "", ls->vocab[(int)id]);
        if (w < 0 || (size_t)w >= n - k) return false;
        k += (size_t)w;
    }
    return true;
}

// text with its runs of spaces as one and none at either end (what the word tokenizer splits).
static void tok_squeeze(const char *text, char *out)
{
    size_t k = 0;
    for (const char *p = text; *p; p++) {
        if (*p == ' ' && (k == 0 || out[k - 1] == ' ')) continue;
        out[k++] = *p;
    }
    while (k > 0 && out[k - 1] == ' ') k--;
    out[k] = '\0';
}

int FUZZ_TOKENIZER_ENTRY(const uint8_t *data, size_t size);

int FUZZ_TOKENIZER_ENTRY(const uint8_t *data, size_t size)
{
    tok_init();
    if (size < 1 || size > 4097) return 0;
    static char text[4100], want[4100], got[70000];
    size_t n = strnlen((const char *)data + 1, size - 1);
    memcpy(text, data + 1, n);
    text[n] = '\0';
    Lesson ls;
    if (!lesson_clone(&ls, &tok_lessons[data[0] % TOK_N])) return 0; // (out of memory)
    const int L = ls.len_q, B = ls.batch;
    char err[LESSON_ERR_MAX];
    if (!lesson_retext(&ls, text, err, sizeof err)) {
        if (strncmp(err, "--text: ", 8) != 0 || strchr(err, '\n') ||
            utf8_invalid_at((const unsigned char *)err, strlen(err)) != strlen(err))
            __builtin_trap();
        if (ls.len_q != L || ls.batch != B || ls.typed) __builtin_trap(); // as it was
        lesson_free(&ls);
        return 0;
    }
    if (ls.batch != 1 || ls.len_q < 1 || ls.len_q > LESSON_MAX_LEN || ls.in.ids.size != (size_t)ls.len_q || !ls.typed)
        __builtin_trap();
    if (ls.word_tokens)
        tok_squeeze(text, want);
    else
        memcpy(want, text, n + 1);
    if (!tok_spell(&ls, got, sizeof got) || strcmp(got, want) != 0) __builtin_trap();
    Trace tr;
    trace_init(&tr);
    if (!attn_forward(&ls.cfg, ls.w, &ls.in, &tr)) __builtin_trap();
    trace_free(&tr);
    lesson_free(&ls);
    return 0;
}
