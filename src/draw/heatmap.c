// heatmap.c — heatmaps as images (see heatmap.h).
#include "heatmap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define IMG_MAX 8192 // widest / tallest panel drawn as an image, in pixels

// Everything the pixels of one panel depend on.
typedef struct ImageKey {
    const float *data, *mask;
    int rows, cols, rs, cs;
    ColorScale scale;
    int w, h, cell_wq, cell_hq, off_xq, off_yq;
    float anim[4];
} ImageKey;

typedef struct Slot {
    PaintImage img;
    bool valid;
    ImageKey key;
} Slot;

struct HeatmapCache {
    const SDL_Renderer *owner; // the images belong to this renderer
    Slot slot[LAYOUT_MAX_PANELS];
    HeatmapStats stats;
};

HeatmapCache *heatmap_cache_create(void) { return calloc(1, sizeof(HeatmapCache)); }

void heatmap_cache_flush(HeatmapCache *c)
{
    if (!c) return;
    for (int i = 0; i < LAYOUT_MAX_PANELS; i++) {
        paint_image_free(&c->slot[i].img);
        memset(&c->slot[i], 0, sizeof c->slot[i]);
    }
    c->owner = NULL;
}

void heatmap_cache_destroy(HeatmapCache *c)
{
    heatmap_cache_flush(c);
    free(c);
}

HeatmapStats heatmap_cache_stats(const HeatmapCache *c)
{
    HeatmapStats z = {0, 0, 0};
    return c ? c->stats : z;
}

// Runs: the cells that own at least one pixel along an axis, and where each
// starts (relative to the viewport); run k covers [at[k], at[k + 1]).
typedef struct Runs {
    int n;
    int cell[IMG_MAX];
    int at[IMG_MAX + 1];
} Runs;

// The visible runs of columns c0..c1 (cols) or rows c0..c1 (!cols) of panel p,
// clipped to the panel, in pixels from its left or top edge.
static void runs(Runs *u, const Layout *L, int p, int c0, int c1, bool cols)
{
    Rect q = L->panel[p];
    int origin = cols ? q.x : q.y, extent = cols ? q.w : q.h;
    u->n = 0;
    for (int j = c0; j <= c1 && u->n < IMG_MAX; j++) {
        int a0 = cols ? layout_col_x(L, p, j) : layout_row_y(L, p, j);
        int a1 = cols ? layout_col_x(L, p, j + 1) : layout_row_y(L, p, j + 1);
        if (a0 < origin) a0 = origin;
        if (a1 > origin + extent) a1 = origin + extent;
        if (a1 <= a0) continue;
        u->cell[u->n] = j;
        u->at[u->n++] = a0 - origin;
        u->at[u->n] = a1 - origin;
    }
}

static bool same_rgb(Rgb a, Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

// Rectangles, one per run of equal colour in each row run.
static void draw_rects(Canvas *cv, const Runs *ry, const Runs *rx, int x, int y, HeatmapColorFn color,
                       const void *ctx)
{
    for (int k = 0; k < ry->n; k++) {
        int m = 0;
        Rgb c = color(ctx, ry->cell[k], rx->cell[0]), next = c;
        while (m < rx->n) {
            int m1 = m + 1;
            while (m1 < rx->n && same_rgb(next = color(ctx, ry->cell[k], rx->cell[m1]), c)) m1++;
            paint_fill(cv, c, 255, x + rx->at[m], y + ry->at[k], rx->at[m1] - rx->at[m], ry->at[k + 1] - ry->at[k]);
            m = m1;
            c = next;
        }
    }
}

typedef struct FillCtx {
    const Runs *ry, *rx;
    HeatmapColorFn color;
    const void *ctx;
} FillCtx;

// Pixels into a locked RGBA32 image: one scanline per row run, copied down.
static void fill_pixels(unsigned char *px, int pitch, const void *fill_ctx)
{
    const FillCtx *f = fill_ctx;
    const Runs *ry = f->ry, *rx = f->rx;
    HeatmapColorFn color = f->color;
    const void *ctx = f->ctx;
    for (int k = 0; k < ry->n; k++) {
        unsigned char *line = px + (size_t)ry->at[k] * (size_t)pitch;
        for (int m = 0; m < rx->n; m++) {
            Rgb c = color(ctx, ry->cell[k], rx->cell[m]);
            unsigned char *o = line + (size_t)rx->at[m] * 4;
            for (int x = rx->at[m]; x < rx->at[m + 1]; x++, o += 4) o[0] = c.r, o[1] = c.g, o[2] = c.b, o[3] = 255;
        }
        size_t bytes = (size_t)rx->at[rx->n] * 4;
        for (int y = ry->at[k] + 1; y < ry->at[k + 1]; y++) memcpy(px + (size_t)y * (size_t)pitch, line, bytes);
    }
}

void heatmap_draw_image(Canvas *cv, const Layout *L, int p, int dx, int dy, const float anim_key[4],
                        HeatmapColorFn color, const void *ctx)
{
    assert(p >= 0 && p < L->n_panels); // render.c's loop over the layout's panels
    Rect q = L->panel[p];
    if (q.w <= 0 || q.h <= 0 || q.w > IMG_MAX || q.h > IMG_MAX) return; // the window size and the zoom make it (IMG_MAX: the largest image)
    // 64 KiB each: kept out of the stack, allocated once (SDL renderers are used from one thread)
    static _Thread_local Runs ry, rx;
    int r0, r1, c0, c1;
    layout_visible(L, p, &r0, &r1, &c0, &c1);
    runs(&ry, L, p, r0, r1, false);
    runs(&rx, L, p, c0, c1, true);
    if (ry.n == 0 || rx.n == 0) return;
    HeatmapCache *c = cv->heatmaps;
    if (!c) {
        draw_rects(cv, &ry, &rx, q.x + dx, q.y + dy, color, ctx);
        return;
    }
    if (c->owner != cv->r) {
        heatmap_cache_flush(c);
        c->owner = cv->r;
    }
    Slot *s = &c->slot[p];
    ImageKey key;
    memset(&key, 0, sizeof key); // padding too: keys are compared with memcmp
    const PanelSpec *ps = &L->spec[p];
    key.data = ps->data, key.mask = ps->mask;
    key.rows = ps->rows, key.cols = ps->cols, key.rs = ps->rs, key.cs = ps->cs;
    key.scale = ps->scale;
    key.w = q.w, key.h = q.h;
    key.cell_wq = L->cell_wq[p], key.cell_hq = L->cell_hq[p];
    key.off_xq = L->off_xq[p], key.off_yq = L->off_yq[p];
    memcpy(key.anim, anim_key, sizeof key.anim);
    int made = paint_image_reserve(cv, &s->img, q.w, q.h);
    if (made < 0) { // no image (out of memory, size limit): rectangles
        s->valid = false;
        draw_rects(cv, &ry, &rx, q.x + dx, q.y + dy, color, ctx);
        return;
    }
    if (made > 0) {
        s->valid = false;
        c->stats.allocs++;
    }
    if (!s->valid || memcmp(&s->key, &key, sizeof key) != 0) {
        FillCtx fc = {&ry, &rx, color, ctx};
        if (!paint_image_fill(cv, &s->img, q.w, q.h, fill_pixels, &fc)) {
            draw_rects(cv, &ry, &rx, q.x + dx, q.y + dy, color, ctx);
            return;
        }
        s->key = key;
        s->valid = true;
        c->stats.fills++;
    } else {
        c->stats.reuses++;
    }
    paint_image_draw(cv, &s->img, q.w, q.h, q.x + dx, q.y + dy);
}
