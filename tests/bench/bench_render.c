// bench_render — interactive frame time: render_frame of animated frames of the
// default lesson on the software renderer, at 1280×720, 1920×1080 and 3840×2160;
// and in projector mode (every part of a stage shown in parts) at 1920×1080 and
// 3840×2160, the projectors' sizes.
#include <SDL.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "assets.h"
#include "bench_common.h"
#include "heatmap.h"
#include "i18n.h"
#include "layout.h"
#include "render.h"
#include "session.h"
#include "text.h"
#include "view.h"

static int bench_size(const char *name, const Lesson *ls, const Trace *tr, Fonts *fonts, int w, int h,
                      double target, bool projector)
{
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *r = s ? SDL_CreateSoftwareRenderer(s) : NULL;
    if (!r) {
        fprintf(stderr, "bench_render: %s\n", SDL_GetError());
        return 1;
    }
    View v;
    view_init(&v, ls, LANG_EN);
    if (projector) v.projector = true, v.palette = PALETTE_HIGH_CONTRAST; // as M turns it on
    HeatmapCache *hc = heatmap_cache_create();   // as the window does
    DrawList dl;
    draw_list_init(&dl);
    Canvas c = {r, fonts, hc, NULL, &dl};
    enum { FRAMES_PER_STAGE = 48, ROUNDS = 3 };
    static double t[TRACE_MAX_STAGES * FRAMES_PER_STAGE * ROUNDS * ROUNDS];
    int n = 0;
    // round 0 warms the text cache (as a window does in its first seconds)
    for (int round = 0; round <= ROUNDS; round++)
        for (int st = 0; st < tr->n; st++) {
            v.stage = st, v.part = 0;
            int parts = layout_projector_parts(tr, &v, w, h); // (1 without projector mode)
            for (int part = 0; part < parts && part < ROUNDS; part++)
                for (int k = 1; k <= FRAMES_PER_STAGE; k++) {
                    v.part = part;
                    v.anim = (float)k / FRAMES_PER_STAGE;   // every frame of the transition
                    double t0 = bench_now();
                    render_frame(&c, tr, &v, NULL);
                    SDL_RenderFlush(r);
                    double dt = bench_now() - t0;
                    if (round > 0 && n < (int)(sizeof t / sizeof t[0])) t[n++] = dt * 1e3;
                }
        }
    char label[96];
    snprintf(label, sizeof label, "frame time, %s, %dx%d", name, w, h);
    bench_row(label, t, n, target, "ms", 1);
    draw_list_free(&dl);
    heatmap_cache_destroy(hc);
    fonts_flush(fonts);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(s);
    return 0;
}

static int bench_lesson(const char *path, const char *name, int w, int h, double target, Fonts *fonts, bool projector)
{
    char err[LESSON_ERR_MAX];
    Session *ses = session_create(path, err, sizeof err);
    if (!ses) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int rc = bench_size(name, &ses->lesson, &ses->trace, fonts, w, h, target, projector);
    session_destroy(ses);
    return rc;
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;   // argv[1] is the app binary (unused here)
    char err[600];
    if (!bench_strings()) return 1;
    Fonts *fonts = fonts_create(NULL, LANG_EN, err, sizeof err);
    if (!fonts) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    // every frame of every transition, software renderer (what the window and export use)
    int rc = bench_lesson("lessons/arange-2x4x4.json", "animated, arange", 1280, 720, 2.0, fonts, false);
    rc |= bench_lesson("lessons/arange-2x4x4.json", "animated, arange", 1920, 1080, 4.0, fonts, false);
    rc |= bench_lesson("lessons/arange-2x4x4.json", "animated, arange", 3840, 2160, 16.0, fonts, false); // a 4K projector
    rc |= bench_lesson("tests/big/long-256.json", "animated, L=256 (images)", 1280, 720, 16.0, fonts, false);
    // projector mode (M), every part of every stage, at the projectors' sizes (issue 23)
    rc |= bench_lesson("lessons/arange-2x4x4.json", "projector mode, animated, arange", 1920, 1080, 4.0, fonts, true);
    rc |= bench_lesson("lessons/arange-2x4x4.json", "projector mode, animated, arange", 3840, 2160, 16.0, fonts, true);
    fonts_destroy(fonts);
    i18n_free();
    return rc;
}
