// heatmap.h — heatmaps drawn as images: when cells are smaller than
// LAYOUT_IMAGE_CELL pixels (long sequences, wide layers) a panel is one picture
// with exactly one cell colour per screen pixel, following the layout's
// pixel → cell mapping (layout.h), so hover, zoom and the tests agree with it.
//
// With a HeatmapCache (Canvas.heatmaps) each panel is a retained image (paint.h),
// allocated when a panel grows and refilled only when what it shows changes
// (data, colours, geometry, animation); a settled frame just copies it. Without
// a cache the same pixels are drawn as rectangles (runs of equal colour merged):
// what a backend without retained images does.
#ifndef ATTNVIZ_HEATMAP_H
#define ATTNVIZ_HEATMAP_H

#include <stdbool.h>

#include "colormap.h"
#include "layout.h"
#include "paint.h"

typedef struct HeatmapCache HeatmapCache;

HeatmapCache *heatmap_cache_create(void);
// Drops every image (call before destroying the renderer they belong to).
void heatmap_cache_flush(HeatmapCache *c);
void heatmap_cache_destroy(HeatmapCache *c);

// Counters for tests and the benchmark: images made, panels refilled,
// panels drawn from an unchanged texture.
typedef struct HeatmapStats {
    unsigned long allocs, fills, reuses;
} HeatmapStats;
HeatmapStats heatmap_cache_stats(const HeatmapCache *c);

// The colour of cell (row, col) as drawn in this frame.
typedef Rgb (*HeatmapColorFn)(const void *ctx, int row, int col);

// Draws panel p of L as an image at its viewport moved by (dx, dy), with the
// canvas's cache (which may be NULL). anim_key identifies everything besides the
// panel and its geometry that color() depends on (the animation state): equal
// keys must give equal colours.
void heatmap_draw_image(Canvas *cv, const Layout *L, int p, int dx, int dy, const float anim_key[4],
                        HeatmapColorFn color, const void *ctx);

#endif
