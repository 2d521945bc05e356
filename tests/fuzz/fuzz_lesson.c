// libFuzzer target: bytes -> lesson_parse -> (when accepted and small) the
// forward pass, the lesson written back (lesson_write) and read again (it must give
// the same numbers bit for bit), and the input's last line tried as a --set edit.
// Any crash, sanitizer report, leak or allocation over the documented limits is a
// finding. Build and run: make fuzz FUZZ_SECONDS=60.
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "edit.h"
#include "lesson.h"
#include "fuzz_reread.h"

static int fuzz_same_tensor(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank || a->size != b->size) return 0;
    for (size_t k = 0; k < a->size; k++)
        if (memcmp(&a->data[k], &b->data[k], sizeof(float)) != 0) return 0;
    return 1;
}

// The lesson written back reads as the same lesson: config, every tensor, the mask.
static void fuzz_round_trip(const Lesson *ls)
{
    Lesson back;
    if (!fuzz_reread(ls, NULL, &back)) return;
    for (int t = 0; t < LT_COUNT; t++)
        if (t != LT_MASK && !fuzz_same_tensor(lesson_tensor((Lesson *)ls, t), lesson_tensor(&back, t)))
            __builtin_trap();
    if (back.in.mask_kind != ls->in.mask_kind) __builtin_trap();
    if (back.n_quiz != ls->n_quiz) __builtin_trap();
    for (int i = 0; i < ls->n_quiz; i++)
        if (strcmp(back.quiz[i].id, ls->quiz[i].id) || strcmp(back.quiz[i].stage, ls->quiz[i].stage) ||
            back.quiz[i].n_answer != ls->quiz[i].n_answer ||
            memcmp(back.quiz[i].answer, ls->quiz[i].answer, sizeof(float) * (size_t)ls->quiz[i].n_answer) ||
            memcmp(&back.quiz[i].tolerance, &ls->quiz[i].tolerance, sizeof(float)))
            __builtin_trap();
    if (ls->in.mask_kind != MASK_NONE && !fuzz_same_tensor(&ls->in.mask, &back.in.mask)) __builtin_trap();
    if (memcmp(&back.cfg.scale, &ls->cfg.scale, sizeof(float)) != 0 ||
        memcmp(&back.cfg.mask_fill, &ls->cfg.mask_fill, sizeof(float)) != 0 ||
        memcmp(&back.cfg.norm_eps, &ls->cfg.norm_eps, sizeof(float)) != 0)
        __builtin_trap();
    lesson_free(&back);
}

// The input's last line (up to 96 bytes) as a KEY=VALUE edit: refused with one line
// naming it, or applied.
static void fuzz_edit(Lesson *ls, const uint8_t *data, size_t size)
{
    size_t start = size;
    while (start > 0 && data[start - 1] != '\n' && size - start < 96) start--;
    char arg[100];
    size_t n = size - start;
    memcpy(arg, data + start, n);
    arg[n] = '\0';
    if (memchr(arg, '\0', n)) return;
    Edit e;
    char err[EDIT_ERR_MAX];
    if (!edit_parse(ls, arg, &e, err, sizeof err)) {
        if (!err[0]) __builtin_trap();
        return;
    }
    if (!edit_apply(ls, &e, err, sizeof err) && !strstr(err, "out of memory")) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(&ls, "fuzz.json", (const char *)data, size, err, sizeof err)) {
        // every rejection is one non-empty line that names the input
        if (strncmp(err, "fuzz.json: ", 11) != 0 || strchr(err, '\n')) __builtin_trap();
        return 0;
    }
    // forward pass for small accepted lessons (big ones are valid but slow to fuzz)
    size_t work = (size_t)ls.batch * (size_t)ls.cfg.n_heads * (size_t)ls.len_q * (size_t)ls.len_k *
                  (size_t)(ls.cfg.d_k + ls.cfg.d_v + ls.cfg.d_model);
    if (work < (1u << 20)) {
        Trace tr;
        trace_init(&tr);
        if (!attn_forward(&ls.cfg, ls.w, &ls.in, &tr)) __builtin_trap();
        // the lesson's own questions against its trace: accepted, or one line naming the input
        if (!lesson_check_quiz(&ls, &tr, err, sizeof err) && (strncmp(err, "fuzz.json: ", 11) != 0 || strchr(err, '\n')))
            __builtin_trap();
        trace_free(&tr);
        fuzz_round_trip(&ls);
        fuzz_edit(&ls, data, size);
        fuzz_round_trip(&ls);
    }
    lesson_free(&ls);
    return 0;
}
