// bench_presenter — presenter mode's frame time: one frame of the audience window
// (render_frame) plus one of the presenter window (presenter_draw: the audience's
// frame small, the next stage, narration, notes, steps, timer) on the software
// renderer, both 1280×720, over every frame of every transition of the default lesson.
#include <SDL.h>
#include <stdio.h>
#include <string.h>

#include "assets.h"
#include "bench_common.h"
#include "heatmap.h"
#include "i18n.h"
#include "presenter.h"
#include "render.h"
#include "session.h"
#include "text.h"
#include "view.h"

int main(int argc, char **argv)
{
    (void)argc, (void)argv;   // argv[1] is the app binary (unused here)
    char err[600];
    if (!bench_strings()) return 1;
    enum { W = 1280, H = 720, FRAMES_PER_STAGE = 48, ROUNDS = 3 };
    Session *ses = session_create("lessons/arange-2x4x4.json", err, sizeof err);
    Fonts *fonts = fonts_create(NULL, LANG_EN, err, sizeof err);
    SDL_Surface *sa = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Surface *sp = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *ra = sa ? SDL_CreateSoftwareRenderer(sa) : NULL;
    SDL_Renderer *rp = sp ? SDL_CreateSoftwareRenderer(sp) : NULL;
    Presenter *pres = rp && fonts ? presenter_create_offscreen(rp, NULL, LANG_EN, err, sizeof err) : NULL;
    HeatmapCache *hc = heatmap_cache_create();
    if (!ses || !fonts || !ra || !rp || !pres || !hc) {
        fprintf(stderr, "bench_presenter: %s %s\n", err, SDL_GetError());
        return 1;
    }
    const Trace *tr = &ses->trace;
    TextMeasure m = {text_measure, fonts};
    Overlays ov = {0};
    DrawList dl;
    draw_list_init(&dl);
    Canvas c = {ra, fonts, hc, NULL, &dl};
    static double t[TRACE_MAX_STAGES * FRAMES_PER_STAGE * ROUNDS];
    for (int projector = 0; projector <= 1; projector++) {
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        v.measure = &m;
        v.projector = projector;
        int n = 0;
        // round 0 warms the text caches (as the windows do in their first seconds)
        for (int round = 0; round <= ROUNDS; round++)
            for (int st = 0; st < tr->n; st++)
                for (int k = 1; k <= FRAMES_PER_STAGE; k++) {
                    v.stage = st;
                    v.anim = (float)k / FRAMES_PER_STAGE;
                    PresenterFrame f = {tr, &v, &ov, W, H, false, false, 0, lesson_title(&ses->lesson, LANG_EN)};
                    double t0 = bench_now();
                    render_frame(&c, tr, &v, &ov);
                    SDL_RenderFlush(ra);
                    presenter_draw(pres, &f);
                    SDL_RenderFlush(rp);
                    double dt = bench_now() - t0;
                    if (round > 0) t[n++] = dt * 1e3;
                }
        bench_row(projector ? "frame time, presenter + projector mode, 1280x720 + 1280x720"
                            : "frame time, presenter mode (both windows), 1280x720 + 1280x720",
                  t, n, 4.0, "ms", 1);
    }
    draw_list_free(&dl);
    heatmap_cache_destroy(hc);
    presenter_destroy(pres);
    fonts_flush(fonts);
    SDL_DestroyRenderer(ra);
    SDL_DestroyRenderer(rp);
    SDL_FreeSurface(sa);
    SDL_FreeSurface(sp);
    fonts_destroy(fonts);
    session_destroy(ses);
    i18n_free();
    return 0;
}
