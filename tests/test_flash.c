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
// scaled to the frame (counted over the whole frame, not a 10° window: stricter).
// The red flash threshold (2.3.1's second part) is metered beside it: a pixel's red
// transition is a change of its colour's CIE 1976 u'v' chromaticity by more than 0.2 against
// the last state counted, one of the two a saturated red (R / (R + G + B) ≥ 0.8, of the
// linear sRGB values: WCAG 2.1's working definition); a colour too dark to have a
// chromaticity (Y < 0.002) counts as the white point's. The same 7 transitions in a second
// and the same area fail. The meter itself is checked first on made-up sequences it must
// pass and fail, a red flicker that keeps its luminance (no general flash) among them.
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
    float *ru, *rv;   // red flashes: each pixel's chromaticity (u', v') at its last red transition
    bool *rsat;       // whether that colour was a saturated red
    double *rtimes;   // its last KEEP red transitions' times (a ring), seconds
    unsigned char *rn, *rat;
    long frames;
    int worst_count;  // most transitions of one pixel within a second
    long worst_area;  // most pixels at 7+ transitions within a second at once
    int worst_red_count; // the same for red transitions
    long worst_red_area;
} FlashMeter;

static void meter_init(FlashMeter *m, int w, int h)
{
    size_t n = (size_t)w * (size_t)h;
    *m = (FlashMeter){.w = w, .h = h};
    m->ext = calloc(n, sizeof *m->ext), m->lo = calloc(n, sizeof *m->lo), m->hi = calloc(n, sizeof *m->hi);
    m->dir = calloc(n, 1), m->n = calloc(n, 1), m->at = calloc(n, 1), m->times = calloc(n * KEEP, sizeof *m->times);
    m->ru = calloc(n, sizeof *m->ru), m->rv = calloc(n, sizeof *m->rv), m->rsat = calloc(n, sizeof *m->rsat);
    m->rn = calloc(n, 1), m->rat = calloc(n, 1), m->rtimes = calloc(n * KEEP, sizeof *m->rtimes);
    assert_true(m->ext && m->lo && m->hi && m->dir && m->n && m->at && m->times);
    assert_true(m->ru && m->rv && m->rsat && m->rn && m->rat && m->rtimes);
}

static void meter_free(FlashMeter *m)
{
    free(m->ext), free(m->lo), free(m->hi), free(m->dir), free(m->n), free(m->at), free(m->times);
    free(m->ru), free(m->rv), free(m->rsat), free(m->rn), free(m->rat), free(m->rtimes);
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

// A transition of pixel i at time t into its ring (KEEP times, *n kept, *at the next
// slot); returns how many of its transitions fall in the second up to t.
static int ring_push(double *times, unsigned char *n, unsigned char *at, size_t i, double t)
{
    double *ring = times + i * KEEP;
    ring[at[i]] = t;
    at[i] = (unsigned char)((at[i] + 1) % KEEP);
    if (n[i] < KEEP) n[i]++;
    int within = 0;
    for (int k = 0; k < n[i]; k++) within += t - ring[k] < 1.0 - 1e-9;
    return within;
}

// The linear sRGB colour (r, g, b) as CIE 1976 u'v' and whether it is a saturated red.
static void red_state(float r, float g, float b, float *u, float *v, bool *sat)
{
    float X = 0.4124f * r + 0.3576f * g + 0.1805f * b, Y = 0.2126f * r + 0.7152f * g + 0.0722f * b;
    float Z = 0.0193f * r + 0.1192f * g + 0.9505f * b, d = X + 15.0f * Y + 3.0f * Z;
    if (Y < 0.002f) *u = 0.1978f, *v = 0.4683f; // (too dark for a colour: the white point, D65)
    else *u = 4.0f * X / d, *v = 9.0f * Y / d;
    *sat = r + g + b > 0.0f && r / (r + g + b) >= 0.8f;
}

// Pixel i's colour this frame for the red flash meter: true when it makes a red transition.
static bool red_turn(FlashMeter *m, size_t i, float r, float g, float b)
{
    float u, v;
    bool sat;
    red_state(r, g, b, &u, &v, &sat);
    if (m->frames == 0) {
        m->ru[i] = u, m->rv[i] = v, m->rsat[i] = sat;
        return false;
    }
    float du = u - m->ru[i], dv = v - m->rv[i];
    if (!(sat || m->rsat[i]) || du * du + dv * dv <= 0.2f * 0.2f) return false;
    m->ru[i] = u, m->rv[i] = v, m->rsat[i] = sat;
    return true;
}

// One frame (RGBA, pitch bytes a row) shown at time t seconds.
static void meter_frame(FlashMeter *m, const unsigned char *rgba, int pitch, double t)
{
    static float lin[256];
    if (lin[255] == 0.0f)
        for (int c = 0; c < 256; c++) lin[c] = srgb_lin(c);
    long area = 0, red_area = 0;
    for (int y = 0; y < m->h; y++)
        for (int x = 0; x < m->w; x++) {
            const unsigned char *p = rgba + (size_t)y * (size_t)pitch + (size_t)x * 4;
            float L = 0.2126f * lin[p[0]] + 0.7152f * lin[p[1]] + 0.0722f * lin[p[2]];
            size_t i = (size_t)y * (size_t)m->w + (size_t)x;
            if (red_turn(m, i, lin[p[0]], lin[p[1]], lin[p[2]])) {
                int within = ring_push(m->rtimes, m->rn, m->rat, i, t);
                if (within > m->worst_red_count) m->worst_red_count = within;
                if (within >= 7) red_area++;
            }
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
            int within = ring_push(m->times, m->n, m->at, i, t); // this pixel's transitions in the second up to now
            if (within > m->worst_count) m->worst_count = within;
            if (within >= 7) area++;
        }
    // pixels that turned in this frame with 7+ transitions in the second: flashing now
    if (area > m->worst_area) m->worst_area = area;
    if (red_area > m->worst_red_area) m->worst_red_area = red_area;
    m->frames++;
}

static bool meter_passes_general(const FlashMeter *m) { return m->worst_area < meter_limit(m); }
static bool meter_passes_red(const FlashMeter *m) { return m->worst_red_area < meter_limit(m); }
static bool meter_passes(const FlashMeter *m) { return meter_passes_general(m) && meter_passes_red(m); }

// ---- the meter on made-up sequences ------------------------------------------------------

// A w×h frame: colour c (RGB) in the rectangle (x0, y0, rw, rh), background bg elsewhere.
static void fill(unsigned char *px, int w, int h, const unsigned char c[3], const unsigned char bg[3], int x0, int y0,
                 int rw, int rh)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + ((size_t)y * (size_t)w + (size_t)x) * 4;
            const unsigned char *k = x >= x0 && x < x0 + rw && y >= y0 && y < y0 + rh ? c : bg;
            p[0] = k[0], p[1] = k[1], p[2] = k[2], p[3] = 255;
        }
}

