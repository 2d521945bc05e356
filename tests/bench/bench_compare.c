// bench_compare — the compare view's speed (issue 41), at 1280×720 on the software renderer:
// a compare frame (A, B and Δ of one stage drawn) of the conventions lesson and of the induction
// lesson with its induction head zeroed; and a convention switched on every shipped lesson: B made
// again (a copy of A with the switch, every stage computed), A and B compared stage by stage, the
// compare frame drawn — what the window does when B changes. And the head-ablation table (issue 41's
// ≤ 1 s natively for the largest shipped trained lesson): every head of every shipped language model
// zeroed in turn, each a forward pass and its loss, then ranked — what --experiment ablation and the
// window's Shift+D entry compute before the table is drawn.
#include <SDL.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "compare.h"
#include "experiment.h"
#include "heatmap.h"
#include "i18n.h"
#include "render.h"
#include "session.h"
#include "text.h"
#include "view.h"

enum { REPS = 40 };

typedef struct Ctx {
    Fonts *fonts;
    SDL_Renderer *r;
} Ctx;

// B of spec against A, compared; false (said on stderr) when not.
static bool make_b(const Session *a, const char *spec, Session **b, Compare *cmp)
{
    char err[LESSON_ERR_MAX + 400];
    CompareSpec sp;
    *b = NULL;
    memset(cmp, 0, sizeof *cmp);
    if (compare_parse_spec(spec, &sp, err, sizeof err) && (*b = compare_open_b(a, NULL, &sp, err, sizeof err)) &&
        compare_traces(&a->trace, &(*b)->trace, cmp, err, sizeof err))
        return true;
    fprintf(stderr, "bench_compare: %s\n", err);
    session_destroy(*b);
    *b = NULL;
    return false;
}

// switch: B made again and compared each time (the switch's cost), else the frame alone.
static int bench(const char *path, const char *spec, const char *stage, const char *label, double target, bool remake,
                 const Ctx *x)
{
    char err[LESSON_ERR_MAX + 200];
    Session *a = session_create(path, err, sizeof err);
    if (!a) return fprintf(stderr, "%s\n", err), 1;
    Session *b;
    Compare cmp;
    if (!make_b(a, spec, &b, &cmp)) return session_destroy(a), 1;
    HeatmapCache *hc = heatmap_cache_create();
    DrawList dl;
    draw_list_init(&dl);
    Canvas c = {x->r, x->fonts, hc, NULL, &dl};
    TextMeasure m = {text_measure, x->fonts};
    View v;
    view_init(&v, &a->lesson, LANG_EN);
    v.measure = &m, v.kind = VIEW_COMPARE, v.cmp = &cmp, v.cmp_b = &b->trace, v.cmp_spec = spec;
    v.stage = trace_find(&a->trace, stage) >= 0 ? trace_find(&a->trace, stage) : 0;
    render_frame(&c, &a->trace, &v, NULL); // warm the caches, as a window has
    static double t[REPS];
    for (int i = 0; i < REPS; i++) {
        const double t0 = bench_now();
        if (remake) {
            compare_free(&cmp);
            session_destroy(b);
            if (!make_b(a, spec, &b, &cmp)) return 1;
            v.cmp_b = &b->trace;
            heatmap_cache_flush(hc); // (B's numbers are new)
        }
        render_frame(&c, &a->trace, &v, NULL);
        SDL_RenderFlush(x->r);
        t[i] = (bench_now() - t0) * 1e3;
    }
    bench_row(label, t, REPS, target, "ms", 1);
    compare_free(&cmp);
    session_destroy(b), session_destroy(a);
    draw_list_free(&dl);
    heatmap_cache_destroy(hc);
    return 0;
}

// The head-ablation table of every shipped lesson that has one (a language model), zeroed heads.
static int bench_ablation(void)
{
    glob_t g;
    if (glob("lessons/*.json", 0, NULL, &g) != 0) return 1;
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
        char err[LESSON_ERR_MAX + 200], label[96];
        Session *s = session_create(g.gl_pathv[i], err, sizeof err);
        if (!s) {
            fprintf(stderr, "%s\n", err);
            rc = 1;
            break;
        }
        if (s->lesson.n_vocab > 0 && experiment_can_ablate(&s->lesson, g.gl_pathv[i], err, sizeof err)) {
            enum { N = 5 };
            double t[N];
            for (int k = 0; k < N && !rc; k++) {
                HeadEffect *e = NULL;
                int n = 0;
                float clean;
                const double t0 = bench_now();
                if (!experiment_ablation_table(&s->lesson, ABLATE_ZERO, &e, &n, &clean, g.gl_pathv[i], err, sizeof err))
                    fprintf(stderr, "bench_compare: %s\n", err), rc = 1;
                t[k] = (bench_now() - t0) * 1e3;
                free(e);
            }
            const char *base = strrchr(g.gl_pathv[i], '/');
            snprintf(label, sizeof label, "head-ablation table, %.30s", base ? base + 1 : g.gl_pathv[i]);
            if (!rc) bench_row(label, t, N, 1000.0, "ms", 1);
        }
        session_destroy(s);
    }
    globfree(&g);
    return rc;
}

int main(void)
{
    char err[600];
    if (!bench_strings()) return 1;
    Fonts *fonts = fonts_create(NULL, LANG_EN, err, sizeof err);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 720, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!fonts || !r) {
        fprintf(stderr, "bench_compare: %s\n", fonts ? SDL_GetError() : err);
        return 1;
    }
    const Ctx x = {fonts, r};
    int rc = bench("lessons/conventions.json", "set:model.window_convention=flash", "attn",
                   "compare frame, conventions.json attn", 4.0, false, &x);
    rc |= bench("lessons/induction-heads.json", "ablate:l1.h1", "probs", "compare frame, induction-heads.json probs", 4.0,
                false, &x);
    // a convention switched: B again, the compare, its frame (every shipped lesson; the switch every
    // lesson takes: a fully masked row's zeros)
    glob_t g;
    rc |= glob("lessons/*.json", 0, NULL, &g) == 0 ? 0 : 1;
    for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
        char label[96];
        const char *base = strrchr(g.gl_pathv[i], '/');
        snprintf(label, sizeof label, "convention switch → A|B|Δ frame, %.24s", base ? base + 1 : g.gl_pathv[i]);
        rc |= bench(g.gl_pathv[i], "set:model.masked_rows=zero", "attn", label, 33.0, true, &x);
    }
    globfree(&g);
    rc |= bench_ablation();
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    fonts_destroy(fonts);
    i18n_free();
    return rc;
}
