// text.c — fontconfig lookup, sized TTF_Font table, and the texture cache.
#include "text.h"

#include <SDL_ttf.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <string.h>

#define MAX_SIZED 32     // (face, px) fonts kept open
#define CACHE_SETS 256   // texture cache: CACHE_SETS × CACHE_WAYS entries
#define CACHE_WAYS 8
#define PATH_MAX_LEN 1024

typedef struct Sized {
    FontFace face;
    int px;
    TTF_Font *font;
} Sized;

typedef struct Entry {
    unsigned long long hash; // of the string, face, px, wrap
    unsigned long long used; // LRU stamp
    SDL_Texture *tex;
    int w, h;
} Entry;

struct Fonts {
    char path[FONT_FACE_COUNT][PATH_MAX_LEN];
    int face_index[FONT_FACE_COUNT]; // index in a .ttc collection
    Sized sized[MAX_SIZED];
    int n_sized;
    SDL_Renderer *owner;             // cached textures belong to this renderer
    Entry cache[CACHE_SETS][CACHE_WAYS];
    unsigned long long clock;
    TextStats stats;
    bool ttf_inited;
};

// fontconfig: the file of the best match for pattern, or false.
static bool fc_find(const char *pattern, char *out, size_t n, int *index)
{
    FcPattern *pat = FcNameParse((const FcChar8 *)pattern);
    if (!pat) return false;
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *match = FcFontMatch(NULL, pat, &res);
    bool ok = false;
    FcChar8 *file = NULL;
    if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch) {
        // accept only the family asked for (fontconfig always returns *something*)
        FcChar8 *fam = NULL;
        char want[128];
        snprintf(want, sizeof want, "%s", pattern);
        char *colon = strchr(want, ':');
        if (colon) *colon = '\0';
        for (int i = 0; FcPatternGetString(match, FC_FAMILY, i, &fam) == FcResultMatch; i++)
            if (strcasecmp((const char *)fam, want) == 0) ok = true;
        if (ok) {
            snprintf(out, n, "%s", (const char *)file);
            int idx = 0;
            FcPatternGetInteger(match, FC_INDEX, 0, &idx);
            *index = idx;
        }
    }
    if (match) FcPatternDestroy(match);
    FcPatternDestroy(pat);
    return ok;
}

Fonts *fonts_create(const char *font_path, Lang lang, char *err, size_t err_len)
{
    Fonts *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, err_len, "attnviz: out of memory");
        return NULL;
    }
    if (font_path) {
        FILE *fp = fopen(font_path, "rb");
        if (!fp) {
            snprintf(err, err_len, "%s: cannot open the font given with --font", font_path);
            free(f);
            return NULL;
        }
        fclose(fp);
        for (int i = 0; i < FONT_FACE_COUNT; i++) snprintf(f->path[i], PATH_MAX_LEN, "%s", font_path);
    } else {
        bool ok = FcInit();
        const char *sans = lang == LANG_ZH ? "WenQuanYi Micro Hei" : "DejaVu Sans";
        const char *bold = lang == LANG_ZH ? "WenQuanYi Micro Hei" : "DejaVu Sans:bold";
        ok = ok && fc_find(sans, f->path[FONT_SANS], PATH_MAX_LEN, &f->face_index[FONT_SANS]);
        if (ok && !fc_find(bold, f->path[FONT_BOLD], PATH_MAX_LEN, &f->face_index[FONT_BOLD])) {
            memcpy(f->path[FONT_BOLD], f->path[FONT_SANS], PATH_MAX_LEN);
            f->face_index[FONT_BOLD] = f->face_index[FONT_SANS];
        }
        if (ok && !fc_find("DejaVu Sans Mono", f->path[FONT_MONO], PATH_MAX_LEN,
                           &f->face_index[FONT_MONO])) {
            memcpy(f->path[FONT_MONO], f->path[FONT_SANS], PATH_MAX_LEN);
            f->face_index[FONT_MONO] = f->face_index[FONT_SANS];
        }
        FcFini(); // the lookup is done: release fontconfig's caches
        if (!ok) {
            snprintf(err, err_len,
                     "attnviz: font \"%s\" not found with fontconfig (install fonts-dejavu-core%s "
                     "or pass --font PATH)",
                     sans, lang == LANG_ZH ? " and fonts-wqy-microhei" : "");
            free(f);
            return NULL;
        }
    }
    if (!TTF_WasInit() && TTF_Init() != 0) {
        snprintf(err, err_len, "attnviz: cannot initialise SDL_ttf: %s", TTF_GetError());
        free(f);
        return NULL;
    }
    f->ttf_inited = true;
    // open one size now so a broken font file fails here, with its path
    TTF_Font *probe = TTF_OpenFontIndex(f->path[FONT_SANS], 20, f->face_index[FONT_SANS]);
    if (!probe) {
        snprintf(err, err_len, "%s: cannot load the font: %s", f->path[FONT_SANS], TTF_GetError());
        fonts_destroy(f);
        return NULL;
    }
    TTF_CloseFont(probe);
    return f;
}

void fonts_flush(Fonts *f)
{
    if (!f) return;
    for (int s = 0; s < CACHE_SETS; s++)
        for (int w = 0; w < CACHE_WAYS; w++) {
            if (f->cache[s][w].tex) SDL_DestroyTexture(f->cache[s][w].tex);
            f->cache[s][w] = (Entry){0};
        }
    f->owner = NULL;
}

