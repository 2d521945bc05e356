// test_render.c — the drawing path without a display: colormap, playback,
// layout geometry, i18n, tooltips, PNG writing, and render_frame's pixels on
// the software renderer for every stage of every lesson at two sizes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <SDL.h>
#include <glob.h>
#include <math.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli.h"
#include "colormap.h"
#include "explain.h"
#include "i18n.h"
#include "layout.h"
#include "playback.h"
#include "app/png_write.h"
#include "render.h"
#include "text.h"
#include "view.h"

static Fonts *fonts;

static int setup(void **state)
{
    (void)state;
    char err[600];
    if (!i18n_load("assets", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    fonts = fonts_create(NULL, LANG_EN, err, sizeof err);
    if (!fonts) fprintf(stderr, "%s\n", err);
    return fonts ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fonts_destroy(fonts);
    i18n_free();
    return 0;
}

// ---- colormap -----------------------------------------------------------------

static void test_colormap_diverging(void **state)
{
    (void)state;
    for (int p = 0; p < PALETTE_COUNT; p++) {
        Rgb c = colormap_diverging((Palette)p, 0.0f);
        assert_true(c.r > 235 && c.g > 235 && c.b > 235); // white-ish centre
        // luminance rises towards 0 from both ends, strictly at the ends
        float prev = colormap_luminance(colormap_diverging((Palette)p, -1.0f));
        for (int i = -19; i <= 0; i++) {
            float l = colormap_luminance(colormap_diverging((Palette)p, (float)i / 20.0f));
            assert_true(l >= prev - 1e-4f);
            prev = l;
        }
        for (int i = 1; i <= 20; i++) {
            float l = colormap_luminance(colormap_diverging((Palette)p, (float)i / 20.0f));
            assert_true(l <= prev + 1e-4f);
            prev = l;
        }
        // the two ends have different hues (blue vs red / purple vs orange)
        Rgb lo = colormap_diverging((Palette)p, -1.0f), hi = colormap_diverging((Palette)p, 1.0f);
        assert_true(lo.b > lo.r && hi.r > hi.b);
        // clamping and NaN
        ColorScale cs = {(Palette)p, false, -2.0f, 2.0f};
        Rgb a = colormap_value(&cs, -100.0f), b = colormap_value(&cs, -INFINITY);
        assert_memory_equal(&a, &lo, sizeof a);
        assert_memory_equal(&b, &lo, sizeof b);
        Rgb n = colormap_value(&cs, NAN), nan = colormap_nan();
        assert_memory_equal(&n, &nan, sizeof n);
    }
}

static void test_colormap_sequential(void **state)
{
    (void)state;
    for (int p = 0; p < PALETTE_COUNT; p++) {
        float l0 = colormap_luminance(colormap_sequential((Palette)p, 0.0f));
        float l1 = colormap_luminance(colormap_sequential((Palette)p, 1.0f));
        float sign = l1 > l0 ? 1.0f : -1.0f;
        assert_true(fabsf(l1 - l0) > 0.5f);
        float prev = l0;
        for (int i = 1; i <= 40; i++) { // monotone in luminance
            float l = colormap_luminance(colormap_sequential((Palette)p, (float)i / 40.0f));
            assert_true(sign * (l - prev) >= -1e-4f);
            prev = l;
        }
    }
}

static float contrast(Rgb a, Rgb b)
{
    float la = colormap_luminance(a) + 0.05f, lb = colormap_luminance(b) + 0.05f;
    return la > lb ? la / lb : lb / la;
}

static void test_colormap_text(void **state)
{
    (void)state;
    Rgb black = {0, 0, 0}, white = {255, 255, 255};
    for (int p = 0; p < PALETTE_COUNT; p++)
        for (int i = 0; i <= 100; i++) {
            float t = (float)i / 100.0f;
            Rgb cs[] = {colormap_sequential((Palette)p, t), colormap_diverging((Palette)p, 2 * t - 1),
                        colormap_masked(), colormap_nan()};
            for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
                Rgb text = colormap_text_dark(cs[k]) ? black : white;
                assert_true(contrast(text, cs[k]) >= 4.5f); // WCAG AA for every cell colour
            }
        }
    // masked and NaN looks differ from each other and from the diverging centre
    assert_true(contrast(colormap_masked(), colormap_nan()) > 2.0f);
    assert_true(contrast(colormap_masked(), colormap_diverging(PALETTE_BLUE_RED, 0.0f)) > 1.5f);
}

// ---- playback -----------------------------------------------------------------

static void test_playback(void **state)
{
    (void)state;
    assert_float_equal(ease_in_out_cubic(0.0f), 0.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(1.0f), 1.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(0.5f), 0.5f, 1e-6);
    assert_float_equal(ease_in_out_cubic(-3.0f), 0.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(7.0f), 1.0f, 1e-6);
    assert_float_equal(ease_out_cubic(0.0f), 0.0f, 1e-6);
    assert_float_equal(ease_out_cubic(1.0f), 1.0f, 1e-6);
    float prev = 0.0f;
    for (int i = 1; i <= 100; i++) {
        float y = ease_in_out_cubic((float)i / 100.0f);
        assert_true(y >= prev);
        prev = y;
    }
    for (int i = 0; i < 5; i++) {
        assert_float_equal(ease_stagger(0.0f, i, 5, 0.3f), 0.0f, 1e-6);
        assert_float_equal(ease_stagger(1.0f, i, 5, 0.3f), 1.0f, 1e-6);
    }
    Playback pb;
    playback_init(&pb, 5);
    assert_int_equal(pb.stage, 0);
    assert_false(playback_animating(&pb));
    playback_prev(&pb);
    assert_int_equal(pb.stage, 0); // clamped
    playback_goto(&pb, 99, true);
    assert_int_equal(pb.stage, 4);
    playback_goto(&pb, -7, false);
    assert_int_equal(pb.stage, 0);
    playback_next(&pb);
    assert_int_equal(pb.stage, 1);
    assert_true(playback_animating(&pb));
    assert_float_equal(playback_progress(&pb), 0.0f, 1e-6);
    for (int i = 0; i < 100; i++) playback_update(&pb, 0.1);
    assert_int_equal(pb.stage, 1); // paused: no auto-advance
    assert_float_equal(playback_progress(&pb), 1.0f, 1e-6);
    playback_toggle(&pb);
    assert_true(pb.playing);
    for (int i = 0; i < 1000; i++) playback_update(&pb, 0.1);
    assert_int_equal(pb.stage, 4); // played to the end, then stopped
    assert_false(pb.playing);
    playback_toggle(&pb); // at the end, play restarts
    assert_int_equal(pb.stage, 0);
    playback_set_speed(&pb, 100.0f);
    assert_float_equal(pb.speed, PLAYBACK_MAX_SPEED, 1e-6);
    playback_set_speed(&pb, 0.0f);
    assert_float_equal(pb.speed, PLAYBACK_MIN_SPEED, 1e-6);
    // time-based: two frame rates reach the same state
    Playback a, b;
    playback_init(&a, 3), playback_init(&b, 3);
    playback_next(&a), playback_next(&b);
    for (int i = 0; i < 10; i++) playback_update(&a, 0.1);
    for (int i = 0; i < 100; i++) playback_update(&b, 0.01);
    assert_float_equal(playback_progress(&a), playback_progress(&b), 1e-4);
}

// ---- i18n and tooltips ----------------------------------------------------------

static void test_i18n(void **state)
{
    (void)state;
    assert_string_equal(i18n_get(LANG_EN, "ui.batch"), "Batch");
    assert_string_equal(i18n_get(LANG_EN, "no.such.key"), "no.such.key");
    const char zh[] = "# test\nui.batch = 批次\nhelp.x = a\\nb\n";
    char err[200];
    assert_true(i18n_parse(LANG_ZH, "zh-test", zh, sizeof zh - 1, err, sizeof err));
    assert_string_equal(i18n_get(LANG_ZH, "ui.batch"), "批次");
    assert_string_equal(i18n_get(LANG_ZH, "help.x"), "a\nb");
    assert_string_equal(i18n_get(LANG_ZH, "ui.head"), "Head"); // falls back to English
    assert_false(i18n_parse(LANG_ZH, "zh-bad", "oops\n", 5, err, sizeof err));
    assert_non_null(strstr(err, "zh-bad:1"));
    char out[64];
    const char *args[] = {"A", "BB"};
    i18n_format(out, sizeof out, "x{2}y{1}z{3}", 2, args);
    assert_string_equal(out, "xBByAz");
    i18n_format(out, 5, "αβγδ", 0, NULL); // never cuts a UTF-8 sequence
    assert_string_equal(out, "αβ");
    // every key of en.txt that the code uses resolves (spot check)
    const char *keys[] = {"step.input", "step.ffn", "help.body", "ui.legend", "tip.scores", "narr.attn",
                          "title.ffn_out", "wname.output", "app.saved"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_string_not_equal(i18n_get(LANG_EN, keys[i]), keys[i]);
}

static bool load(const char *path, Lesson *ls, Trace *tr)
{
    return cli_load_and_forward(path, ls, tr, stderr);
}

static void test_explain(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    View v;
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "scores");
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.result_panel >= 0);
    char tip[1024];
    explain_cell(&tr, &v, &L, L.result_panel, 1, 2, tip, sizeof tip);
    assert_non_null(strstr(tip, "/ 1.41"));  // the actual scale
    assert_non_null(strstr(tip, "×"));       // terms written out
    char want[32];
    explain_number(tr.stages[v.stage].t.data[1 * 4 + 2], want, sizeof want);
    assert_non_null(strstr(tip, want));
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    explain_cell(&tr, &v, &L, L.result_panel, 0, 0, tip, sizeof tip);
    assert_non_null(strstr(tip, "exp("));
    v.stage = trace_find(&tr, "q_proj");
    layout_compute(&L, &tr, &v, 1280, 720);
    explain_cell(&tr, &v, &L, L.result_panel, 0, 0, tip, sizeof tip);
    assert_non_null(strstr(tip, "W["));
    trace_free(&tr);
    lesson_free(&ls);

    assert_true(load("tests/ref/masked-row-neginf.lesson.json", &ls, &tr));
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    const PanelSpec *ps = &L.spec[L.result_panel];
    bool found = false;
    for (int h = 0; h < tr.n_heads && !found; h++)
        for (int b = 0; b < tr.batch && !found; b++) {
            v.batch = b, v.head = h;
            layout_compute(&L, &tr, &v, 1280, 720);
            ps = &L.spec[L.result_panel];
            for (int i = 0; i < ps->rows && !found; i++)
                if (isnan(panel_value(ps, i, 0))) {
                    explain_cell(&tr, &v, &L, L.result_panel, i, 0, tip, sizeof tip);
                    assert_non_null(strstr(tip, "NaN"));
                    found = true;
                }
        }
    assert_true(found); // the lesson has a NaN row
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- lessons used by layout and pixel tests ---------------------------------------

static glob_t lesson_files(void)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    glob("tests/ref/*.lesson.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 2);
    return g;
}

static void check_inside(Rect r, int w, int h, const char *what, const char *lesson, int stage)
{
    if (r.w <= 0 || r.h <= 0) return;
    if (r.x < 0 || r.y < 0 || r.x + r.w > w || r.y + r.h > h)
        fail_msg("%s stage %d: %s (%d,%d %dx%d) outside %dx%d", lesson, stage, what, r.x, r.y, r.w, r.h, w, h);
}

static void test_layout(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    const int sizes[][2] = {{1280, 720}, {800, 600}, {1920, 1080}, {640, 400}, {2560, 1440}};
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        View v;
        view_init(&v, &ls, LANG_EN);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int w = sizes[z][0], h = sizes[z][1];
            for (int s = 0; s < tr.n; s++) {
                v.stage = s;
                Layout L;
                layout_compute(&L, &tr, &v, w, h);
                const char *name = g.gl_pathv[f];
                assert_true(L.n_panels >= 1);
                assert_true(L.result_panel >= 0 && L.spec[L.result_panel].result);
                // fixed regions inside and apart
                Rect fixed[] = {L.timeline, L.tabs, L.header, L.area, L.narration, L.legend};
                for (size_t i = 0; i < 6; i++) {
                    check_inside(fixed[i], w, h, "region", name, s);
                    for (size_t j = i + 1; j < 6; j++)
                        if (rect_overlap(fixed[i], fixed[j]))
                            fail_msg("%s stage %d at %dx%d: regions %zu and %zu overlap", name, s, w, h, i, j);
                }
                for (int i = 0; i < L.n_steps; i++) {
                    check_inside(L.step_rect[i], w, h, "step", name, s);
                    for (int j = i + 1; j < L.n_steps; j++) assert_false(rect_overlap(L.step_rect[i], L.step_rect[j]));
                }
                // heatmaps: inside the area, not overlapping each other or their captions
                for (int p = 0; p < L.n_panels; p++) {
                    Rect a = L.panel[p];
                    if (a.x < L.area.x || a.y < L.area.y || a.x + a.w > L.area.x + L.area.w ||
                        a.y + a.h > L.area.y + L.area.h)
                        fail_msg("%s stage %d at %dx%d: panel %d (%d,%d %dx%d) outside the area (%d,%d %dx%d)", name,
                                 s, w, h, p, a.x, a.y, a.w, a.h, L.area.x, L.area.y, L.area.w, L.area.h);
                    for (int q = 0; q < L.n_panels; q++) {
                        if (q != p && rect_overlap(L.panel[p], L.panel[q]))
                            fail_msg("%s stage %d at %dx%d: panels %d and %d overlap", name, s, w, h, p, q);
                        if (rect_overlap(L.panel[p], L.caption[q]))
                            fail_msg("%s stage %d at %dx%d: panel %d overlaps caption %d", name, s, w, h, p, q);
                    }
                    assert_true(L.cell[p] >= 1);
                    // cells tile the panel
                    Rect c0, c1;
                    const PanelSpec *ps = &L.spec[p];
                    assert_true(layout_cell_rect(&L, p, 0, 0, &c0));
                    assert_true(layout_cell_rect(&L, p, ps->shown_rows - 1, ps->shown_cols - 1, &c1));
                    assert_int_equal(c0.x, a.x);
                    assert_int_equal(c0.y, a.y);
                    assert_int_equal(c1.x + c1.w, a.x + a.w);
                    assert_int_equal(c1.y + c1.h, a.y + a.h);
                    assert_false(layout_cell_rect(&L, p, ps->shown_rows, 0, &c0));
                    int hp, hr, hc;
                    assert_true(layout_hit_cell(&L, c1.x + c1.w / 2, c1.y + c1.h / 2, &hp, &hr, &hc));
                    assert_int_equal(hp, p);
                    assert_int_equal(hr, ps->shown_rows - 1);
                    assert_int_equal(hc, ps->shown_cols - 1);
                }
                // the timeline hit-test finds each step
                for (int i = 0; i < L.n_steps; i++)
                    assert_int_equal(layout_hit_step(&L, L.step_rect[i].x + 2, L.step_rect[i].y + 2), (int)L.step_id[i]);
                if (w >= 800) { // readable: cells of the result at least 14 px at projector sizes
                    assert_true(L.cell[L.result_panel] >= 14);
                    for (int i = 0; i < L.n_batch_tabs; i++) check_inside(L.batch_tab[i], w, h, "tab", name, s);
                    for (int i = 0; i < L.n_head_tabs; i++) check_inside(L.head_tab[i], w, h, "tab", name, s);
                }
            }
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
}

// ---- pixels ---------------------------------------------------------------------

#define GUARD 8
#define GUARD_BYTE 0xA5

typedef struct Target {
    unsigned char *buf; // (h + 2·GUARD) rows of (w + 2·GUARD) pixels
    int w, h, bpitch;
    SDL_Surface *s;     // the inner w×h window of buf
    SDL_Renderer *r;
} Target;

static void target_init(Target *t, int w, int h)
{
    t->w = w, t->h = h;
    t->bpitch = (w + 2 * GUARD) * 4;
    t->buf = malloc((size_t)t->bpitch * (size_t)(h + 2 * GUARD));
    assert_non_null(t->buf);
    memset(t->buf, GUARD_BYTE, (size_t)t->bpitch * (size_t)(h + 2 * GUARD));
    t->s = SDL_CreateRGBSurfaceWithFormatFrom(t->buf + (size_t)GUARD * (size_t)t->bpitch + GUARD * 4, w, h, 32,
                                              t->bpitch, SDL_PIXELFORMAT_RGBA32);
    assert_non_null(t->s);
    t->r = SDL_CreateSoftwareRenderer(t->s);
    assert_non_null(t->r);
}

static void target_free(Target *t)
{
    fonts_flush(fonts);
    SDL_DestroyRenderer(t->r);
    SDL_FreeSurface(t->s);
    free(t->buf);
}

static void check_guard(const Target *t, const char *what)
{
    for (int y = 0; y < t->h + 2 * GUARD; y++) {
        const unsigned char *row = t->buf + (size_t)y * (size_t)t->bpitch;
        bool inner_row = y >= GUARD && y < GUARD + t->h;
        for (int x = 0; x < (t->w + 2 * GUARD) * 4; x++) {
            if (inner_row && x >= GUARD * 4 && x < (GUARD + t->w) * 4) continue;
            if (row[x] != GUARD_BYTE) fail_msg("%s: drew outside the target at byte %d of guard row %d", what, x, y);
        }
    }
}

static Rgb pixel(const Target *t, int x, int y)
{
    const unsigned char *p = (const unsigned char *)t->s->pixels + (size_t)y * (size_t)t->s->pitch + (size_t)x * 4;
    return (Rgb){p[0], p[1], p[2]};
}

static bool near(Rgb a, Rgb b, int tol)
{
    return abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol;
}

// Every cell's corner inset shows the colormap colour of its value (or the masked / NaN look).
static void check_cells(const Target *t, const Layout *L, const char *what)
{
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        for (int i = 0; i < ps->shown_rows; i++)
            for (int j = 0; j < ps->shown_cols; j++) {
                Rect c;
                assert_true(layout_cell_rect(L, p, i, j, &c));
                if (c.w < 4) continue;
                int g = render_cell_gap(c.w);
                Rgb want = render_cell_color(ps, i, j);
                CellLook look = render_cell_look(ps, i, j);
                float v = panel_value(ps, i, j);
                if (isnan(v) && !(ps->mask && ps->mask[(size_t)i * (size_t)ps->cols + (size_t)j] == 0.0f))
                    assert_int_equal(look, CELL_NAN);
                if (ps->mask && ps->mask[(size_t)i * (size_t)ps->cols + (size_t)j] == 0.0f)
                    assert_int_equal(look, CELL_MASKED);
                Rgb got = pixel(t, c.x + g + 1, c.y + g + 1);
                if (!near(got, want, 2))
                    fail_msg("%s: panel %d cell (%d,%d) = %g: pixel %d,%d,%d, want %d,%d,%d (look %d)", what, p, i, j,
                             (double)v, got.r, got.g, got.b, want.r, want.g, want.b, (int)look);
                if (look == CELL_VALUE) { // the colour is the colormap's, not a special look
                    Rgb cm = colormap_value(&ps->scale, v);
                    assert_memory_equal(&cm, &want, sizeof cm);
                }
            }
    }
}

