// libFuzzer target: the --set grammar (edit_parse) on the shipped lessons. The
// input's first byte picks the lesson, the rest (up to 200 bytes) is KEY=VALUE.
// Oracle: a refusal gives a reason; an accepted edit's canonical text
// (Edit.text) parses back to the same edit, bit for bit; applied, the lesson still
// runs its forward pass and is written and read back. Build and run: make fuzz.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "edit.h"
#include "lesson.h"

#ifndef FUZZ_SET_ENTRY
#define FUZZ_SET_ENTRY LLVMFuzzerTestOneInput
#endif

static const char *const set_lessons[] = {"lessons/arange-2x4x4.json", "lessons/causal-decoder.json",
                                          "lessons/mistral-sliding-window.json", "lessons/cross-attention-padding.json",
                                          "lessons/per-head-modules.json", "lessons/llama-gqa-rope.json"};
enum { SET_N_LESSONS = sizeof set_lessons / sizeof *set_lessons };
static char *set_text[SET_N_LESSONS];
static size_t set_len[SET_N_LESSONS];

static void set_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    for (int i = 0; i < SET_N_LESSONS; i++) {
        FILE *f = fopen(set_lessons[i], "rb");
        if (!f) {
            fprintf(stderr, "fuzz_set: run from the repository: %s not found\n", set_lessons[i]);
            abort();
        }
        set_text[i] = malloc(1 << 20);
        set_len[i] = fread(set_text[i], 1, 1 << 20, f);
        fclose(f);
    }
}

static int same_edit(const Edit *a, const Edit *b)
{
    return a->kind == b->kind && memcmp(&a->value, &b->value, sizeof a->value) == 0 &&
           (a->kind == EDIT_MASK_KIND ? a->mask_kind == b->mask_kind : 1) &&
           (a->kind == EDIT_ELEMENT || a->kind == EDIT_FILL ? a->tensor == b->tensor : 1) &&
           (a->kind == EDIT_ELEMENT || a->kind == EDIT_KEY_PADDING ? a->index == b->index : 1);
}

int FUZZ_SET_ENTRY(const uint8_t *data, size_t size);

int FUZZ_SET_ENTRY(const uint8_t *data, size_t size)
{
    set_init();
    if (size < 1 || size > 201) return 0;
    char arg[208];
    memcpy(arg, data + 1, size - 1);
    arg[size - 1] = '\0';
    if (strlen(arg) != size - 1) return 0; // (a NUL inside: argv cannot hold it)
    int which = data[0] % SET_N_LESSONS;
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(&ls, set_lessons[which], set_text[which], set_len[which], err, sizeof err)) __builtin_trap();
    Edit e, again;
    char msg[EDIT_ERR_MAX];
    if (!edit_parse(&ls, arg, &e, msg, sizeof msg)) {
        if (!msg[0]) __builtin_trap(); // a reason (its control characters are escaped where it is shown)
        lesson_free(&ls);
        return 0;
    }
    // the canonical text is the same edit
    if (!edit_parse(&ls, e.text, &again, msg, sizeof msg) || !same_edit(&e, &again)) __builtin_trap();
    if (edit_apply(&ls, &e, msg, sizeof msg)) {
        Trace tr;
        trace_init(&tr);
        if (!attn_forward(&ls.cfg, ls.w, &ls.in, &tr)) __builtin_trap();
        trace_free(&tr);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f || !lesson_write(&ls, f)) __builtin_trap();
        fclose(f);
        Lesson back;
        if (!lesson_parse(&back, "fuzz.json", buf, len, err, sizeof err)) __builtin_trap();
        lesson_free(&back);
        free(buf);
    } else if (!msg[0]) {
        __builtin_trap();
    }
    lesson_free(&ls);
    return 0;
}
