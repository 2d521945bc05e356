// gif_write.c — an animated GIF89a encoder (gif_write.h): LZW as the GIF89a
// specification (W3C, 1990) gives it, one global palette (gif_palette.h).
#include "gif_write.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gif_palette.h"
#include "temp_file.h"

#define PATH_IN_MSG 400
#define LZW_MAX_CODE 4096  // codes are at most 12 bits
#define LZW_HASH 5003      // a prime above 4096 · 1.2 (the table of prefix + byte → code)

struct GifWriter {
    int w, h, fps;
    long ticks;            // ticks written
    char path[4200], tmp[4300];
    FILE *f;
    bool failed;           // a write failed (errno in write_errno)
    int write_errno;
    GifPalette pal;
    uint8_t *cur, *prev;   // this frame's entries and the last written's (w·h each)
    bool any;              // a frame was written (prev holds it)
    // the LZW encoder's state
    int32_t hash_key[LZW_HASH];
    int16_t hash_code[LZW_HASH];
    uint32_t bits;         // pending bits, LSB first
    int n_bits;
    uint8_t block[256];    // block[0]: the sub-block's length
};

static void put(GifWriter *g, const void *p, size_t n)
{
    if (g->failed) return;
    if (fwrite(p, 1, n, g->f) != n) g->failed = true, g->write_errno = errno ? errno : EIO;
}
static void put_u16(GifWriter *g, int v)
{
    const uint8_t b[2] = {(uint8_t)(v & 255), (uint8_t)(v >> 8 & 255)};
    put(g, b, 2);
}

static void lzw_byte(GifWriter *g, uint8_t b)
{
    g->block[++g->block[0]] = b;
    if (g->block[0] == 255) put(g, g->block, 256), g->block[0] = 0;
}
static void lzw_code(GifWriter *g, int code, int width)
{
    g->bits |= (uint32_t)code << g->n_bits;
    g->n_bits += width;
    while (g->n_bits >= 8) lzw_byte(g, (uint8_t)(g->bits & 255)), g->bits >>= 8, g->n_bits -= 8;
}

// The image data of the w×h rectangle at (x, y) of the entries in px (rows stride apart):
// minimum code size 8, codes growing from 9 to 12 bits, a clear code when the table is full.
static void lzw_image(GifWriter *g, const uint8_t *px, int stride, int w, int h)
{
    enum { CLEAR = 256, END = 257 };
    const uint8_t min_size = 8;
    put(g, &min_size, 1);
    g->bits = 0, g->n_bits = 0, g->block[0] = 0;
    int width = 9, next = END + 1;
    memset(g->hash_key, 0xFF, sizeof g->hash_key);
    lzw_code(g, CLEAR, width);
    int prefix = px[0];
    for (long i = 1; i < (long)w * h; i++) {
        const uint8_t b = px[(i / w) * stride + i % w];
        const int32_t key = prefix << 8 | b;
        int slot = (int)((uint32_t)key % LZW_HASH);
        while (g->hash_key[slot] != -1 && g->hash_key[slot] != key) slot = (slot + 1) % LZW_HASH;
        if (g->hash_key[slot] == key) {
            prefix = g->hash_code[slot];
            continue;
        }
        lzw_code(g, prefix, width);
        if (next < LZW_MAX_CODE) {
            g->hash_key[slot] = key, g->hash_code[slot] = (int16_t)next;
            // the decoder widens its codes once it has made code 2^width
            if (next++ == 1 << width && width < 12) width++;
        } else { // the table is full: start again
            lzw_code(g, CLEAR, width);
            memset(g->hash_key, 0xFF, sizeof g->hash_key);
            width = 9, next = END + 1;
        }
        prefix = b;
    }
    lzw_code(g, prefix, width);
    // (the decoder has added an entry for that code too: the end code may be a bit wider)
    if (next < LZW_MAX_CODE && next == 1 << width && width < 12) width++;
    lzw_code(g, END, width);
    if (g->n_bits > 0) lzw_byte(g, (uint8_t)(g->bits & 255));
    if (g->block[0]) put(g, g->block, (size_t)g->block[0] + 1);
    const uint8_t end = 0;
    put(g, &end, 1);
}

GifWriter *gif_write_open(const char *path, int w, int h, int fps, char *err, size_t n)
{
    if (w < 1 || h < 1 || w > 65535 || h > 65535 || fps < 1 || fps > 100) {
        snprintf(err, n, "%.*s: a GIF is 1 to 65535 pixels a side at 1 to 100 frames a second (got %dx%d at %d)",
                 PATH_IN_MSG, path, w, h, fps);
        return NULL;
    }
    GifWriter *g = calloc(1, sizeof *g);
    if (g) g->cur = malloc((size_t)w * (size_t)h), g->prev = malloc((size_t)w * (size_t)h);
    if (!g || !g->cur || !g->prev || !gif_palette_init(&g->pal)) {
        snprintf(err, n, "%.*s: out of memory", PATH_IN_MSG, path);
        if (g) free(g->cur), free(g->prev);
        free(g);
        return NULL;
    }
    g->w = w, g->h = h, g->fps = fps;
    snprintf(g->path, sizeof g->path, "%s", path);
    g->f = temp_file_create(path, g->tmp, sizeof g->tmp);
    if (!g->f) {
        snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, path, strerror(errno));
        gif_write_close(g, false, err, n);
        return NULL;
    }
    return g;
}

bool gif_write_wants_observe(const GifWriter *g) { return !g->pal.ready; }

void gif_write_observe(GifWriter *g, const unsigned char *rgba, int pitch)
{
    if (!g->pal.ready) gif_palette_observe(&g->pal, rgba, pitch, g->w, g->h);
}