static void test_render_all_lessons(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    const int sizes[][2] = {{1280, 720}, {800, 600}};
    int frames = 0;
    for (size_t z = 0; z < 2; z++) {
        Target t;
        target_init(&t, sizes[z][0], sizes[z][1]);
        for (size_t f = 0; f < g.gl_pathc; f++) {
            Lesson ls;
            Trace tr;
            assert_true(load(g.gl_pathv[f], &ls, &tr));
            View v;
            view_init(&v, &ls, LANG_EN);
            for (int s = 0; s < tr.n; s++)
                for (int hb = 0; hb < 2; hb++) {
                    v.stage = s;
                    v.head = hb ? tr.n_heads - 1 : 0;
                    v.batch = hb ? tr.batch - 1 : 0;
                    Layout L;
                    layout_compute(&L, &tr, &v, t.w, t.h);
                    char what[300];
                    for (int values = 0; values < 2; values++) {
                        v.show_values = values;
                        v.anim = 1.0f;
                        render_frame(t.r, fonts, &tr, &v);
                        snprintf(what, sizeof what, "%s %dx%d stage %s b%d h%d values %d", g.gl_pathv[f], t.w, t.h,
                                 tr.stages[s].name, v.batch, v.head, values);
                        check_cells(&t, &L, what);
                        frames++;
                    }
                    // mid-animation frames draw too, inside the target
                    v.anim = 0.4f;
                    render_frame(t.r, fonts, &tr, &v);
                    check_guard(&t, what);
                }
            trace_free(&tr);
            lesson_free(&ls);
        }
        target_free(&t);
    }
    assert_true(frames > 100);
    globfree(&g);
}

