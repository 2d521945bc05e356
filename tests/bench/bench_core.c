// bench_core — times the attention core's forward pass (no SDL).
// Prints a table row per case: median and p99 over repeated runs.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention.h"
#include "bench_common.h"
#include "lesson.h"

// Times `reps` batches of `inner` forward passes; returns per-pass seconds in out[].
static void time_forward(const Lesson *ls, int reps, int inner, double *out)
{
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int k = 0; k < inner; k++) {
            Trace tr;
            trace_init(&tr);
            if (!attn_forward(&ls->cfg, &ls->w, &ls->in, &tr)) {
                fprintf(stderr, "bench_core: out of memory\n");
                exit(1);
            }
            trace_free(&tr);
        }
        out[r] = (bench_now() - t0) / inner;
    }
}

static void report(const char *name, double *t, int reps, double target, const char *unit,
                   double unit_scale)
{
    for (int i = 0; i < reps; i++) t[i] *= unit_scale;
    char label[96];
    snprintf(label, sizeof label, "core forward: %s", name);
    bench_row(label, t, reps, target, unit, 1);
}

int main(void)
{
    char err[LESSON_ERR_MAX];
    Lesson small;
    if (!lesson_load(&small, "lessons/arange-2x4x4.json", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    enum { REPS = 201 };
    double t[REPS];
    time_forward(&small, REPS, 2000, t);
    report("arange 2x4x4 (B=2 L=4 C=4 H=2)", t, REPS, 2.0, "us", 1e6);

    const char *big_json = "{\"title\": \"bench\", \"model\": {\"d_model\": 256, \"n_heads\": 8},"
                           " \"input\": {\"query\": {\"shape\": [1, 256, 256], \"arange\": [-1, 1, 0.000030517578125]}},"
                           " \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}";
    Lesson big;
    if (!lesson_parse(&big, "bench-big", big_json, strlen(big_json), err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    enum { BIG_REPS = 41 };
    time_forward(&big, BIG_REPS, 1, t);
    report("B=1 L=256 C=256 H=8, causal", t, BIG_REPS, 16.0, "ms", 1e3);
    lesson_free(&small);
    lesson_free(&big);
    return 0;
}