// The header, the palette (256 entries, 255 never a colour) and the loop for ever.
static void write_header(GifWriter *g)
{
    put(g, "GIF89a", 6);
    put_u16(g, g->w), put_u16(g, g->h);
    const uint8_t screen[3] = {0xF7, 0, 0}; // a global table of 256 colours (8 bits), background 0
    put(g, screen, 3);
    uint8_t table[256 * 3] = {0};
    for (int i = 0; i < g->pal.n_pal; i++)
        table[3 * i] = (uint8_t)(g->pal.pal[i] >> 16), table[3 * i + 1] = (uint8_t)(g->pal.pal[i] >> 8),
                  table[3 * i + 2] = (uint8_t)g->pal.pal[i];
    put(g, table, sizeof table);
    static const uint8_t loop[19] = {0x21, 0xFF, 11, 'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0',
                                     3,    1,    0,  0,   0};
    put(g, loop, sizeof loop);
}

// One tick: the rectangle of cur that differs from the frame before (unchanged pixels in
// it transparent), or one transparent pixel when nothing changed (held: the tick after
// the frame's first, cur already written).
static void write_tick(GifWriter *g, bool held)
{
    const int w = g->w, h = g->h;
    int x0 = 0, y0 = 0, x1 = w - 1, y1 = h - 1; // the first frame: all of it
    bool same = held;
    if (g->any && !held) {
        x0 = w, y0 = h, x1 = -1, y1 = -1;
        for (int y = 0; y < h; y++) {
            const uint8_t *c = g->cur + (size_t)y * (size_t)w, *p = g->prev + (size_t)y * (size_t)w;
            if (memcmp(c, p, (size_t)w) == 0) continue;
            int a = 0, b = w - 1;
            while (c[a] == p[a]) a++;
            while (c[b] == p[b]) b--;
            if (a < x0) x0 = a;
            if (b > x1) x1 = b;
            if (y < y0) y0 = y;
            y1 = y;
        }
        same = x1 < 0;
    }
    if (same) x0 = y0 = x1 = y1 = 0;
    const long t = g->ticks++;
    const int delay = (int)(lround((double)(t + 1) * 100.0 / g->fps) - lround((double)t * 100.0 / g->fps));
    const uint8_t gce[8] = {0x21, 0xF9, 4, (uint8_t)(1 << 2 | (g->any ? 1 : 0)), (uint8_t)(delay & 255),
                            (uint8_t)(delay >> 8), GIF_PALETTE_TRANSPARENT, 0}; // kept under the next frame
    put(g, gce, sizeof gce);
    const uint8_t sep = 0x2C, flags = 0;
    put(g, &sep, 1);
    put_u16(g, x0), put_u16(g, y0), put_u16(g, x1 - x0 + 1), put_u16(g, y1 - y0 + 1);
    put(g, &flags, 1);
    if (same) {
        const uint8_t clear = GIF_PALETTE_TRANSPARENT;
        lzw_image(g, &clear, 1, 1, 1);
        return;
    }
    // cur becomes the frame shown (prev), its rectangle with unchanged pixels transparent in cur
    for (int y = y0; y <= y1; y++) {
        uint8_t *c = g->cur + (size_t)y * (size_t)w, *p = g->prev + (size_t)y * (size_t)w;
        for (int x = x0; x <= x1; x++) {
            const uint8_t v = c[x];
            if (g->any && v == p[x]) c[x] = GIF_PALETTE_TRANSPARENT;
            else p[x] = v;
        }
    }
    if (!g->any) memcpy(g->prev, g->cur, (size_t)w * (size_t)h);
    lzw_image(g, g->cur + (size_t)y0 * (size_t)w + x0, w, x1 - x0 + 1, y1 - y0 + 1);
    g->any = true;
}

bool gif_write_frame(GifWriter *g, const unsigned char *rgba, int pitch, int ticks, char *err, size_t n)
{
    if (!g->pal.ready) { // nothing observed: this frame's colours make the palette
        if (g->pal.n == 0) gif_palette_observe(&g->pal, rgba, pitch, g->w, g->h);
        if (!gif_palette_make(&g->pal)) {
            snprintf(err, n, "%.*s: out of memory choosing the colours", PATH_IN_MSG, g->path);
            return false;
        }
    }
    if (g->ticks == 0) write_header(g);
    gif_palette_map(&g->pal, rgba, pitch, g->w, g->h, g->cur, g->w);
    if (ticks < 1) ticks = 1;
    for (int k = 0; k < ticks; k++) write_tick(g, k > 0);
    if (g->failed) snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, g->path, strerror(g->write_errno));
    return !g->failed;
}

bool gif_write_close(GifWriter *g, bool keep, char *err, size_t n)
{
    if (!g) return true;
    bool ok = keep;
    if (keep && g->ticks == 0) {
        snprintf(err, n, "%.*s: no frame to write", PATH_IN_MSG, g->path);
        ok = false;
    }
    if (ok) {
        const uint8_t trailer = 0x3B;
        put(g, &trailer, 1);
        if (!g->failed && fflush(g->f) != 0) g->failed = true, g->write_errno = errno;
        ok = !g->failed;
    }
    if (g->f) {
        if (fclose(g->f) != 0 && ok) g->failed = true, g->write_errno = errno, ok = false;
        if (ok && rename(g->tmp, g->path) != 0) g->write_errno = errno, ok = false;
        if (!ok) unlink(g->tmp);
        if (keep && !ok && g->ticks > 0)
            snprintf(err, n, "%.*s: cannot write: %s", PATH_IN_MSG, g->path, strerror(g->write_errno));
    }
    gif_palette_free(&g->pal);
    free(g->cur);
    free(g->prev);
    free(g);
    return ok || !keep;
}
