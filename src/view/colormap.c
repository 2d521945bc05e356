// colormap.c — piecewise-linear interpolation between published colour stops.
#include "colormap.h"

#include <math.h>

#define NS 11 // diverging stops
#define NQ 9  // sequential stops

// ColorBrewer RdBu (reversed: blue for negative), centre #f7f7f7.
static const Rgb rdbu[NS] = {{5, 48, 97},    {33, 102, 172},  {67, 147, 195}, {146, 197, 222},
                             {209, 229, 240}, {247, 247, 247}, {253, 219, 199}, {244, 165, 130},
                             {214, 96, 77},   {178, 24, 43},   {103, 0, 31}};
// ColorBrewer PuOr (purple for negative, orange for positive).
static const Rgb puor[NS] = {{45, 0, 75},     {84, 39, 136},   {128, 115, 172}, {178, 171, 210},
                             {216, 218, 235}, {247, 247, 247}, {254, 224, 182}, {253, 184, 99},
                             {224, 130, 20},  {179, 88, 6},    {127, 59, 8}};
static const Rgb viridis[NQ] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
static const Rgb cividis[NQ] = {{0, 34, 78},     {18, 53, 112},   {59, 73, 108},
                                {87, 93, 109},   {112, 113, 115}, {138, 135, 121},
                                {166, 157, 117}, {196, 181, 108}, {254, 232, 56}};
static const Rgb greys[NQ] = {{255, 255, 255}, {240, 240, 240}, {217, 217, 217},
                              {189, 189, 189}, {150, 150, 150}, {115, 115, 115},
                              {82, 82, 82},    {37, 37, 37},    {0, 0, 0}};

Rgb colormap_lerp(Rgb a, Rgb b, float t)
{
    if (!(t > 0.0f)) t = 0.0f;
    if (t > 1.0f) t = 1.0f;
    Rgb c = {(uint8_t)lrintf((float)a.r + ((float)b.r - (float)a.r) * t),
             (uint8_t)lrintf((float)a.g + ((float)b.g - (float)a.g) * t),
             (uint8_t)lrintf((float)a.b + ((float)b.b - (float)a.b) * t)};
    return c;
}

static Rgb ramp(const Rgb *stops, int n, float t)
{
    if (!(t > 0.0f)) t = 0.0f; // also NaN
    if (t > 1.0f) t = 1.0f;
    float f = t * (float)(n - 1);
    int i = (int)f;
    if (i >= n - 1) return stops[n - 1];
    return colormap_lerp(stops[i], stops[i + 1], f - (float)i);
}

Rgb colormap_diverging(Palette p, float x)
{
    const Rgb *s = p == PALETTE_PURPLE_ORANGE ? puor : rdbu;
    return ramp(s, NS, (x + 1.0f) * 0.5f);
}

Rgb colormap_sequential(Palette p, float t)
{
    const Rgb *s = p == PALETTE_PURPLE_ORANGE ? cividis : p == PALETTE_HIGH_CONTRAST ? greys : viridis;
    return ramp(s, NQ, t);
}

Rgb colormap_value(const ColorScale *cs, float v)
{
    if (isnan(v)) return colormap_nan();
    if (cs->sequential && cs->log) {
        float l0 = log10f(cs->lo), l1 = log10f(cs->hi);
        float t = v <= cs->lo ? 0.0f : (log10f(v) - l0) / (l1 - l0);
        return colormap_sequential(cs->palette, t > 1.0f ? 1.0f : t);
    }
    if (cs->sequential) {
        float span = cs->hi - cs->lo;
        return colormap_sequential(cs->palette, span > 0.0f ? (v - cs->lo) / span : 0.0f);
    }
    float m = cs->hi - cs->mid > 0.0f ? cs->hi - cs->mid : 1.0f;
    float x = (v - cs->mid) / m;
    if (x < -1.0f) x = -1.0f; // also -inf
    if (x > 1.0f) x = 1.0f;
    return colormap_diverging(cs->palette, x);
}

Rgb colormap_masked(void) { return (Rgb){168, 168, 168}; }
Rgb colormap_masked_hatch(void) { return (Rgb){110, 110, 110}; }
Rgb colormap_nan(void) { return (Rgb){58, 58, 58}; }

Rgb colormap_head(int head)
{
    // Okabe–Ito: orange, sky blue, bluish green, vermillion, blue, reddish purple, yellow,
    // and its black as a dark grey: 8 colours, as many as split / concat show at once
    // (their heads are a run of 8 aligned to a multiple of 8, so never two alike)
    static const Rgb c[] = {{230, 159, 0}, {86, 180, 233}, {0, 158, 115}, {213, 94, 0},
                            {0, 114, 178}, {204, 121, 167}, {240, 228, 66}, {90, 90, 90}};
    int n = (int)(sizeof c / sizeof c[0]);
    return c[((head % n) + n) % n];
}

static float lin(uint8_t c)
{
    float s = (float)c / 255.0f;
    return s <= 0.04045f ? s / 12.92f : powf((s + 0.055f) / 1.055f, 2.4f);
}

float colormap_luminance(Rgb c)
{
    return 0.2126f * lin(c.r) + 0.7152f * lin(c.g) + 0.0722f * lin(c.b);
}

// Black wins when its contrast ratio (L+0.05)/0.05 beats white's 1.05/(L+0.05).
bool colormap_text_dark(Rgb c) { return colormap_luminance(c) > 0.179f; }

const char *colormap_palette_key(Palette p)
{
    switch (p) {
    case PALETTE_PURPLE_ORANGE: return "palette.purple_orange";
    case PALETTE_HIGH_CONTRAST: return "palette.high_contrast";
    default: return "palette.blue_red";
    }
}