void fonts_destroy(Fonts *f)
{
    if (!f) return;
    fonts_flush(f);
    for (int i = 0; i < f->n_sized; i++) TTF_CloseFont(f->sized[i].font);
    if (f->ttf_inited) TTF_Quit();
    free(f);
}

static TTF_Font *sized(Fonts *f, FontFace face, int px)
{
    for (int i = 0; i < f->n_sized; i++)
        if (f->sized[i].face == face && f->sized[i].px == px) return f->sized[i].font;
    TTF_Font *font = TTF_OpenFontIndex(f->path[face], px, f->face_index[face]);
    if (!font) return NULL;
    if (face == FONT_BOLD && strcmp(f->path[FONT_BOLD], f->path[FONT_SANS]) == 0)
        TTF_SetFontStyle(font, TTF_STYLE_BOLD);
    if (f->n_sized == MAX_SIZED) { // full (many resizes): recycle the oldest
        TTF_CloseFont(f->sized[0].font);
        memmove(f->sized, f->sized + 1, sizeof f->sized[0] * (MAX_SIZED - 1));
        f->n_sized--;
    }
    f->sized[f->n_sized++] = (Sized){face, px, font};
    return font;
}

static unsigned long long hash_key(const char *s, FontFace face, int px, int wrap)
{
    unsigned long long h = 1469598103934665603ULL; // FNV-1a 64
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    h ^= (unsigned long long)face * 0x9E3779B97F4A7C15ULL;
    h = (h ^ (unsigned long long)(unsigned)px) * 1099511628211ULL;
    h = (h ^ (unsigned long long)(unsigned)wrap) * 1099511628211ULL;
    return h | 1; // 0 marks an empty slot
}

SDL_Texture *text_texture(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w,
                          const char *s, int *w, int *h)
{
    *w = *h = 0;
    if (!s || !*s || px <= 0) return NULL;
    if (f->owner != r) {
        fonts_flush(f);
        f->owner = r;
    }
    unsigned long long key = hash_key(s, face, px, wrap_w);
    Entry *set = f->cache[(key >> 17) % CACHE_SETS];
    f->clock++;
    Entry *victim = &set[0];
    for (int i = 0; i < CACHE_WAYS; i++) {
        if (set[i].hash == key) {
            set[i].used = f->clock;
            f->stats.hits++;
            *w = set[i].w, *h = set[i].h;
            return set[i].tex;
        }
        if (set[i].used < victim->used) victim = &set[i];
    }
    f->stats.misses++;
    TTF_Font *font = sized(f, face, px);
    if (!font) return NULL;
    SDL_Color white = {255, 255, 255, 255};
    SDL_Surface *surf = wrap_w > 0 ? TTF_RenderUTF8_Blended_Wrapped(font, s, white, (Uint32)wrap_w)
                                   : TTF_RenderUTF8_Blended(font, s, white);
    if (!surf) return NULL;
    SDL_Texture *tex = SDL_CreateTextureFromSurface(r, surf);
    int sw = surf->w, sh = surf->h;
    SDL_FreeSurface(surf);
    if (!tex) return NULL;
    SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_BLEND);
    if (victim->tex) {
        SDL_DestroyTexture(victim->tex);
        f->stats.evictions++;
    }
    *victim = (Entry){key, f->clock, tex, sw, sh};
    *w = sw, *h = sh;
    return tex;
}

void text_size(Fonts *f, SDL_Renderer *r, FontFace face, int px, const char *s, int *w, int *h)
{
    text_texture(f, r, face, px, 0, s, w, h);
}

static void blit(SDL_Renderer *r, SDL_Texture *t, SDL_Color c, int x, int y, int w, int h)
{
    SDL_SetTextureColorMod(t, c.r, c.g, c.b);
    SDL_SetTextureAlphaMod(t, c.a);
    SDL_Rect d = {x, y, w, h};
    SDL_RenderCopy(r, t, NULL, &d);
}

int text_draw(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c, int x, int y,
              TextAlign align, const char *s)
{
    int w, h;
    SDL_Texture *t = text_texture(f, r, face, px, 0, s, &w, &h);
    if (!t) return 0;
    if (align == ALIGN_CENTER) x -= w / 2;
    if (align == ALIGN_RIGHT) x -= w;
    blit(r, t, c, x, y, w, h);
    return w;
}

void text_draw_centered(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c,
                        SDL_Rect box, const char *s)
{
    int w, h;
    SDL_Texture *t = text_texture(f, r, face, px, 0, s, &w, &h);
    if (!t) return;
    blit(r, t, c, box.x + (box.w - w) / 2, box.y + (box.h - h) / 2, w, h);
}

int text_draw_wrapped(Fonts *f, SDL_Renderer *r, FontFace face, int px, int min_px, SDL_Color c,
                      SDL_Rect box, const char *s)
{
    int w = 0, h = 0;
    SDL_Texture *t = NULL;
    for (; px >= min_px; px -= 2) {
        t = text_texture(f, r, face, px, box.w, s, &w, &h);
        if (!t || h <= box.h) break;
    }
    if (!t) return 0;
    // never draw past the box: crop the texture instead of scaling it
    int ch = h < box.h ? h : box.h, cw = w < box.w ? w : box.w;
    SDL_SetTextureColorMod(t, c.r, c.g, c.b);
    SDL_SetTextureAlphaMod(t, c.a);
    SDL_Rect src = {0, 0, cw, ch}, dst = {box.x, box.y, cw, ch};
    SDL_RenderCopy(r, t, &src, &dst);
    return ch;
}

TextStats text_stats(const Fonts *f) { return f->stats; }
