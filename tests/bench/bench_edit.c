// bench_edit — the what-if lab's speed: an edit → the recomputed trace → the redrawn
// frame (the first frame of the edit's animation, as the window draws it), for every
// shipped lesson and the L = 256 lesson, at 1280×720 on the software renderer; and
// scrubbing one value on the L = 256 lesson (merged edits, no animation) in frames/s.
#include <SDL.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "assets.h"
#include "bench_common.h"
#include "edit.h"
#include "heatmap.h"
#include "i18n.h"
#include "render.h"
#include "session.h"
#include "text.h"
#include "trace_ops.h"
#include "view.h"

enum { EDITS = 60 };

// Times EDITS edits of input.query[0,0,0] shown on the stage named `stage`; scrub:
// merged edits drawn straight (no in-between trace), else an animated edit's first frame.
static int bench(const char *path, const char *stage, const char *label, double target, bool scrub, Fonts *fonts,
                 SDL_Renderer *r)
{
    char err[LESSON_ERR_MAX + 200];
    Session *s = session_create(path, err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    HeatmapCache *hc = heatmap_cache_create();
    DrawList dl;
    draw_list_init(&dl);
    Canvas c = {r, fonts, hc, NULL, &dl};
    View v;
    view_init(&v, &s->lesson, LANG_EN);
    TextMeasure m = {text_measure, fonts};
    v.measure = &m;
    int st = trace_find(&s->trace, stage);
    v.stage = st >= 0 ? st : 0;
    render_frame(&c, &s->trace, &v, NULL); // warm the caches, as a window has
    static double t[EDITS];
    float x0 = s->lesson.in.query.data[0];
    for (int i = 0; i < EDITS; i++) {
        Edit e;
        edit_element(&s->lesson, LT_QUERY, 0, x0 + 0.01f * (float)(i + 1), &e);
        double t0 = bench_now();
        Trace before, mid;
        if (!session_edit(s, &e, scrub, scrub ? NULL : &before, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        v.edited = true, v.n_edits = s->log.applied, v.ref = session_original_trace(s);
        const Trace *tr = &s->trace;
        if (!scrub) { // the window's animation: an in-between trace from the old numbers
            if (!trace_clone(&mid, &s->trace)) return 1;
            trace_lerp(&mid, &before, &s->trace, 0.1f);
            tr = &mid;
        }
        heatmap_cache_flush(hc); // as the window does after an edit (numbers change in place)
        render_frame(&c, tr, &v, NULL);
        SDL_RenderFlush(r);
        t[i] = (bench_now() - t0) * 1e3;
        if (!scrub) trace_free(&mid), trace_free(&before);
    }
    if (scrub) {
        for (int i = 0; i < EDITS; i++) t[i] = 1000.0 / t[i]; // frames per second
        bench_row(label, t, EDITS, target, "fr/s", 0);
    } else {
        bench_row(label, t, EDITS, target, "ms", 1);
    }
    draw_list_free(&dl);
    heatmap_cache_destroy(hc);
    session_destroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    char err[600];
    if (!bench_strings()) return 1;
    Fonts *fonts = fonts_create(NULL, LANG_EN, err, sizeof err);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 720, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!fonts || !r) {
        fprintf(stderr, "bench_edit: %s\n", fonts ? SDL_GetError() : err);
        return 1;
    }
    glob_t g;
    int rc = glob("lessons/*.json", 0, NULL, &g) == 0 ? 0 : 1;
    for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
        char label[96];
        const char *base = strrchr(g.gl_pathv[i], '/');
        snprintf(label, sizeof label, "edit → frame, %.30s", base ? base + 1 : g.gl_pathv[i]);
        rc |= bench(g.gl_pathv[i], "attn", label, 16.0, false, fonts, r);
    }
    globfree(&g);
    rc |= bench("tests/big/long-256.json", "attn", "edit → frame, L=256", 33.0, false, fonts, r);
    rc |= bench("tests/big/long-256.json", "attn", "scrubbing a value, L=256", 30.0, true, fonts, r);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    fonts_destroy(fonts);
    i18n_free();
    return rc;
}
