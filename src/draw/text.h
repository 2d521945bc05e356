// text.h — fonts (found with fontconfig or given with --font) and a bounded
// cache of rendered text textures keyed by string + face + size + wrap width +
// colour. The colour is in the texture (a texture per colour a string is drawn
// in), never a colour modulation at draw time: SDL blends modulated textures in
// slow generic code. Alpha below 255 (fades) is the only modulation. Once a
// string is cached, drawing it costs one SDL_RenderCopy: no TTF work and no
// allocation per frame. Measuring a string caches its size without a texture.
#ifndef ATTNVIZ_TEXT_H
#define ATTNVIZ_TEXT_H

#include <SDL.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "drawlist.h" // FontFace, TextAlign
#include "lang.h"

typedef struct Fonts Fonts;

// Finds the faces and initialises SDL_ttf: a Latin family (DejaVu, or
// font_path for every face) and a CJK family (WenQuanYi Micro Hei or another
// zh-cn font fontconfig knows). A font_path with Chinese glyphs covers both;
// DejaVu then fills in the glyphs it lacks.
// A missing CJK family is not an error (see fonts_have_cjk); lang only words
// the error message. On failure: one line in err, NULL returned.
Fonts *fonts_create(const char *font_path, Lang lang, char *err, size_t err_len);
void fonts_destroy(Fonts *f);
// Whether a font with Chinese glyphs was found (fontconfig or --font). Every
// face draws with the Latin font first and takes the glyphs it lacks from the
// CJK font, run by run, in both languages: mixed text (中文 + Q·Kᵀ/√dₖ) shows no
// missing-glyph boxes, and switching language needs no other fonts.
bool fonts_have_cjk(const Fonts *f);
// lang, or LANG_EN with one line on warn (if not NULL) when lang is zh and
// there is no CJK font.
Lang fonts_usable_lang(const Fonts *f, Lang lang, FILE *warn);
// How many code points of s no font of this face has (tests: 0 = no boxes).
int fonts_missing_glyphs(Fonts *f, FontFace face, const char *s);
// Drops every cached texture (call before destroying the renderer they belong to).
void fonts_flush(Fonts *f);

// The cached texture for s in colour c (c.a is not used: pass it to
// SDL_SetTextureAlphaMod), its size in *w, *h; wrap_w > 0 wraps lines at that
// width (and honours '\n'). NULL for an empty string or on failure.
SDL_Texture *text_texture(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, SDL_Color c,
                          const char *s, int *w, int *h);
// The size text_texture's texture has, without making one; false where it gives NULL.
bool text_block_size(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, const char *s, int *w,
                     int *h);
// Width of one line of s as it would be drawn, measured with the fonts (no
// texture, no renderer): what layout measures text with (View.measure).
int text_width(Fonts *f, FontFace face, int px, const char *s);
// Height of s wrapped at wrap_w, as text_texture would draw it, without drawing it.
int text_wrapped_height(Fonts *f, FontFace face, int px, int wrap_w, const char *s);
// The same as a TextMeasure callback (view.h): fonts is a Fonts *.
int text_measure(void *fonts, bool bold, int px, const char *s);
// Size of s as it would be drawn (uses the cache).
void text_size(Fonts *f, SDL_Renderer *r, FontFace face, int px, const char *s, int *w, int *h);
// Draws s with its top-left (ALIGN_LEFT), top-centre or top-right at (x, y).
// Returns the drawn width.
int text_draw(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c, int x, int y,
              TextAlign align, const char *s);
// Draws s centred in the box (both axes).
void text_draw_centered(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c,
                        SDL_Rect box, const char *s);
// Wrapped text in a box; shrinks the size (down to min_px) until it fits the
// height. Returns the height used.
int text_draw_wrapped(Fonts *f, SDL_Renderer *r, FontFace face, int px, int min_px, SDL_Color c,
                      SDL_Rect box, const char *s);

// Draws s (wrapped at wrap_w when > 0) with its top-left at (x, y).
void text_draw_block(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, SDL_Color c, int x, int y,
                     const char *s);

// One run of text drawn with one font, where text_texture's texture would have
// it: for a backend that draws text itself (the vector backend of paint.h).
typedef struct TextRun {
    const char *font_path; // the font file, its index in a collection
    int font_index;
    bool synth_bold;       // bold made by emboldening the regular font
    const char *family;    // the font's family name ("DejaVu Sans"), or ""
    FontFace face;
    int px;                // pixel size (em)
    int x, baseline;       // from the block's top-left
    int w;                 // the run's advance, as measured by the fonts
    const char *utf8;      // NUL-terminated; valid during the call
} TextRun;
typedef void (*TextRunFn)(const TextRun *run, void *ctx);
// Calls fn for every run of s (wrapped at wrap_w when > 0, and at '\n' then)
// as text_texture lays it out: the same lines, fonts and positions. False for
// an empty string or when it cannot be laid out.
bool text_runs(Fonts *f, FontFace face, int px, int wrap_w, const char *s, TextRunFn fn, void *ctx);

// Statistics, for tests and the benchmark.
typedef struct TextStats {
    unsigned long hits, misses, evictions;
    size_t bytes; // pixels the texture cache holds now (w·h·4), at most its cap (16 MiB)
} TextStats;
TextStats text_stats(const Fonts *f);

#endif