typedef struct MadeUp {
    bool general, red;  // whether the meter passes it on either threshold
    int worst, worst_red; // a pixel's most transitions (of either kind) in a second
} MadeUp;

// Two seconds of a rectangle of size rw×rh (of 320×180, on black) switching between colours
// a and b every `every` frames at 30 frames a second.
static MadeUp made_up_colours(int every, const unsigned char a[3], const unsigned char b[3], int rw, int rh)
{
    const int w = 320, h = 180;
    static const unsigned char black[3] = {0, 0, 0};
    unsigned char *px = malloc((size_t)w * h * 4);
    assert_non_null(px);
    FlashMeter m;
    meter_init(&m, w, h);
    for (int f = 0; f < 2 * FPS; f++) {
        fill(px, w, h, (f / every) % 2 ? b : a, black, 10, 10, rw, rh);
        meter_frame(&m, px, w * 4, (double)f / FPS);
    }
    MadeUp r = {meter_passes_general(&m), meter_passes_red(&m), m.worst_count, m.worst_red_count};
    meter_free(&m);
    free(px);
    return r;
}

// The same between black and grey g; returns whether the meter passes it (both thresholds).
static bool made_up(int every, int g, int rw, int rh, int *worst)
{
    const unsigned char black[3] = {0, 0, 0}, grey[3] = {(unsigned char)g, (unsigned char)g, (unsigned char)g};
    MadeUp r = made_up_colours(every, black, grey, rw, rh);
    *worst = r.worst;
    return r.general && r.red;
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

// The red flash threshold (WCAG 2.3.1's second part): a saturated red flickering at 5 Hz
// against a grey of the same luminance (255,0,0: Y 0.2126; grey 127: Y 0.2122) is no general
// flash but a red one; the same at 3 Hz, a small area, or between two colours neither of them
// a saturated red passes.
static void test_meter_red(void **state)
{
    (void)state;
    const unsigned char red[3] = {255, 0, 0}, grey[3] = {127, 127, 127}, black[3] = {0, 0, 0};
    const unsigned char green[3] = {0, 180, 0}, blue[3] = {0, 0, 255}, dull[3] = {200, 120, 110};
    MadeUp r = made_up_colours(3, red, grey, 320, 180); // 5 Hz: 10 transitions a second
    assert_true(r.general);
    assert_int_equal(r.worst, 0);
    assert_false(r.red);
    assert_true(r.worst_red >= 7);
    r = made_up_colours(3, red, black, 320, 180); // red ↔ black: both
    assert_false(r.general);
    assert_false(r.red);
    r = made_up_colours(5, red, grey, 320, 180); // 3 Hz: allowed
    assert_true(r.red);
    assert_true(r.worst_red <= 6);
    r = made_up_colours(2, red, grey, 48, 24); // a small area
    assert_true(r.red);
    assert_true(r.worst_red >= 7);
    r = made_up_colours(3, green, blue, 320, 180); // no saturated red (a general flash: Y 0.31 ↔ 0.07)
    assert_true(r.red);
    assert_int_equal(r.worst_red, 0);
    r = made_up_colours(3, dull, grey, 320, 180); // a reddish grey, R / (R+G+B) 0.62 in linear light
    assert_true(r.red);
    assert_int_equal(r.worst_red, 0);
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
           "most pixels at 7+ at once %ld; red: %d, %ld (limit %ld)\n",
           path, projector ? " (projector)" : "", w, h, m.frames, t, (double)PLAYBACK_MAX_SPEED, m.worst_count,
           m.worst_area, m.worst_red_count, m.worst_red_area, meter_limit(&m));
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
        cmocka_unit_test(test_meter_red),
        cmocka_unit_test(test_play_classic),
        cmocka_unit_test(test_play_others),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
