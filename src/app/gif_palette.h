// gif_palette.h — one palette of 255 colours for a whole GIF, made from its frames.
//
// One palette for the whole GIF, made from every frame before the first is
// encoded (gif_palette_observe): with the same palette in every frame the encoder
// writes only the rectangle that changed and marks unchanged pixels transparent.
// Its 255 colours: the colours of flat areas (runs of 8 or more equal pixels:
// the page, the panels, the cells of a heatmap, over all frames) exactly, the
// most used first, then a weighted median cut of all the colours for the rest
// (text edges, image-mode heatmaps). Pixels take the nearest palette colour,
// no dithering: a cell is one colour. Entry 255 is the transparent one.
#ifndef ATTNVIZ_GIF_PALETTE_H
#define ATTNVIZ_GIF_PALETTE_H

#include <stdbool.h>
#include <stdint.h>

#define GIF_PALETTE_TRANSPARENT 255 // the entry no colour takes: "unchanged" in a frame

struct GifColour;

typedef struct GifPalette {
    uint32_t *key;           // rgb + 1 (0 = empty): the histogram, then the colour → entry map
    struct GifColour *hist;
    uint8_t *index;          // the entry of a mapped colour
    uint32_t n;              // colours in the table
    bool ready;              // pal made (the table then maps colours to entries)
    uint32_t pal[256];       // 0xRRGGBB
    int n_pal;
} GifPalette;

// Allocates the tables (about 21 MB); false without memory (p then needs no free).
bool gif_palette_init(GifPalette *p);
void gif_palette_free(GifPalette *p);
// Counts the colours of a frame (h rows of w RGBA8 pixels, pitch bytes apart).
void gif_palette_observe(GifPalette *p, const unsigned char *rgba, int pitch, int w, int h);
// Makes the palette from what was observed; false without memory.
bool gif_palette_make(GifPalette *p);
// The frame as palette entries in dst (rows dpitch bytes apart), after gif_palette_make.
void gif_palette_map(GifPalette *p, const unsigned char *rgba, int pitch, int w, int h, uint8_t *dst, int dpitch);

#endif
