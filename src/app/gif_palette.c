// gif_palette.c — one palette for a whole GIF (gif_palette.h), shared by the desktop's
// FFmpeg writer (video.c) and the page's own GIF encoder (gif_write.c).
#include "gif_palette.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HIST_BITS 20
#define HIST_SIZE (1u << HIST_BITS)
#define FLAT_RUN 8     // equal pixels in a row that make a flat area
#define EXACT_MAX 200  // at most this many exact entries; the median cut gets the rest
#define PAL_MAX GIF_PALETTE_TRANSPARENT // entry 255 is the encoder's transparent index

typedef struct GifColour {
    uint32_t rgb;       // 0xRRGGBB
    uint64_t count;     // pixels, over the frames observed
    uint64_t flat;      // of them in flat runs
} GifColour;

static uint32_t hash_rgb(uint32_t rgb) { return (rgb * 2654435761u) >> (32 - HIST_BITS); }

// The slot of rgb, inserted when absent; -1 when the table is too full to add it.
static long slot_of(GifPalette *p, uint32_t rgb)
{
    uint32_t h = hash_rgb(rgb);
    while (p->key[h] && p->key[h] != rgb + 1) h = (h + 1) & (HIST_SIZE - 1);
    if (!p->key[h]) {
        if (p->n >= HIST_SIZE / 4 * 3) return -1; // rare colours beyond this are left out
        p->key[h] = rgb + 1;
        p->hist[h] = (GifColour){rgb, 0, 0};
        p->n++;
    }
    return (long)h;
}

static void count_run(GifPalette *p, uint32_t rgb, int run)
{
    long h = slot_of(p, rgb);
    if (h < 0) return;
    p->hist[h].count += (uint64_t)run;
    if (run >= FLAT_RUN) p->hist[h].flat += (uint64_t)run;
}

