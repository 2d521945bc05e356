// bench_backward — one training step's backward pass (src/core/backward.c) against the
// forward pass of the same lesson: the largest shipped trained lesson, tiny-lm-fortunes
// (2 layers, d_model 16, 4 heads, FFN 12, 23 tokens, 18 positions). Rows: the forward's
// and the backward's time per pass, and their ratio per round (issue 38's goal: ≤ 2×).
#include <stdio.h>
#include <stdlib.h>

#include "attention.h"
#include "backward.h"
#include "bench_common.h"
#include "lesson.h"

#define REPS 41
#define INNER 400

int main(void)
{
    const char *path = "lessons/tiny-lm-fortunes.json";
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_load(&ls, path, err, sizeof err)) {
        fprintf(stderr, "bench_backward: %s\n", err);
        return 1;
    }
    double fwd[REPS], bwd[REPS], ratio[REPS];
    Trace tr;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (int k = 0; k < INNER; k++) {
            trace_init(&tr);
            if (!attn_forward(&ls.cfg, ls.w, &ls.in, &tr)) return 1;
            if (k < INNER - 1) trace_free(&tr); // the last one's trace is the backward's
        }
        double t1 = bench_now();
        for (int k = 0; k < INNER; k++) {
            Grads g;
            grads_init(&g); // (a fresh result each time, its buffers allocated as the forward's trace is)
            if (!attn_backward(&ls.cfg, ls.w, &tr, NULL, &g, path, err, sizeof err)) {
                fprintf(stderr, "bench_backward: %s\n", err);
                return 1;
            }
            grads_free(&g);
        }
        double t2 = bench_now();
        trace_free(&tr);
        fwd[r] = (t1 - t0) / INNER * 1e6, bwd[r] = (t2 - t1) / INNER * 1e6;
        ratio[r] = bwd[r] / fwd[r];
    }
    qsort(fwd, REPS, sizeof *fwd, bench_cmp);
    qsort(bwd, REPS, sizeof *bwd, bench_cmp);
    bench_info("backward: tiny-lm-fortunes forward (median)", fwd[REPS / 2], "us");
    bench_info("backward: tiny-lm-fortunes backward (median)", bwd[REPS / 2], "us");
    bench_row("backward: its time / the forward's", ratio, REPS, 2.0, "x", 1);
    lesson_free(&ls);
    return 0;
}
