// test_colorvision.c — colour is never the only carrier, and the colours that carry
// meaning survive colour-vision deficiency and meet WCAG 2.1 AA's text contrast.
//
//  - every palette (C cycles them), simulated as seen with protanopia, deuteranopia and
//    tritanopia (Machado, Oliveira & Fernandes 2009, severity 1, applied to linear RGB):
//    the diverging map's two ends (−max and +max: the signs) and each end against the
//    centre (0), and the sequential map's ends, stay apart by a CIEDE2000 ΔE00 of at
//    least CV_MIN_DE_ENDS; a negative and a positive value of the same size from half the
//    range up by CV_MIN_DE_SIGNS (signs readable from the colour alone); the sequential
//    map's lightness L* never turns back along the ramp (the order of values readable)
//    — with normal vision too;
//  - the numbers in cells (black or white, colormap_text_dark) have a contrast of at
//    least 4.5:1 on every colour of every palette (sampled every 1/64 of the ramp), the
//    masked and NaN looks included; the interface's text colours (ink, muted, accent,
//    error) on the page, the narration and legend box, the tooltip and the badge too.
// ΔE00 is checked against the published test pairs (Sharma, Wu & Dalal 2005) first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "colormap.h"
#include "paint.h"

#define CV_MIN_DE_ENDS 20.0  // ΔE00 between a ramp's ends, an end and the centre
#define CV_MIN_DE_SIGNS 10.0 // ΔE00 between −x and +x for |x| ≥ 0.5 of the range
#define CV_MIN_CONTRAST 4.5  // WCAG 2.1 AA, normal text

typedef struct Lab { double L, a, b; } Lab;

static double lin(double c) { c /= 255.0; return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }

// The deficiencies' matrices on linear RGB (Machado et al. 2009, table, severity 1.0).
static const double MACHADO[3][3][3] = {
    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},  // protanopia
    {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},   // deuteranopia
    {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},  // tritanopia
};
static const char *const VISION[] = {"protanopia", "deuteranopia", "tritanopia", "normal vision"};

// c as seen with deficiency k (0–2; 3: normal), in CIELAB (D65).
static Lab seen(Rgb c, int k)
{
    double r = lin(c.r), g = lin(c.g), b = lin(c.b);
    if (k < 3) {
        const double(*m)[3] = MACHADO[k];
        double r2 = m[0][0] * r + m[0][1] * g + m[0][2] * b, g2 = m[1][0] * r + m[1][1] * g + m[1][2] * b;
        double b2 = m[2][0] * r + m[2][1] * g + m[2][2] * b;
        r = fmin(fmax(r2, 0.0), 1.0), g = fmin(fmax(g2, 0.0), 1.0), b = fmin(fmax(b2, 0.0), 1.0);
    }
    double X = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b, Y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    double Z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b;
    double v[3] = {X / 0.95047, Y / 1.0, Z / 1.08883};
    for (int i = 0; i < 3; i++) v[i] = v[i] > 216.0 / 24389.0 ? cbrt(v[i]) : (24389.0 / 27.0 * v[i] + 16.0) / 116.0;
    return (Lab){116.0 * v[1] - 16.0, 500.0 * (v[0] - v[1]), 200.0 * (v[1] - v[2])};
}

