// libFuzzer target (issue 36): a language-model lesson (vocab, text, checkpoints) with a
// text typed into the window's box and a checkpoint of the slider, through load → retext →
// forward, as the window runs them. Input: LESSON [NUL TEXT [NUL C]]: the lesson's JSON,
// the typed text, and the checkpoint byte C (C − 1: 255 is the file's "weights"; absent: the
// file's default).
// Oracle: a refusal is one line naming the input ("fuzz.json: ", "--text: " or
// "--checkpoint: "); what is accepted stays within the documented limits (every stage of
// its forward pass at most LESSON_MAX_ELEMS elements, the weights and checkpoints within
// LESSON_MAX_WEIGHT_FLOATS); a refused text leaves the lesson as it was; the lesson written
// back (lesson_write) reads as the same weights, checkpoints and ids. Build and run: make fuzz.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "attn_json.h"
#include "lesson.h"
#include "fuzz_reread.h"

#ifndef FUZZ_LM_ENTRY
#define FUZZ_LM_ENTRY LLVMFuzzerTestOneInput
#endif

static void lm_one_line(const char *err)
{
    if (strchr(err, '\n') || !(strncmp(err, "fuzz.json: ", 11) == 0 || strncmp(err, "--text: ", 8) == 0 ||
                               strncmp(err, "--checkpoint: ", 14) == 0))
        __builtin_trap();
}

static int lm_same(const Tensor *a, const Tensor *b)
{
    return a->rank == b->rank && a->size == b->size && (a->size == 0 || !memcmp(a->data, b->data, a->size * sizeof(float)));
}

// The forward pass when it is cheap enough to fuzz (big ones are valid but slow): every
// stage within the element limit the pre-run check promises.
static void lm_forward(const Lesson *ls)
{
    const size_t B = (size_t)ls->batch, L = (size_t)ls->len_q, C = (size_t)ls->cfg.d_model;
    const size_t H = (size_t)ls->cfg.n_heads, d = (size_t)(ls->cfg.d_k + ls->cfg.d_v);
    const size_t NL = ls->cfg.n_layers > 1 ? (size_t)ls->cfg.n_layers : 1;
    const size_t work = B * L * (NL * (H * L * d + H * d * C + (size_t)ls->cfg.ffn_hidden * C) + (size_t)ls->cfg.vocab_size * C);
    if (work > (1u << 24)) return;
    Trace tr;
    trace_init(&tr);
    if (!attn_forward(&ls->cfg, ls->w, &ls->in, &tr)) __builtin_trap();
    for (int i = 0; i < tr.n; i++)
        if (tr.stages[i].t.size > LESSON_MAX_ELEMS) __builtin_trap();
    trace_free(&tr);
}

// lesson_write, read back (with the same checkpoint chosen: the others were not read):
// the same weights, checkpoints (steps, losses) and ids.
static void lm_round_trip(const Lesson *ls, const LessonOverride *o)
{
    Lesson back;
    if (!fuzz_reread(ls, o, &back)) return;
    if (back.n_checkpoints != ls->n_checkpoints || !lm_same(&back.in.ids, &ls->in.ids)) __builtin_trap();
    for (int k = 0; k < ls->n_checkpoints; k++)
        if (back.ckpt_step[k] != ls->ckpt_step[k] || memcmp(&back.ckpt_loss[k], &ls->ckpt_loss[k], sizeof(float)))
            __builtin_trap();
    for (int l = 0; l < LESSON_MAX_LAYERS; l++)
        for (int i = 0; i < LESSON_N_WEIGHTS; i++)
            if (!lm_same(lesson_weight(&back.w[l], i), lesson_weight((AttnWeights *)&ls->w[l], i))) __builtin_trap();
    lesson_free(&back);
}

int FUZZ_LM_ENTRY(const uint8_t *data, size_t size);

int FUZZ_LM_ENTRY(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    const size_t json_len = nul ? (size_t)(nul - data) : size;
    char text[4100];
    const char *typed = NULL;
    LessonOverride o = {NULL, false, 0};
    if (nul) {
        const uint8_t *t = nul + 1, *end = data + size, *nul2 = memchr(t, 0, (size_t)(end - t));
        size_t n = (size_t)((nul2 ? nul2 : end) - t);
        if (n >= sizeof text) n = sizeof text - 1;
        memcpy(text, t, n);
        text[n] = '\0';
        typed = text;
        if (nul2 && nul2 + 1 < end) o.has_checkpoint = true, o.checkpoint = (int)nul2[1] - 1;
    }
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_parse_with(&ls, "fuzz.json", (const char *)data, json_len, &o, err, sizeof err)) {
        lm_one_line(err);
        return 0;
    }
    // the weight budget held before anything was generated
    const size_t sets = (size_t)ls.n_checkpoints + (ls.n_checkpoints == 0 || ls.checkpoint == -1 ? 1 : 0);
    if (attn_json_weight_floats(&ls.cfg) * sets > LESSON_MAX_WEIGHT_FLOATS) __builtin_trap();
    lm_forward(&ls);
    lm_round_trip(&ls, &o);
    if (typed && ls.vocab) { // the text box
        const int L = ls.len_q, B = ls.batch;
        if (!lesson_retext(&ls, typed, err, sizeof err)) {
            lm_one_line(err);
            if (ls.len_q != L || ls.batch != B || ls.typed) __builtin_trap(); // the lesson as it was
        } else {
            if (ls.batch != 1 || !ls.typed || ls.n_quiz != 0) __builtin_trap();
            lm_forward(&ls);
            lm_round_trip(&ls, &o);
        }
    }
    lesson_free(&ls);
    return 0;
}
