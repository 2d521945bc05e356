// libFuzzer target: the study mode's answer parser (quiz_parse_answer). Oracle:
// accepted, it gives 1..max finite numbers, and those numbers written back ("%.9g",
// space-separated) parse to the same numbers bit for bit; the parser never reads
// past the text (ASan). Build and run: make fuzz.
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "quiz.h"

#ifndef FUZZ_QUIZ_ENTRY
#define FUZZ_QUIZ_ENTRY LLVMFuzzerTestOneInput
#endif

int FUZZ_QUIZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_QUIZ_ENTRY(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    char text[260];
    memcpy(text, data, size);
    text[size] = '\0';
    enum { MAX = 16 };
    float v[MAX], w[MAX];
    int n = -1, m = -1;
    if (!quiz_parse_answer(text, v, MAX, &n)) return 0;
    if (n < 1 || n > MAX) __builtin_trap();
    char back[MAX * 20] = "";
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i])) __builtin_trap();
        at += (size_t)snprintf(back + at, sizeof back - at, "%s%.9g", i ? " " : "", (double)v[i]);
    }
    if (!quiz_parse_answer(back, w, MAX, &m) || m != n || memcmp(v, w, sizeof *v * (size_t)n) != 0) __builtin_trap();
    return 0;
}
