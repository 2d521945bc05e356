// web_bench.c — the page's core timed for make bench-web (tests/bench/bench_web.mjs): the
// forward pass of a lesson the bench hands over (bench_core --lesson-json writes it, the
// native side of the same comparison), on the page's one thread; and the bytes malloc holds
// (the bench's memory row).
#include <emscripten.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "lesson.h"
#include "web.h"

// n forward passes of the lesson `json`: their times in ms, space-separated (the caller frees
// it), or "error: …" (the lesson's one line); NULL without memory.
EMSCRIPTEN_KEEPALIVE char *attnviz_bench_forward(const char *json, int n)
{
    enum { OUT = 32 * 1024 };
    char *out = malloc(OUT), err[LESSON_ERR_MAX];
    if (!out) return NULL;
    Lesson ls;
    if (!lesson_parse(&ls, "bench", json, strlen(json), err, sizeof err)) {
        snprintf(out, OUT, "error: %s", err);
        return out;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used + 32 < OUT; i++) {
        Trace tr;
        trace_init(&tr);
        const double t0 = emscripten_get_now();
        const bool ok = attn_forward(&ls.cfg, ls.w, &ls.in, &tr);
        const double ms = emscripten_get_now() - t0;
        trace_free(&tr);
        if (!ok) {
            snprintf(out, OUT, "error: out of memory");
            break;
        }
        used += (size_t)snprintf(out + used, OUT - used, i ? " %.4f" : "%.4f", ms);
    }
    lesson_free(&ls);
    return out;
}

// The bytes malloc holds now (what the page's heap would grow by, were they leaked).
EMSCRIPTEN_KEEPALIVE double attnviz_heap_used(void) { return (double)mallinfo().uordblks; }
