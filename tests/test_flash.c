// test_flash.c — nothing flashes more than three times a second (WCAG 2.3.1, the general
// flash threshold; issue 40, item 3), on the drawing path the window and the page share.
//
// A lesson plays (P) at the fastest speed (+ to PLAYBACK_MAX_SPEED) from its first stage to
// its last, as the window does it: playback_update every 1/30 s, a new stage on the head its
// narration is about, render_frame on the software renderer; each frame's relative luminance
// (sRGB, WCAG's formula) goes to a flash meter. A pixel's transition is a change of its
// luminance by 0.1 or more (10 % of the maximum) against the last extreme, the darker of the
// two below 0.8; a flash is a pair of opposing transitions, so more than three flashes in a
// second are 7 or more transitions within one second. The frame fails when the pixels doing
// so at once cover 25 % of a 10° visual field or more: WCAG's 341 × 256 px at 1024 × 768,
// scaled to the frame (counted over the whole frame, not a 10° window: stricter). The meter
// itself is checked first on made-up sequences it must pass and fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <SDL.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"
#include "playback.h"
#include "render.h"
#include "scene.h"
#include "session.h"
#include "trace.h"
#include "view.h"
#include "draw_support.h"

#define FPS 30
#define KEEP 8 // transitions remembered per pixel (7 within a second is the failure)

typedef struct FlashMeter {
    int w, h;
    float *ext;       // each pixel's last extreme luminance
    signed char *dir; // its direction since: +1 rising, -1 falling, 0 not yet moved
    float *lo, *hi;   // before its first transition: the range seen
    double *times;    // its last KEEP transitions' times (a ring), seconds
    unsigned char *n; // how many of them are kept (≤ KEEP)
    unsigned char *at; // the ring's next slot
    long frames;
    int worst_count;  // most transitions of one pixel within a second
    long worst_area;  // most pixels at 7+ transitions within a second at once
} FlashMeter;

static void meter_init(FlashMeter *m, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    *m = (FlashMeter){.w = w, .h = h};
    m->ext = calloc(n, sizeof *m->ext), m->lo = calloc(n, sizeof *m->lo), m->hi = calloc(n, sizeof *m->hi);
    m->dir = calloc(n, 1), m->n = calloc(n, 1), m->at = calloc(n, 1), m->times = calloc(n * KEEP, sizeof *m->times);
    assert_true(m->ext && m->lo && m->hi && m->dir && m->n && m->at && m->times);
}

static void meter_free(FlashMeter *m)
{
    free(m->ext), free(m->lo), free(m->hi), free(m->dir), free(m->n), free(m->at), free(m->times);
}

// The pixels' area that may flash too often at once: 25 % of WCAG's 10° field, scaled.
static long meter_limit(const FlashMeter *m)
{
    return lround(0.25 * 341.0 * 256.0 * (double)m->w * (double)m->h / (1024.0 * 768.0));
}

static float srgb_lin(int c)
{
    float v = (float)c / 255.0f;
    return v <= 0.04045f ? v / 12.92f : powf((v + 0.055f) / 1.055f, 2.4f);
}

// One frame (RGBA, pitch bytes a row) shown at time t seconds.
static void meter_frame(FlashMeter *m, const unsigned char *rgba, int pitch, double t)
{
    static float lin[256];
    if (lin[255] == 0.0f)
        for (int c = 0; c < 256; c++) lin[c] = srgb_lin(c);
    long area = 0;
    for (int y = 0; y < m->h; y++)
        for (int x = 0; x < m->w; x++) {
            const unsigned char *p = rgba + (size_t)y * (size_t)pitch + (size_t)x * 4;
            float L = 0.2126f * lin[p[0]] + 0.7152f * lin[p[1]] + 0.0722f * lin[p[2]];
            size_t i = (size_t)y * (size_t)m->w + (size_t)x;
            bool turn = false;
            if (m->frames == 0) {
                m->ext[i] = m->lo[i] = m->hi[i] = L;
                continue;
            }
            if (m->dir[i] == 0) { // the first change of 0.1 (its darker end below 0.8) sets a direction
                if (L < m->lo[i]) m->lo[i] = L;
                if (L > m->hi[i]) m->hi[i] = L;
                if (m->hi[i] - m->lo[i] >= 0.1f && m->lo[i] < 0.8f)
                    turn = true, m->dir[i] = L >= m->hi[i] ? 1 : -1, m->ext[i] = L;
            } else if (m->dir[i] > 0) {
                if (L > m->ext[i]) m->ext[i] = L;
                else if (m->ext[i] - L >= 0.1f && L < 0.8f) turn = true, m->dir[i] = -1, m->ext[i] = L;
            } else {
                if (L < m->ext[i]) m->ext[i] = L;
                else if (L - m->ext[i] >= 0.1f && m->ext[i] < 0.8f) turn = true, m->dir[i] = 1, m->ext[i] = L;
            }
            if (!turn) continue;
            double *ring = m->times + i * KEEP;
            ring[m->at[i]] = t;
            m->at[i] = (unsigned char)((m->at[i] + 1) % KEEP);
            if (m->n[i] < KEEP) m->n[i]++;
            int within = 0; // this pixel's transitions in the second up to now
            for (int k = 0; k < m->n[i]; k++) within += t - ring[k] < 1.0 - 1e-9;
            if (within > m->worst_count) m->worst_count = within;
            if (within >= 7) area++;
        }
    // pixels that turned in this frame with 7+ transitions in the second: flashing now
    if (area > m->worst_area) m->worst_area = area;
    m->frames++;
}

static bool meter_passes(const FlashMeter *m) { return m->worst_area < meter_limit(m); }