void gif_palette_observe(GifPalette *p, const unsigned char *rgba, int pitch, int w, int h)
{
    for (int y = 0; y < h; y++) {
        const unsigned char *s = rgba + (size_t)y * (size_t)pitch;
        uint32_t cur = (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
        int run = 0;
        for (int x = 0; x < w; x++, s += 4) {
            uint32_t rgb = (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
            if (rgb != cur) {
                count_run(p, cur, run);
                cur = rgb, run = 0;
            }
            run++;
        }
        count_run(p, cur, run);
    }
}

static int by_flat(const void *a, const void *b)
{
    const GifColour *x = a, *y = b;
    if (x->flat != y->flat) return x->flat < y->flat ? 1 : -1;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return (x->rgb > y->rgb) - (x->rgb < y->rgb);
}

static int g_axis; // the channel median_cut sorts by (qsort has no context)
static int channel(uint32_t rgb, int axis) { return (int)(rgb >> (16 - 8 * axis) & 255); }
static int by_axis(const void *a, const void *b)
{
    int x = channel(((const GifColour *)a)->rgb, g_axis), y = channel(((const GifColour *)b)->rgb, g_axis);
    return (x > y) - (x < y);
}

typedef struct Box {
    size_t from, to; // colours[from, to)
} Box;

// The widest channel of a box and its range.
static int box_axis(const GifColour *c, Box b, int *range)
{
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    for (size_t i = b.from; i < b.to; i++)
        for (int a = 0; a < 3; a++) {
            int v = channel(c[i].rgb, a);
            if (v < lo[a]) lo[a] = v;
            if (v > hi[a]) hi[a] = v;
        }
    int best = 0;
    for (int a = 1; a < 3; a++)
        if (hi[a] - lo[a] > hi[best] - lo[best]) best = a;
    *range = hi[best] - lo[best];
    return best;
}

// Median cut of c[0, n) into at most k entries appended to the palette.
static void median_cut(GifPalette *p, GifColour *c, size_t n, int k)
{
    if (n == 0 || k <= 0) return;
    Box boxes[256];
    int nb = 1;
    boxes[0] = (Box){0, n};
    while (nb < k) {
        // split the box with the widest range, weighted by its pixels
        int pick = -1, axis = 0;
        double best = 0;
        for (int i = 0; i < nb; i++) {
            if (boxes[i].to - boxes[i].from < 2) continue;
            int range, a = box_axis(c, boxes[i], &range);
            double pixels = 0;
            for (size_t j = boxes[i].from; j < boxes[i].to; j++) pixels += (double)c[j].count;
            double score = range * sqrt(pixels);
            if (score > best) best = score, pick = i, axis = a;
        }
        if (pick < 0) break;
        Box b = boxes[pick];
        g_axis = axis;
        qsort(c + b.from, b.to - b.from, sizeof *c, by_axis);
        double total = 0, acc = 0;
        for (size_t j = b.from; j < b.to; j++) total += (double)c[j].count;
        size_t cut = b.from + 1;
        for (size_t j = b.from; j < b.to - 1; j++) {
            acc += (double)c[j].count;
            cut = j + 1;
            if (acc >= total / 2) break;
        }
        boxes[pick] = (Box){b.from, cut};
        boxes[nb++] = (Box){cut, b.to};
    }
    for (int i = 0; i < nb && p->n_pal < PAL_MAX; i++) {
        double sum[3] = {0, 0, 0}, wsum = 0;
        for (size_t j = boxes[i].from; j < boxes[i].to; j++) {
            double wgt = (double)c[j].count + 1;
            for (int a = 0; a < 3; a++) sum[a] += wgt * channel(c[j].rgb, a);
            wsum += wgt;
        }
        uint32_t rgb = 0;
        for (int a = 0; a < 3; a++) rgb = rgb << 8 | (uint32_t)lround(sum[a] / wsum);
        p->pal[p->n_pal++] = rgb;
    }
}

static uint8_t nearest(const GifPalette *p, uint32_t rgb)
{
    int r = (int)(rgb >> 16), g = (int)(rgb >> 8 & 255), b = (int)(rgb & 255);
    int best = 0, bd = 1 << 30;
    for (int i = 0; i < p->n_pal; i++) {
        int dr = r - (int)(p->pal[i] >> 16), dg = g - (int)(p->pal[i] >> 8 & 255), db = b - (int)(p->pal[i] & 255);
        int d = 2 * dr * dr + 4 * dg * dg + 3 * db * db;
        if (d < bd) bd = d, best = i;
        if (!d) break;
    }
    return (uint8_t)best;
}

// Makes the palette from what was observed; the table becomes the colour → entry map.
bool gif_palette_make(GifPalette *p)
{
    GifColour *c = malloc(sizeof *c * (p->n ? p->n : 1));
    if (!c) return false;
    size_t n = 0;
    for (uint32_t h = 0; h < HIST_SIZE; h++)
        if (p->key[h]) c[n++] = p->hist[h];
    qsort(c, n, sizeof *c, by_flat);
    size_t exact = 0;
    if (n <= PAL_MAX) exact = n;
    else
        while (exact < n && exact < EXACT_MAX && c[exact].flat > 0) exact++;
    p->n_pal = 0;
    for (size_t i = 0; i < exact; i++) p->pal[p->n_pal++] = c[i].rgb;
    median_cut(p, c + exact, n - exact, PAL_MAX - (int)exact);
    free(c);
    memset(p->key, 0, sizeof *p->key * HIST_SIZE);
    p->n = 0;
    p->ready = true;
    return true;
}

// The frame as palette entries in dst (rows dpitch bytes).
void gif_palette_map(GifPalette *p, const unsigned char *rgba, int pitch, int w, int h, uint8_t *dst, int dpitch)
{
    for (int y = 0; y < h; y++) {
        const unsigned char *s = rgba + (size_t)y * (size_t)pitch;
        uint8_t *d = dst + (size_t)y * (size_t)dpitch;
        uint32_t last = 0xFFFFFFFFu;
        uint8_t idx = 0;
        for (int x = 0; x < w; x++, s += 4) {
            uint32_t rgb = (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
            if (rgb != last) {
                last = rgb;
                uint32_t hh = hash_rgb(rgb);
                while (p->key[hh] && p->key[hh] != rgb + 1) hh = (hh + 1) & (HIST_SIZE - 1);
                if (p->key[hh]) {
                    idx = p->index[hh];
                } else {
                    idx = nearest(p, rgb);
                    if (p->n < HIST_SIZE / 4 * 3) p->key[hh] = rgb + 1, p->index[hh] = idx, p->n++;
                }
            }
            d[x] = idx;
        }
    }
}

bool gif_palette_init(GifPalette *p)
{
    memset(p, 0, sizeof *p);
    p->key = calloc(HIST_SIZE, sizeof *p->key);
    p->hist = malloc(sizeof *p->hist * HIST_SIZE);
    p->index = malloc(sizeof *p->index * HIST_SIZE);
    if (p->key && p->hist && p->index) return true;
    gif_palette_free(p);
    return false;
}

void gif_palette_free(GifPalette *p)
{
    free(p->key);
    free(p->hist);
    free(p->index);
    p->key = NULL, p->hist = NULL, p->index = NULL;
}