static void test_render_overlays_and_determinism(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("tests/ref/per-head-causal-neginf.lesson.json", &ls, &tr));
    Target a, b;
    target_init(&a, 1280, 720);
    View v;
    view_init(&v, &ls, LANG_EN);
    size_t bytes = (size_t)a.bpitch * (size_t)(a.h + 2 * GUARD);
    unsigned char *copy = malloc(bytes);
    assert_non_null(copy);
    for (int s = 0; s < tr.n; s++) {
        v.stage = s;
        for (int k = 0; k <= 4; k++) {
            v.anim = (float)k / 4.0f;
            render_frame(a.r, fonts, &tr, &v); // may fill the text cache
            memcpy(copy, a.buf, bytes);
            render_frame(a.r, fonts, &tr, &v); // from the cache: same pixels
            assert_memory_equal(copy, a.buf, bytes);
        }
    }
    // a different renderer (fresh cache) gives the same pixels too
    v.stage = trace_find(&tr, "masked_scores");
    v.anim = 0.5f;
    render_frame(a.r, fonts, &tr, &v);
    memcpy(copy, a.buf, bytes);
    target_free(&a);
    target_init(&b, 1280, 720);
    render_frame(b.r, fonts, &tr, &v);
    assert_memory_equal(copy, b.buf, bytes);
    // help overlay and a hover tooltip change the frame and stay inside it
    v.anim = 1.0f;
    render_frame(b.r, fonts, &tr, &v);
    memcpy(copy, b.buf, bytes);
    v.help = true;
    render_frame(b.r, fonts, &tr, &v);
    check_guard(&b, "help");
    assert_memory_not_equal(copy, b.buf, bytes);
    v.help = false;
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    Rect c;
    assert_true(layout_cell_rect(&L, L.result_panel, 1, 0, &c));
    v.hover = true, v.mouse_x = c.x + c.w / 2, v.mouse_y = c.y + c.h / 2;
    render_frame(b.r, fonts, &tr, &v);
    check_guard(&b, "tooltip");
    assert_memory_not_equal(copy, b.buf, bytes);
    // corners: hovering the last cell near the window edge keeps the tooltip inside
    v.mouse_x = 1279, v.mouse_y = 719;
    render_frame(b.r, fonts, &tr, &v);
    check_guard(&b, "tooltip at the corner");
    v.hover = false;
    v.toast = "Saved /tmp/attnviz-0001-input.png";
    v.toast_alpha = 1.0f;
    render_frame(b.r, fonts, &tr, &v);
    check_guard(&b, "toast");
    // the text cache is hit once warm: a settled frame renders no new text
    TextStats s0 = text_stats(fonts);
    render_frame(b.r, fonts, &tr, &v);
    TextStats s1 = text_stats(fonts);
    assert_int_equal(s1.misses, s0.misses);
    free(copy);
    target_free(&b);
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- PNG ------------------------------------------------------------------------