// ---- the meter on made-up sequences ------------------------------------------------------

// A w×h frame: grey level g in the rectangle (x0, y0, rw, rh), black elsewhere.
static void fill(unsigned char *px, int w, int h, int g, int x0, int y0, int rw, int rh)
{
    memset(px, 0, (size_t)w * (size_t)h * 4);
    for (int y = y0; y < y0 + rh && y < h; y++)
        for (int x = x0; x < x0 + rw && x < w; x++) {
            unsigned char *p = px + ((size_t)y * (size_t)w + (size_t)x) * 4;
            p[0] = p[1] = p[2] = (unsigned char)g, p[3] = 255;
        }
}

// Two seconds of a rectangle of size rw×rh (of 320×180) switching between black and
// grey g every `every` frames at 30 frames a second; returns whether the meter passes it.
static bool made_up(int every, int g, int rw, int rh, int *worst)
{
    const int w = 320, h = 180;
    unsigned char *px = malloc((size_t)w * h * 4);
    assert_non_null(px);
    FlashMeter m;
    meter_init(&m, w, h);
    for (int f = 0; f < 2 * FPS; f++) {
        fill(px, w, h, (f / every) % 2 ? g : 0, 10, 10, rw, rh);
        meter_frame(&m, px, w * 4, (double)f / FPS);
    }
    bool ok = meter_passes(&m);
    *worst = m.worst_count;
    meter_free(&m);
    free(px);
    return ok;
}

static void test_meter(void **state)
{
    (void)state;
    int worst;
    // the whole frame black ↔ white: 5 flashes a second fail, 2 pass, 3 pass
    assert_false(made_up(3, 255, 320, 180, &worst));
    assert_true(worst >= 7);
    assert_true(made_up(8, 255, 320, 180, &worst));
    assert_true(worst <= 6);
    assert_true(made_up(5, 255, 320, 180, &worst)); // 3 flashes a second: 6 transitions, allowed
    assert_true(worst <= 6);
    // too small a change (black ↔ grey 20: luminance 0.007) is no flash, however fast
    assert_true(made_up(1, 20, 320, 180, &worst));
    assert_int_equal(worst, 0);
    // a fast flash on a small area (2 % of the frame; the limit is about 2.8 %) passes, a
    // large one fails
    assert_true(made_up(2, 255, 48, 24, &worst));
    assert_true(worst >= 7);
    assert_false(made_up(2, 255, 96, 48, &worst));
}

// ---- the lessons played at the fastest speed -----------------------------------------------

// The lesson at path played from its first stage to its end at w×h, every frame metered.
static void play(const char *path, int w, int h, bool projector)
{
    char err[LESSON_ERR_MAX];
    Session *ses = session_create(path, err, sizeof err); // (the lesson and its trace, as the window has them)
    if (!ses) fprintf(stderr, "%s\n", err);
    assert_non_null(ses);
    const Trace *tr = &ses->trace;
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    assert_non_null(s);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(s);
    assert_non_null(r);
    DrawList dl;
    draw_list_init(&dl);
    Canvas c = {r, fonts, NULL, NULL, &dl};
    Overlays ov = {0};
    View v;
    view_init(&v, &ses->lesson, LANG_EN);
    v.projector = projector;
    Playback pb;
    playback_init(&pb, tr->n);
    playback_set_speed(&pb, PLAYBACK_MAX_SPEED); // (+ until it goes no faster)
    playback_toggle(&pb);                        // P
    FlashMeter m;
    meter_init(&m, w, h);
    v.stage = -1;
    double t = 0.0;
    for (int f = 0; pb.playing || f < FPS; f++, t = (double)f / FPS) { // (and a second at the end)
        if (f > 0) playback_update(&pb, 1.0 / FPS);
        if (v.stage != pb.stage) { // as the window: a new stage on the head its narration is about
            View nv = v;
            nv.stage = pb.stage;
            v.head = scene_stage_head(tr, &nv, -1);
            v.loop = -1;
            view_reset_zoom(&v);
        }
        v.stage = pb.stage;
        v.anim = playback_progress(&pb);
        v.playing = pb.playing;
        v.speed = pb.speed;
        render_frame(&c, tr, &v, &ov);
        assert_int_equal(SDL_LockSurface(s), 0);
        meter_frame(&m, s->pixels, s->pitch, t);
        SDL_UnlockSurface(s);
        assert_true(f < 100000);
    }
    printf("flash: %s%s %dx%d: %ld frames (%.1f s at speed %.0f), a pixel's most transitions in a second %d, "
           "most pixels at 7+ at once %ld (limit %ld)\n",
           path, projector ? " (projector)" : "", w, h, m.frames, t, (double)PLAYBACK_MAX_SPEED, m.worst_count,
           m.worst_area, meter_limit(&m));
    assert_true(meter_passes(&m));
    meter_free(&m);
    fonts_flush(fonts);
    draw_list_free(&dl);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(s);
    session_destroy(ses);
}

static void test_play_classic(void **state)
{
    (void)state;
    play("lessons/arange-2x4x4.json", 1280, 720, false);
    play("lessons/arange-2x4x4.json", 1280, 720, true);
}

static void test_play_others(void **state)
{
    (void)state;
    play("lessons/flash-attention-tiles.json", 960, 540, false);
    play("lessons/kv-cache-decoding.json", 960, 540, false);
    play("lessons/induction-heads.json", 960, 540, false);
}

static int setup(void **state)
{
    (void)state;
    return draw_setup(LANG_EN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meter),
        cmocka_unit_test(test_play_classic),
        cmocka_unit_test(test_play_others),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
