// libFuzzer target: the progress file's reader (progress_parse, what progress_load
// runs on the file's bytes) and, on what it accepts, the writer: the scores read
// (0 <= right <= answered <= total), a study's answers restored and recorded for a
// lesson, the file's text written (progress_text) — which the reader must accept
// again (or the writer refuses, past 8 MiB), with the other lessons' scores as
// they were. Build and run: make fuzz.
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/progress.h"

#ifndef FUZZ_PROGRESS_ENTRY
#define FUZZ_PROGRESS_ENTRY LLVMFuzzerTestOneInput
#endif

static Study fuzz_study; // three questions, ids as the generated ones

int FUZZ_PROGRESS_ENTRY(const uint8_t *data, size_t size);

int FUZZ_PROGRESS_ENTRY(const uint8_t *data, size_t size)
{
    const char *why = NULL;
    Progress p = {0};
    p.root = progress_parse((const char *)data, size, &why);
    if (!p.root) {
        if (!why || !why[0]) __builtin_trap();
        return 0;
    }
    snprintf(p.path, sizeof p.path, "fuzz-progress.json");
    // every lesson's score is within bounds
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(p.root, "lessons");
    enum { KEPT = 8 };
    const char *keys[KEPT];
    int score[KEPT][4], n_keys = 0, checked = 0;
    for (const cJSON *l = ls ? ls->child : NULL; l && checked < 64; l = l->next, checked++) {
        int r, a, t;
        bool has = l->string && progress_score(&p, l->string, &r, &a, &t);
        if (has && !(0 <= r && r <= a && a <= t && t <= 1000000)) __builtin_trap();
        if (l->string && strcmp(l->string, "/fuzz/lesson.json") != 0 && n_keys < KEPT) {
            keys[n_keys] = l->string;
            score[n_keys][0] = has, score[n_keys][1] = has ? r : 0, score[n_keys][2] = has ? a : 0;
            score[n_keys][3] = has ? t : 0;
            n_keys++;
        }
    }
    // restore a study from the first lesson (any key), record it for another, write
    memset(&fuzz_study, 0, sizeof fuzz_study);
    fuzz_study.n = 3;
    snprintf(fuzz_study.q[0].id, sizeof fuzz_study.q[0].id, "q_proj-shape");
    snprintf(fuzz_study.q[1].id, sizeof fuzz_study.q[1].id, "attn-argmax-b0-h0-1");
    snprintf(fuzz_study.q[2].id, sizeof fuzz_study.q[2].id, "scores-value-b0-h0-2");
    const char *first = ls && ls->child ? ls->child->string : NULL;
    if (first) progress_restore(&p, first, &fuzz_study);
    fuzz_study.a[0].answered = true, fuzz_study.a[0].right = true;
    snprintf(fuzz_study.a[0].given, sizeof fuzz_study.a[0].given, "2x4x4");
    if (!progress_record(&p, "/fuzz/lesson.json", &fuzz_study, "attn", "fuzz")) {
        progress_free(&p);
        return 0; // (out of memory)
    }
    char err[1400];
    char *text = progress_text(&p, err, sizeof err);
    if (!text) {
        if (!strstr(err, "8 MiB") && !strstr(err, "out of memory")) __builtin_trap();
        progress_free(&p);
        return 0;
    }
    size_t len = strlen(text);
    if (len > PROGRESS_MAX_BYTES) __builtin_trap();
    Progress back = {0};
    back.root = progress_parse(text, len, &why);
    if (!back.root) __builtin_trap(); // the writer wrote what its reader rejects
    int r, a, t;
    if (!progress_score(&back, "/fuzz/lesson.json", &r, &a, &t) || a < 1) __builtin_trap();
    for (int k = 0; k < n_keys; k++) { // the other lessons as they were
        bool has = progress_score(&back, keys[k], &r, &a, &t);
        if (has != (score[k][0] != 0) || (has && (r != score[k][1] || a != score[k][2] || t != score[k][3])))
            __builtin_trap();
    }
    progress_free(&back);
    free(text);
    progress_free(&p);
    return 0;
}