// CIEDE2000 (Sharma, Wu & Dalal 2005), kL = kC = kH = 1.
static double de2000(Lab x, Lab y)
{
    const double pi = 3.14159265358979323846, d2r = pi / 180.0;
    double c1 = hypot(x.a, x.b), c2 = hypot(y.a, y.b), cm = (c1 + c2) / 2.0, cm7 = pow(cm, 7.0);
    double G = 0.5 * (1.0 - sqrt(cm7 / (cm7 + pow(25.0, 7.0))));
    double a1 = (1.0 + G) * x.a, a2 = (1.0 + G) * y.a;
    double C1 = hypot(a1, x.b), C2 = hypot(a2, y.b);
    double h1 = (a1 == 0.0 && x.b == 0.0) ? 0.0 : atan2(x.b, a1) / d2r, h2 = (a2 == 0.0 && y.b == 0.0) ? 0.0 : atan2(y.b, a2) / d2r;
    if (h1 < 0) h1 += 360.0;
    if (h2 < 0) h2 += 360.0;
    double dL = y.L - x.L, dC = C2 - C1, dh = 0.0;
    if (C1 * C2 != 0.0) {
        dh = h2 - h1;
        if (dh > 180.0) dh -= 360.0;
        else if (dh < -180.0) dh += 360.0;
    }
    double dH = 2.0 * sqrt(C1 * C2) * sin(dh * d2r / 2.0);
    double Lm = (x.L + y.L) / 2.0, Cm = (C1 + C2) / 2.0, hm = h1 + h2;
    if (C1 * C2 != 0.0) {
        if (fabs(h1 - h2) <= 180.0) hm = (h1 + h2) / 2.0;
        else hm = (h1 + h2 < 360.0) ? (h1 + h2 + 360.0) / 2.0 : (h1 + h2 - 360.0) / 2.0;
    }
    double T = 1.0 - 0.17 * cos((hm - 30.0) * d2r) + 0.24 * cos(2.0 * hm * d2r) + 0.32 * cos((3.0 * hm + 6.0) * d2r) -
               0.20 * cos((4.0 * hm - 63.0) * d2r);
    double dth = 30.0 * exp(-pow((hm - 275.0) / 25.0, 2.0)), Cm7 = pow(Cm, 7.0);
    double Rc = 2.0 * sqrt(Cm7 / (Cm7 + pow(25.0, 7.0))), Sl = 1.0 + 0.015 * pow(Lm - 50.0, 2.0) / sqrt(20.0 + pow(Lm - 50.0, 2.0));
    double Sc = 1.0 + 0.045 * Cm, Sh = 1.0 + 0.015 * Cm * T, Rt = -sin(2.0 * dth * d2r) * Rc;
    return sqrt(pow(dL / Sl, 2.0) + pow(dC / Sc, 2.0) + pow(dH / Sh, 2.0) + Rt * (dC / Sc) * (dH / Sh));
}

