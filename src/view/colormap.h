// colormap.h — value → colour. Diverging (centred on 0) for signed values,
// sequential for probabilities in [0,1]; fixed looks for masked and NaN cells;
// black or white text chosen by luminance. Pure functions, no SDL.
#ifndef ATTNVIZ_COLORMAP_H
#define ATTNVIZ_COLORMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "geom.h" // Rgb

// Colour-blind-safe pairs (diverging / sequential); C cycles them.
typedef enum Palette {
    PALETTE_BLUE_RED,      // RdBu (blue < 0 < red) + viridis
    PALETTE_PURPLE_ORANGE, // PuOr + cividis
    PALETTE_HIGH_CONTRAST, // RdBu + greys (white → black), for washed-out projectors
    PALETTE_COUNT
} Palette;

// How one heatmap maps values: diverging uses [lo, hi] around mid (usually ±absmax
// around 0), sequential [lo, hi];
// log (with sequential) maps log10(v) over [log10 lo, log10 hi], values ≤ lo at the bottom.
typedef struct ColorScale {
    Palette palette;
    bool sequential;
    bool log;
    float lo, hi;
    float mid;  // diverging: the value drawn white, halfway between lo and hi (0, or 1 for γ)
} ColorScale;

Rgb colormap_diverging(Palette p, float x);  // x in [-1, 1], 0 → white-ish centre
Rgb colormap_sequential(Palette p, float t); // t in [0, 1]
Rgb colormap_value(const ColorScale *cs, float v); // NaN → colormap_nan()
Rgb colormap_masked(void);         // base of the hatched masked look
Rgb colormap_masked_hatch(void);   // its hatch lines
Rgb colormap_nan(void);
Rgb colormap_head(int head);       // a distinct colour per head (Okabe–Ito)
Rgb colormap_lerp(Rgb a, Rgb b, float t);
// Relative luminance in [0,1] (sRGB → linear, Rec. 709 weights).
float colormap_luminance(Rgb c);
// True when black text reads better than white on c.
bool colormap_text_dark(Rgb c);
const char *colormap_palette_key(Palette p); // i18n key of its name

#endif