static void test_png_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-png-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], err[300];
    snprintf(path, sizeof path, "%s/a.png", dir);
    enum { W = 5, H = 3, PITCH = W * 4 + 8 };
    unsigned char px[PITCH * H];
    for (int i = 0; i < PITCH * H; i++) px[i] = (unsigned char)(i * 7);
    for (int y = 0; y < H; y++)   // frames are opaque: the encoder keeps R, G, B
        for (int x = 0; x < W; x++) px[y * PITCH + x * 4 + 3] = 255;
    assert_true(png_write_rgba(path, px, W, H, PITCH, 6, err, sizeof err));
    // decode and compare
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    spng_ctx *ctx = spng_ctx_new(0);
    spng_set_png_file(ctx, f);
    struct spng_ihdr ih;
    assert_int_equal(spng_get_ihdr(ctx, &ih), 0);
    assert_int_equal(ih.width, W);
    assert_int_equal(ih.height, H);
    assert_int_equal(ih.color_type, SPNG_COLOR_TYPE_TRUECOLOR);
    unsigned char out[W * 4 * H];
    assert_int_equal(spng_decode_image(ctx, out, sizeof out, SPNG_FMT_RGBA8, 0), 0);
    for (int y = 0; y < H; y++) assert_memory_equal(out + y * W * 4, px + y * PITCH, W * 4);
    spng_ctx_free(ctx);
    fclose(f);
    // only the final file is left (no temporaries)
    glob_t g;
    char pat[128];
    snprintf(pat, sizeof pat, "%s/*", dir);
    assert_int_equal(glob(pat, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    globfree(&g);
    remove(path);
    // a missing directory: false, one line naming the path
    snprintf(path, sizeof path, "%s/no/such/dir/b.png", dir);
    assert_false(png_write_rgba(path, px, W, H, PITCH, 6, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_null(strchr(err, '\n'));
    rmdir(dir);
}

int main(void)
{
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colormap_diverging),
        cmocka_unit_test(test_colormap_sequential),
        cmocka_unit_test(test_colormap_text),
        cmocka_unit_test(test_playback),
        cmocka_unit_test(test_i18n),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_render_all_lessons),
        cmocka_unit_test(test_render_overlays_and_determinism),
        cmocka_unit_test(test_png_write),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