static void test_de2000_reference(void **state)
{
    (void)state;
    // pairs 1, 7, 17 and 25 of Sharma et al.'s table
    const double t[][7] = {{50.0, 2.6772, -79.7751, 50.0, 0.0, -82.7485, 2.0425},
                           {50.0, 0.0, 0.0, 50.0, -1.0, 2.0, 2.3669},
                           {50.0, 2.5, 0.0, 73.0, 25.0, -18.0, 27.1492},
                           {60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double d = de2000((Lab){t[i][0], t[i][1], t[i][2]}, (Lab){t[i][3], t[i][4], t[i][5]});
        if (fabs(d - t[i][6]) > 1e-4) fail_msg("ΔE00 of Sharma's pair %zu: %.4f, expected %.4f", i, d, t[i][6]);
    }
}

static double worst;
static void apart(Rgb a, Rgb b, int k, double min, const char *what, Palette p)
{
    double d = de2000(seen(a, k), seen(b, k));
    if (d < worst) worst = d;
    if (d < min)
        fail_msg("palette %d, %s: %s only ΔE00 %.1f apart (%d,%d,%d vs %d,%d,%d; at least %.0f)", p, VISION[k], what, d,
                 a.r, a.g, a.b, b.r, b.g, b.b, min);
}

static void test_palettes_distinguishable(void **state)
{
    (void)state;
    for (int p = 0; p < PALETTE_COUNT; p++) {
        for (int k = 0; k < 4; k++) {
            worst = 1e9;
            Rgb lo = colormap_diverging((Palette)p, -1.0f), hi = colormap_diverging((Palette)p, 1.0f);
            Rgb mid = colormap_diverging((Palette)p, 0.0f);
            apart(lo, hi, k, CV_MIN_DE_ENDS, "the diverging ends (−, +)", (Palette)p);
            apart(lo, mid, k, CV_MIN_DE_ENDS, "the negative end and 0", (Palette)p);
            apart(hi, mid, k, CV_MIN_DE_ENDS, "the positive end and 0", (Palette)p);
            for (int i = 32; i <= 64; i++) {
                float x = (float)i / 64.0f;
                apart(colormap_diverging((Palette)p, -x), colormap_diverging((Palette)p, x), k, CV_MIN_DE_SIGNS,
                      "a negative and a positive value of the same size", (Palette)p);
            }
            double signs = worst;
            worst = 1e9;
            apart(colormap_sequential((Palette)p, 0.0f), colormap_sequential((Palette)p, 1.0f), k, CV_MIN_DE_ENDS,
                  "the sequential ends", (Palette)p);
            double prev = seen(colormap_sequential((Palette)p, 0.0f), k).L, dir = 0.0;
            for (int i = 1; i <= 64; i++) { // the lightness goes one way along the ramp
                double L = seen(colormap_sequential((Palette)p, (float)i / 64.0f), k).L, step = L - prev;
                if (fabs(step) > 0.05) {
                    if (dir != 0.0 && step * dir < 0)
                        fail_msg("palette %d, %s: the sequential ramp's lightness turns back at %d/64", p, VISION[k], i);
                    dir = step;
                }
                prev = L;
            }
            printf("palette %d, %-13s: signs and ends at least ΔE00 %.1f, sequential ends %.1f\n", p, VISION[k], signs,
                   worst);
        }
    }
}

static double contrast(Rgb a, Rgb b)
{
    double la = colormap_luminance(a), lb = colormap_luminance(b);
    return (fmax(la, lb) + 0.05) / (fmin(la, lb) + 0.05);
}
static double least;
static void readable(Rgb text, Rgb bg, const char *what)
{
    double c = contrast(text, bg);
    if (c < least) least = c;
    if (c < CV_MIN_CONTRAST)
        fail_msg("%s: contrast %.2f:1 (%d,%d,%d on %d,%d,%d; at least %.1f:1)", what, c, text.r, text.g, text.b, bg.r, bg.g,
                 bg.b, CV_MIN_CONTRAST);
}
static Rgb cell_ink(Rgb bg) { return colormap_text_dark(bg) ? (Rgb){0, 0, 0} : (Rgb){255, 255, 255}; }

static void test_text_contrast(void **state)
{
    (void)state;
    least = 1e9;
    for (int p = 0; p < PALETTE_COUNT; p++)
        for (int i = 0; i <= 64; i++) {
            Rgb d = colormap_diverging((Palette)p, (float)i / 32.0f - 1.0f), s = colormap_sequential((Palette)p, (float)i / 64.0f);
            readable(cell_ink(d), d, "a number on the diverging map");
            readable(cell_ink(s), s, "a number on the sequential map");
        }
    readable(cell_ink(colormap_masked()), colormap_masked(), "a masked cell's text");
    readable(cell_ink(colormap_nan()), colormap_nan(), "NaN's text");
    const Rgb bgs[] = {THEME.bg, THEME.narr_bg, THEME.tip_bg};
    const char *const names[] = {"on the page", "in the narration and legend", "in a tooltip"};
    for (int i = 0; i < 3; i++) {
        char w[80];
        snprintf(w, sizeof w, "ink %s", names[i]), readable(THEME.ink, bgs[i], w);
        snprintf(w, sizeof w, "muted text (labels, Σ, legends) %s", names[i]), readable(THEME.muted, bgs[i], w);
        snprintf(w, sizeof w, "accent text %s", names[i]), readable(THEME.accent, bgs[i], w);
        snprintf(w, sizeof w, "an error %s", names[i]), readable(THEME.error_ink, bgs[i], w);
        snprintf(w, sizeof w, "a padding key's label %s", names[i]), readable(THEME.pad_ink, bgs[i], w);
    }
    readable(THEME.accent, THEME.accent_light, "the shape badge");
    readable(THEME.white, THEME.accent, "text on the accent (the current step, buttons)");
    readable(THEME.white, THEME.toast_bg, "a notice");
    printf("text contrast: at least %.2f:1\n", least);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_de2000_reference),
        cmocka_unit_test(test_palettes_distinguishable),
        cmocka_unit_test(test_text_contrast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
