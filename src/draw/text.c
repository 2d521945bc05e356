// text.c — font lookup (fontconfig; a folder of known files in the browser build), sized TTF_Font table, and the texture cache.
#include "text.h"

#include "utf8.h"

#include <SDL_ttf.h>
#include <fcntl.h>
#ifndef ATTNVIZ_FONT_DIR
#include <fontconfig/fontconfig.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SIZED 48     // (font, px) fonts kept open
#define CACHE_SETS 256   // texture cache: CACHE_SETS × CACHE_WAYS entries
#define CACHE_WAYS 8
// Bytes of cached text pixels at most: several frames of text even at 4K, and a
// footprint that does not depend on which window sizes were visited.
#define CACHE_BYTES (16u << 20)
#define PATH_MAX_LEN 1024

// Two families of files, each with the three faces: Latin (DejaVu, or --font)
// and CJK (WenQuanYi Micro Hei or another font fontconfig knows for zh-cn).
// A face is drawn with a primary font (Latin) and a fallback font (the same
// face of the CJK family). A string whose every glyph the primary font has is
// rendered by SDL_ttf in one piece; otherwise it is cut into runs, each drawn
// with the font that has its glyphs, and wrapped here (also Chinese text,
// which SDL_ttf would break only at spaces).
enum { FAM_LATIN, FAM_CJK, FAM_COUNT };
#define N_SLOTS (FAM_COUNT * FONT_FACE_COUNT) // slot = family * FONT_FACE_COUNT + face

typedef struct Sized {
    int slot;
    int px;
    TTF_Font *font;
} Sized;

// A font file mapped into memory once: FreeType then reads its glyphs from
// memory. Read through a file, every glyph was an lseek and a read (some 9,000
// system calls before the first frame); and the CJK file (5 MB) costs only the
// pages of the glyphs drawn, so English text never reads its outlines.
typedef struct Mapped {
    char path[PATH_MAX_LEN];
    void *data;
    size_t size;
} Mapped;

typedef struct Entry {
    unsigned long long hash; // of the string, face, px, wrap (not the colour)
    unsigned long long used; // LRU stamp
    SDL_Texture *tex;        // NULL: measured, not drawn yet (only w, h known)
    Uint32 rgb;              // the colour in tex, 0xRRGGBB
    int w, h;
} Entry;

struct Fonts {
    char path[N_SLOTS][PATH_MAX_LEN]; // "" = no such file (no CJK font)
    int face_index[N_SLOTS];          // index in a .ttc collection
    bool have_cjk;
    Sized sized[MAX_SIZED];
    int n_sized;
    SDL_Renderer *owner;             // cached textures belong to this renderer
    Uint32 format;                   // ... and have this pixel format (see text_format)
    Entry cache[CACHE_SETS][CACHE_WAYS];
    size_t bytes;                    // pixels held by the cached textures (w·h·4)
    unsigned long long clock;
    TextStats stats;
    bool ttf_inited;
    Mapped mapped[N_SLOTS];
    int n_mapped;
};

#ifdef ATTNVIZ_FONT_DIR
// The browser build has no fontconfig: the fonts the page ships (Debian's files,
// copied by make web) are in ATTNVIZ_FONT_DIR under these names; a family is
// found when its file is there (the Chinese one arrives when Chinese is shown).
typedef unsigned FcChar32;
static bool lookup_begin(void) { return true; }
static void lookup_end(void) {}
static bool fc_find_ex(const char *pattern, bool any_family, FcChar32 needs, char *out, size_t n, int *index)
{
    static const struct { const char *pattern, *file; int index; } known[] = {
        {"DejaVu Sans", "DejaVuSans.ttf", 0},          {"DejaVu Sans:bold", "DejaVuSans-Bold.ttf", 0},
        {"DejaVu Sans Mono", "DejaVuSansMono.ttf", 0}, {"WenQuanYi Micro Hei", "wqy-microhei.ttc", 0},
        {"WenQuanYi Micro Hei Mono", "wqy-microhei.ttc", 1}, {":lang=zh-cn", "wqy-microhei.ttc", 0},
    };
    (void)any_family, (void)needs; // (the CJK file is checked for Chinese glyphs after the lookup)
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(pattern, known[i].pattern) != 0) continue;
        // out only when the file is there: sized_slot opens a set path at every text measured
        // (the Chinese font before Chinese is shown: 982 failed opens a character typed)
        char file[PATH_MAX_LEN];
        snprintf(file, sizeof file, "%s/%s", ATTNVIZ_FONT_DIR, known[i].file);
        if (access(file, R_OK) != 0) return false;
        snprintf(out, n, "%s", file);
        *index = known[i].index;
        return true;
    }
    return false;
}
#else
static bool lookup_begin(void) { return FcInit(); }
static void lookup_end(void) { FcFini(); }
// fontconfig: the file of the best match for pattern, or false. With
// any_family, any match covering the code point `needs` is accepted.
static bool fc_find_ex(const char *pattern, bool any_family, FcChar32 needs, char *out, size_t n,
                       int *index)
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
        if (any_family) ok = true;
        for (int i = 0; !ok && FcPatternGetString(match, FC_FAMILY, i, &fam) == FcResultMatch; i++)
            if (strcasecmp((const char *)fam, want) == 0) ok = true;
        FcCharSet *cs = NULL;
        if (ok && needs && (FcPatternGetCharSet(match, FC_CHARSET, 0, &cs) != FcResultMatch ||
                            !FcCharSetHasChar(cs, needs)))
            ok = false;
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
#endif

static bool fc_find(const char *pattern, char *out, size_t n, int *index)
{
    return fc_find_ex(pattern, false, 0, out, n, index);
}

static void copy_slot(Fonts *f, int to, int from)
{
    memcpy(f->path[to], f->path[from], PATH_MAX_LEN);
    f->face_index[to] = f->face_index[from];
}

#define CJK_PROBE 0x6CE8 // 注, in any usable Chinese font

// The CJK family: known good Simplified Chinese fonts first, then whatever
// fontconfig offers for zh-cn that really has Chinese glyphs.
static bool find_cjk(Fonts *f)
{
    static const char *const names[] = {"WenQuanYi Micro Hei", "Noto Sans CJK SC", "Source Han Sans SC",
                                        "WenQuanYi Zen Hei", "Noto Sans SC", "Droid Sans Fallback"};
    int s = FAM_CJK * FONT_FACE_COUNT;
    bool ok = false;
    for (size_t i = 0; !ok && i < sizeof names / sizeof names[0]; i++)
        ok = fc_find(names[i], f->path[s + FONT_SANS], PATH_MAX_LEN, &f->face_index[s + FONT_SANS]);
    if (!ok)
        ok = fc_find_ex(":lang=zh-cn", true, CJK_PROBE, f->path[s + FONT_SANS], PATH_MAX_LEN,
                        &f->face_index[s + FONT_SANS]);
    if (!ok) return false;
    copy_slot(f, s + FONT_BOLD, s + FONT_SANS); // synthetic bold (WenQuanYi has no bold)
    if (!fc_find("WenQuanYi Micro Hei Mono", f->path[s + FONT_MONO], PATH_MAX_LEN, &f->face_index[s + FONT_MONO]))
        copy_slot(f, s + FONT_MONO, s + FONT_SANS);
    return true;
}

// The font file of slot opened at px: from its mapping (made at the first use
// of the file), or from the file when it cannot be mapped.
static TTF_Font *open_slot(Fonts *f, int slot, int px)
{
    const char *path = f->path[slot];
    Mapped *m = NULL;
    for (int i = 0; i < f->n_mapped && !m; i++)
        if (strcmp(f->mapped[i].path, path) == 0) m = &f->mapped[i];
    if (!m && f->n_mapped < N_SLOTS) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (data != MAP_FAILED) {
                m = &f->mapped[f->n_mapped++];
                memmove(m->path, path, strlen(path) + 1); // both PATH_MAX_LEN
                m->data = data, m->size = (size_t)st.st_size;
            }
        }
        if (fd >= 0) close(fd);
    }
    if (!m) return TTF_OpenFontIndex(path, px, f->face_index[slot]);
    SDL_RWops *rw = SDL_RWFromConstMem(m->data, (int)m->size);
    return rw ? TTF_OpenFontIndexRW(rw, 1, px, f->face_index[slot]) : NULL;
}

// Does the font file in slot have a glyph for cp? (opens it once at a small size)
static bool slot_has_glyph(Fonts *f, int slot, Uint32 cp)
{
    if (!f->path[slot][0]) return false;
    TTF_Font *font = open_slot(f, slot, 12);
    if (!font) return false;
    bool has = TTF_GlyphIsProvided32(font, cp) != 0;
    TTF_CloseFont(font);
    return has;
}

Fonts *fonts_create(const char *font_path, Lang lang, char *err, size_t err_len)
{
    Fonts *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, err_len, "attnviz: out of memory");
        return NULL;
    }
    const int L0 = FAM_LATIN * FONT_FACE_COUNT, C0 = FAM_CJK * FONT_FACE_COUNT;
    if (TTF_Init() != 0) { // reference-counted by SDL_ttf
        snprintf(err, err_len, "attnviz: cannot initialise SDL_ttf: %s", TTF_GetError());
        free(f);
        return NULL;
    }
    f->ttf_inited = true;
    bool fc = lookup_begin();
    if (font_path) {
        FILE *fp = fopen(font_path, "rb");
        if (!fp) {
            snprintf(err, err_len, "%s: cannot open the font given with --font", font_path);
            if (fc) lookup_end();
            fonts_destroy(f);
            return NULL;
        }
        fclose(fp);
        for (int i = 0; i < FONT_FACE_COUNT; i++) snprintf(f->path[L0 + i], PATH_MAX_LEN, "%s", font_path);
        // A font with Chinese glyphs is the CJK family itself; the second family
        // is then DejaVu, for the maths it may lack (ᵀ ₖ …). Else CJK comes from fontconfig.
        if (slot_has_glyph(f, L0, CJK_PROBE)) {
            f->have_cjk = true;
            if (!fc || !fc_find("DejaVu Sans", f->path[C0 + FONT_SANS], PATH_MAX_LEN, &f->face_index[C0 + FONT_SANS]))
                copy_slot(f, C0 + FONT_SANS, L0 + FONT_SANS);
            if (!fc || !fc_find("DejaVu Sans:bold", f->path[C0 + FONT_BOLD], PATH_MAX_LEN, &f->face_index[C0 + FONT_BOLD]))
                copy_slot(f, C0 + FONT_BOLD, C0 + FONT_SANS);
            if (!fc || !fc_find("DejaVu Sans Mono", f->path[C0 + FONT_MONO], PATH_MAX_LEN, &f->face_index[C0 + FONT_MONO]))
                copy_slot(f, C0 + FONT_MONO, C0 + FONT_SANS);
        } else {
            f->have_cjk = fc && find_cjk(f);
        }
    } else {
        bool latin = fc && fc_find("DejaVu Sans", f->path[L0 + FONT_SANS], PATH_MAX_LEN,
                                   &f->face_index[L0 + FONT_SANS]);
        f->have_cjk = fc && find_cjk(f);
        if (!latin && f->have_cjk) { // no DejaVu: the CJK font's Latin letters will do
            for (int i = 0; i < FONT_FACE_COUNT; i++) copy_slot(f, L0 + i, C0 + i);
        } else if (latin) {
            if (!fc_find("DejaVu Sans:bold", f->path[L0 + FONT_BOLD], PATH_MAX_LEN, &f->face_index[L0 + FONT_BOLD]))
                copy_slot(f, L0 + FONT_BOLD, L0 + FONT_SANS);
            if (!fc_find("DejaVu Sans Mono", f->path[L0 + FONT_MONO], PATH_MAX_LEN, &f->face_index[L0 + FONT_MONO]))
                copy_slot(f, L0 + FONT_MONO, L0 + FONT_SANS);
        } else {
            snprintf(err, err_len,
                     "attnviz: font \"DejaVu Sans\" not found with fontconfig (install fonts-dejavu-core%s "
                     "or pass --font PATH)",
                     lang == LANG_ZH ? " and fonts-wqy-microhei" : "");
            if (fc) lookup_end();
            fonts_destroy(f);
            return NULL;
        }
    }
    if (fc) lookup_end(); // the lookup is done: release fontconfig's caches
    // open one size now so a broken font file fails here, with its path
    TTF_Font *probe = open_slot(f, L0 + FONT_SANS, 20);
    if (!probe) {
        snprintf(err, err_len, "%s: cannot load the font: %s", f->path[L0 + FONT_SANS], TTF_GetError());
        fonts_destroy(f);
        return NULL;
    }
    TTF_CloseFont(probe);
    if (f->have_cjk && !slot_has_glyph(f, C0 + FONT_SANS, CJK_PROBE) && !slot_has_glyph(f, L0 + FONT_SANS, CJK_PROBE)) {
        // unreadable or not Chinese
        for (int i = 0; i < FONT_FACE_COUNT; i++) f->path[C0 + i][0] = '\0';
        f->have_cjk = false;
    }
    (void)lang; // both languages use the same font list (see face_fonts)
    return f;
}

bool fonts_have_cjk(const Fonts *f) { return f && f->have_cjk; }

Lang fonts_usable_lang(const Fonts *f, Lang lang, FILE *warn)
{
    if (lang != LANG_ZH || fonts_have_cjk(f)) return lang;
    if (warn)
        fprintf(warn, "attnviz: no Chinese font found (install fonts-wqy-microhei or pass --font PATH); "
                      "showing English\n");
    return LANG_EN;
}

void fonts_flush(Fonts *f)
{
    if (!f) return;
    for (int s = 0; s < CACHE_SETS; s++)
        for (int w = 0; w < CACHE_WAYS; w++) {
            if (f->cache[s][w].tex) SDL_DestroyTexture(f->cache[s][w].tex);
            f->cache[s][w] = (Entry){0};
        }
    f->bytes = 0;
    f->owner = NULL;
}

void fonts_destroy(Fonts *f)
{
    if (!f) return;
    fonts_flush(f);
    for (int i = 0; i < f->n_sized; i++) TTF_CloseFont(f->sized[i].font);
    for (int i = 0; i < f->n_mapped; i++) munmap(f->mapped[i].data, f->mapped[i].size); // after the fonts reading them
    if (f->ttf_inited) TTF_Quit();
    free(f);
}

static TTF_Font *sized_slot(Fonts *f, int slot, int px)
{
    if (!f->path[slot][0]) return NULL;
    for (int i = 0; i < f->n_sized; i++)
        if (f->sized[i].slot == slot && f->sized[i].px == px) return f->sized[i].font;
    TTF_Font *font = open_slot(f, slot, px);
    if (!font) return NULL;
    int fam0 = slot - slot % FONT_FACE_COUNT;
    if (slot % FONT_FACE_COUNT == FONT_BOLD && strcmp(f->path[slot], f->path[fam0 + FONT_SANS]) == 0 &&
        f->face_index[slot] == f->face_index[fam0 + FONT_SANS])
        TTF_SetFontStyle(font, TTF_STYLE_BOLD);
    if (f->n_sized == MAX_SIZED) { // full (many resizes): recycle the oldest
        TTF_CloseFont(f->sized[0].font);
        memmove(f->sized, f->sized + 1, sizeof f->sized[0] * (MAX_SIZED - 1));
        f->n_sized--;
    }
    f->sized[f->n_sized++] = (Sized){slot, px, font};
    return font;
}

// The primary and the fallback font of a face: Latin first, CJK for the
// glyphs Latin lacks, in both languages (like a browser's font list "DejaVu
// Sans, WenQuanYi Micro Hei"): Latin letters, digits and maths look the same
// in en and zh, and synthetic bold never touches them.
static void face_fonts(Fonts *f, FontFace face, int px, TTF_Font **primary, TTF_Font **fallback)
{
    *primary = sized_slot(f, FAM_LATIN * FONT_FACE_COUNT + (int)face, px);
    *fallback = sized_slot(f, FAM_CJK * FONT_FACE_COUNT + (int)face, px);
    if (!*primary) *primary = *fallback, *fallback = NULL;
    if (*fallback && f->path[FAM_CJK * FONT_FACE_COUNT + (int)face][0] &&
        strcmp(f->path[FAM_CJK * FONT_FACE_COUNT + (int)face], f->path[FAM_LATIN * FONT_FACE_COUNT + (int)face]) == 0 &&
        f->face_index[FAM_CJK * FONT_FACE_COUNT + (int)face] == f->face_index[FAM_LATIN * FONT_FACE_COUNT + (int)face])
        *fallback = NULL; // --font with Chinese glyphs: one font does it all
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

// ---- mixed-font text: runs, wrapping, composition ---------------------------

// One code point at s (invalid bytes → U+FFFD, 1 byte): the core's decoder.
static Uint32 next_cp(const unsigned char *s, int *len)
{
    size_t n;
    Uint32 cp = utf8_next((const char *)s, &n);
    *len = (int)n;
    return cp;
}

// Which font draws cp: the primary when it has the glyph, else the fallback
// when that has it, else the primary (its "missing glyph" box).
static TTF_Font *font_for(TTF_Font *primary, TTF_Font *fallback, Uint32 cp)
{
    if (cp < 0x80 || !fallback || TTF_GlyphIsProvided32(primary, cp)) return primary;
    return TTF_GlyphIsProvided32(fallback, cp) ? fallback : primary;
}

int fonts_missing_glyphs(Fonts *f, FontFace face, const char *s)
{
    TTF_Font *p, *fb;
    face_fonts(f, face, 16, &p, &fb);
    if (!p || !s) return 0;
    int missing = 0, len;
    for (const unsigned char *q = (const unsigned char *)s; *q; q += len) {
        Uint32 cp = next_cp(q, &len);
        if (cp == '\n' || cp == '\t' || cp == '\r') continue;
        TTF_Font *font = font_for(p, fb, cp);
        missing += !TTF_GlyphIsProvided32(font, cp);
    }
    return missing;
}

#define MAX_LINES 256

typedef struct Mixed {
    TTF_Font *p, *fb;
    char buf[1024]; // one run, NUL-terminated (longer runs are measured/drawn in pieces)
    const char *line[MAX_LINES][2]; // [start, end) of each line
} Mixed;

// Calls fn for each maximal run of [a, b) drawn with one font.
typedef void (*RunFn)(Mixed *m, TTF_Font *font, const char *run, int x, void *ctx, int *adv);

static int for_runs(Mixed *m, const char *a, const char *b, RunFn fn, void *ctx)
{
    int x = 0;
    const char *run = a;
    TTF_Font *cur = NULL;
    for (const char *q = a;; ) {
        TTF_Font *font = NULL;
        int len = 0;
        if (q < b) font = font_for(m->p, m->fb, next_cp((const unsigned char *)q, &len));
        bool flush = q >= b || (cur && font != cur) || (size_t)(q - run) + 4 >= sizeof m->buf;
        if (flush && cur && q > run) {
            size_t n = (size_t)(q - run);
            memcpy(m->buf, run, n);
            m->buf[n] = '\0';
            int adv = 0;
            fn(m, cur, m->buf, x, ctx, &adv);
            x += adv;
            run = q;
        }
        if (q >= b) break;
        cur = font;
        q += len;
    }
    return x;
}

static void run_measure(Mixed *m, TTF_Font *font, const char *run, int x, void *ctx, int *adv)
{
    (void)m, (void)x, (void)ctx;
    int w = 0, h = 0;
    TTF_SizeUTF8(font, run, &w, &h);
    *adv = w;
}

static int measure(Mixed *m, const char *a, const char *b) { return for_runs(m, a, b, run_measure, NULL); }

int text_width(Fonts *f, FontFace face, int px, const char *s)
{
    TTF_Font *font, *fb;
    face_fonts(f, face, px, &font, &fb);
    if (!font || !s[0]) return 0;
    Mixed m; // on the stack: layout measures every label of every frame
    m.p = font, m.fb = fb;
    return measure(&m, s, s + strlen(s));
}

int text_measure(void *fonts, bool bold, int px, const char *s)
{
    return text_width(fonts, bold ? FONT_BOLD : FONT_SANS, px, s);
}

typedef struct Blit {
    SDL_Surface *dst;
    int y, ascent; // line top and the common baseline offset
} Blit;

static void run_blit(Mixed *m, TTF_Font *font, const char *run, int x, void *ctx, int *adv)
{
    (void)m;
    Blit *b = ctx;
    int w = 0, h = 0;
    TTF_SizeUTF8(font, run, &w, &h);
    *adv = w;
    SDL_Surface *s = TTF_RenderUTF8_Blended(font, run, (SDL_Color){255, 255, 255, 255});
    if (!s) return;
    SDL_SetSurfaceBlendMode(s, SDL_BLENDMODE_BLEND);
    SDL_Rect d = {x, b->y + b->ascent - TTF_FontAscent(font), s->w, s->h};
    SDL_BlitSurface(s, NULL, b->dst, &d);
    SDL_FreeSurface(s);
}

// Where a line may break: between code points a (before) and c (after).
static bool is_cjk(Uint32 c)
{
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

static bool no_break_before(Uint32 c) // closing punctuation stays with what precedes it
{
    static const Uint32 list[] = {0x3001, 0x3002, 0xFF0C, 0xFF0E, 0xFF1A, 0xFF1B, 0xFF01, 0xFF1F, 0xFF09,
                                  0x300B, 0x300D, 0x300F, 0x3011, 0x201D, 0x2019, 0x2026, ',', '.', ';',
                                  ':', '!', '?', ')', ']', '}'};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (list[i] == c) return true;
    return false;
}

static bool no_break_after(Uint32 c) // opening punctuation stays with what follows it
{
    return c == 0xFF08 || c == 0x300A || c == 0x300C || c == 0x300E || c == 0x3010 || c == 0x201C ||
           c == 0x2018 || c == '(' || c == '[';
}

static bool can_break(Uint32 a, Uint32 c)
{
    if (no_break_before(c) || no_break_after(a)) return false;
    return a == ' ' || is_cjk(a) || is_cjk(c);
}

// Splits s into lines at '\n' and, with wrap_w > 0, where a line would get
// wider than wrap_w. line[i] = {start, end} byte pointers (spaces at a wrap dropped).
static int break_lines(Mixed *m, const char *s, int wrap_w)
{
    const char *(*line)[2] = m->line;
    int n = 0;
    const char *p = s;
    while (n < MAX_LINES) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        const char *start = p;
        while (wrap_w > 0 && start < eol && measure(m, start, eol) > wrap_w && n < MAX_LINES - 1) {
            // the last break opportunity that still fits, else the last code point that fits
            const char *best = NULL, *fit = NULL, *q = start;
            Uint32 prev = 0;
            int len = 1;
            while (q < eol) {
                Uint32 c = next_cp((const unsigned char *)q, &len);
                if (q > start && can_break(prev, c)) {
                    const char *e = q;
                    while (e > start && e[-1] == ' ') e--;
                    if (measure(m, start, e) <= wrap_w) best = q;
                    else break;
                }
                if (measure(m, start, q + len) > wrap_w) break;
                fit = q + len;
                prev = c;
                q += len;
            }
            const char *cut = best ? best : fit ? fit : start + len; // at least one code point
            const char *e = cut;
            while (e > start && e[-1] == ' ') e--;
            line[n][0] = start, line[n][1] = e;
            n++;
            start = cut;
            while (start < eol && *start == ' ') start++;
        }
        line[n][0] = start, line[n][1] = eol;
        n++;
        if (!*eol) break;
        p = eol + 1;
    }
    return n;
}

static bool needs_mixed(TTF_Font *p, TTF_Font *fb, const char *s, bool wrap);

// Renders s with per-run fonts into one white ARGB surface (NULL on failure).
// The line box of composed text: the larger ascent and descent of the two fonts
// when s has a glyph of the fallback (else the primary's alone: English text sits
// where it does whether or not a Chinese font is installed, or fetched yet),
// the descent at least as deep as the underscore's ink (DejaVu Sans' "_" reaches a
// pixel below the font's descent at some sizes, 11, 12, 15 and 24 px among them: it
// was cut off the last line, "W_Q" read "W Q"), and the line skip.
static void line_box(TTF_Font *p, TTF_Font *fb, const char *s, int *asc, int *desc, int *skip)
{
    *asc = TTF_FontAscent(p), *desc = -TTF_FontDescent(p);
    if (fb && !needs_mixed(p, fb, s, false)) fb = NULL;
    if (fb && TTF_FontAscent(fb) > *asc) *asc = TTF_FontAscent(fb);
    if (fb && -TTF_FontDescent(fb) > *desc) *desc = -TTF_FontDescent(fb);
    int minx, maxx, miny, maxy, adv;
    if (TTF_GlyphMetrics32(p, '_', &minx, &maxx, &miny, &maxy, &adv) == 0 && -miny > *desc) *desc = -miny;
    *skip = TTF_FontLineSkip(p) > *asc + *desc ? TTF_FontLineSkip(p) : *asc + *desc;
}

static SDL_Surface *render_mixed(TTF_Font *p, TTF_Font *fb, int wrap_w, const char *s)
{
    Mixed *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->p = p, m->fb = fb;
    int n = break_lines(m, s, wrap_w);
    const char *(*line)[2] = m->line;
    int asc, desc, skip;
    line_box(p, fb, s, &asc, &desc, &skip);
    int w = 1;
    for (int i = 0; i < n; i++) {
        int lw = measure(m, line[i][0], line[i][1]);
        if (lw > w) w = lw;
    }
    int h = (n - 1) * skip + asc + desc;
    SDL_Surface *dst = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    if (dst) {
        // white with alpha 0: blending white glyphs onto it keeps the colour white
        SDL_FillRect(dst, NULL, SDL_MapRGBA(dst->format, 255, 255, 255, 0));
        for (int i = 0; i < n; i++) {
            Blit b = {dst, i * skip, asc};
            for_runs(m, line[i][0], line[i][1], run_blit, &b);
        }
    }
    free(m);
    return dst;
}


typedef struct RunCtx {
    Fonts *f;
    FontFace face;
    int px, slot_p, slot_fb; // the slots of m->p and m->fb
    int y, ascent;           // line top and the common baseline offset
    TextRunFn fn;
    void *ctx;
} RunCtx;

static void run_emit(Mixed *m, TTF_Font *font, const char *run, int x, void *ctx, int *adv)
{
    RunCtx *rc = ctx;
    int w = 0, h = 0;
    TTF_SizeUTF8(font, run, &w, &h);
    *adv = w;
    int slot = font == m->p ? rc->slot_p : rc->slot_fb;
    const char *fam = TTF_FontFaceFamilyName(font);
    // as sized_slot: bold made from the regular file (TTF_GetFontStyle would
    // also say bold for a real bold face)
    int fam0 = slot - slot % FONT_FACE_COUNT;
    bool synth = slot % FONT_FACE_COUNT == FONT_BOLD && strcmp(rc->f->path[slot], rc->f->path[fam0 + FONT_SANS]) == 0 &&
                 rc->f->face_index[slot] == rc->f->face_index[fam0 + FONT_SANS];
    TextRun r = {rc->f->path[slot], rc->f->face_index[slot], synth, fam ? fam : "", rc->face, rc->px,
                 x, rc->y + rc->ascent, w, run};
    rc->fn(&r, rc->ctx);
}

bool text_runs(Fonts *f, FontFace face, int px, int wrap_w, const char *s, TextRunFn fn, void *ctx)
{
    TTF_Font *font, *fb;
    face_fonts(f, face, px, &font, &fb);
    if (!font || !s || !s[0]) return false;
    Mixed *m = malloc(sizeof *m);
    if (!m) return false;
    m->p = font, m->fb = fb;
    int latin = FAM_LATIN * FONT_FACE_COUNT + (int)face, cjk = FAM_CJK * FONT_FACE_COUNT + (int)face;
    RunCtx rc = {f, face, px, sized_slot(f, latin, px) == font ? latin : cjk, cjk, 0, 0, fn, ctx};
    if (wrap_w > 0 || needs_mixed(font, fb, s, false)) {
        // as render_mixed: lines of runs on a baseline common to both fonts
        int n = break_lines(m, s, wrap_w);
        int asc, desc, skip;
        line_box(font, fb, s, &asc, &desc, &skip);
        rc.ascent = asc;
        for (int i = 0; i < n; i++) {
            rc.y = i * skip;
            for_runs(m, m->line[i][0], m->line[i][1], run_emit, &rc);
        }
    } else {
        // as TTF_RenderUTF8_Blended: one run, its baseline at the font's ascent
        rc.ascent = TTF_FontAscent(font);
        for_runs(m, s, s + strlen(s), run_emit, &rc);
    }
    free(m);
    return true;
}

int text_wrapped_height(Fonts *f, FontFace face, int px, int wrap_w, const char *s)
{
    TTF_Font *font, *fb;
    face_fonts(f, face, px, &font, &fb);
    if (!font || !s[0]) return 0;
    Mixed *m = malloc(sizeof *m); // (large; called once per lesson and size, not per frame)
    if (!m) return 0;
    m->p = font, m->fb = fb;
    int n = break_lines(m, s, wrap_w);
    free(m);
    int asc, desc, skip;
    line_box(font, fb, s, &asc, &desc, &skip);
    return (n - 1) * skip + asc + desc;
}

// Does s need the mixed path: a glyph from the fallback font, or wrapping of
// Chinese text (SDL_ttf wraps only at spaces)?
static bool needs_mixed(TTF_Font *p, TTF_Font *fb, const char *s, bool wrap)
{
    int len;
    for (const unsigned char *q = (const unsigned char *)s; *q; q += len) {
        Uint32 cp = next_cp(q, &len);
        if (cp < 0x80) continue;
        if ((wrap && is_cjk(cp)) || (fb && font_for(p, fb, cp) == fb)) return true;
    }
    return false;
}

// The pixel format of the text textures for renderer r: the target's channel
// order with alpha. SDL blends a texture whose red, green and blue sit where the
// target's do with its per-pixel-alpha blitter for that case (MMX), and any other
// pair with slower generic code of different rounding; with the same order in the
// window (XRGB8888 under X11: ARGB8888 textures) and on the export's RGBA32
// surface (ABGR8888 textures), both draw text with the same blitter and pixels.
// A renderer on a surface has no window to ask: the app's surfaces are RGBA32.
static Uint32 text_format(SDL_Renderer *r)
{
    SDL_Window *win = SDL_RenderGetWindow(r);
    switch (win ? SDL_GetWindowPixelFormat(win) : SDL_PIXELFORMAT_RGBA32) {
    case SDL_PIXELFORMAT_XBGR8888:
    case SDL_PIXELFORMAT_ABGR8888: return SDL_PIXELFORMAT_ABGR8888;
    case SDL_PIXELFORMAT_RGBX8888:
    case SDL_PIXELFORMAT_RGBA8888: return SDL_PIXELFORMAT_RGBA8888;
    case SDL_PIXELFORMAT_BGRX8888:
    case SDL_PIXELFORMAT_BGRA8888: return SDL_PIXELFORMAT_BGRA8888;
    default: return SDL_PIXELFORMAT_ARGB8888;
    }
}

static Uint32 pack_rgb(SDL_Color c) { return (Uint32)c.r << 16 | (Uint32)c.g << 8 | c.b; }

// A texture of the white text surface s in colour rgb (its alpha kept), in the
// cache's format. Colouring here, once, instead of SDL_SetTextureColorMod at every
// draw: SDL blends a modulated texture in generic per-pixel C, which was most of
// a frame (README "Speed"). (255·c)/255 = c: the same colour as the modulation.
static SDL_Texture *coloured_texture(Fonts *f, SDL_Renderer *r, SDL_Surface *s, Uint32 rgb)
{
    SDL_Surface *argb = s->format->format == SDL_PIXELFORMAT_ARGB8888
                            ? s : SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
    if (!argb) return NULL;
    for (int y = 0; y < argb->h; y++) {
        Uint32 *row = (Uint32 *)(void *)((Uint8 *)argb->pixels + (size_t)y * (size_t)argb->pitch);
        for (int x = 0; x < argb->w; x++) row[x] = (row[x] & 0xFF000000u) | rgb;
    }
    SDL_Surface *conv = f->format == SDL_PIXELFORMAT_ARGB8888 ? argb : SDL_ConvertSurfaceFormat(argb, f->format, 0);
    SDL_Texture *tex = NULL;
    if (conv) {
        tex = SDL_CreateTexture(r, f->format, SDL_TEXTUREACCESS_STATIC, conv->w, conv->h);
        if (tex && SDL_UpdateTexture(tex, NULL, conv->pixels, conv->pitch) != 0) {
            SDL_DestroyTexture(tex);
            tex = NULL;
        }
    }
    if (!tex) tex = SDL_CreateTextureFromSurface(r, argb); // a renderer without that format
    if (conv && conv != argb) SDL_FreeSurface(conv);
    if (argb != s) SDL_FreeSurface(argb);
    if (tex) SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_BLEND);
    return tex;
}

// The cache entry of s in colour c, its texture made on a miss; with c NULL,
// any entry of s (only its size is wanted): a miss then keeps the size without
// a texture, and the first draw of s gives that entry its texture and colour.
// NULL for an empty string or on failure.
static Entry *cached(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, const SDL_Color *c,
                     const char *s)
{
    if (!s || !*s || px <= 0) return NULL;
    if (f->owner != r) {
        fonts_flush(f);
        f->owner = r;
        f->format = text_format(r);
    }
    unsigned long long key = hash_key(s, face, px, wrap_w);
    Uint32 rgb = c ? pack_rgb(*c) : 0;
    Entry *set = f->cache[(key >> 17) % CACHE_SETS];
    f->clock++;
    Entry *victim = &set[0], *measured = NULL;
    for (int i = 0; i < CACHE_WAYS; i++) {
        if (set[i].hash == key) {
            if (!c || (set[i].tex && set[i].rgb == rgb)) {
                set[i].used = f->clock;
                f->stats.hits++;
                return &set[i];
            }
            if (!set[i].tex) measured = &set[i];
        }
        if (set[i].used < victim->used) victim = &set[i];
    }
    f->stats.misses++;
    TTF_Font *font, *fb;
    face_fonts(f, face, px, &font, &fb);
    if (!font) return NULL;
    SDL_Color white = {255, 255, 255, 255};
    // wrapped text is composed here, so the texture is as wide as its longest line
    // (SDL_ttf's wrapped render can be as wide as the wrap width)
    SDL_Surface *surf = wrap_w > 0 || needs_mixed(font, fb, s, false) ? render_mixed(font, fb, wrap_w, s)
                                                                    : TTF_RenderUTF8_Blended(font, s, white);
    if (!surf) return NULL;
    SDL_Texture *tex = c ? coloured_texture(f, r, surf, rgb) : NULL;
    int sw = surf->w, sh = surf->h;
    SDL_FreeSurface(surf);
    if (c && !tex) return NULL;
    Entry *e = measured ? measured : victim;
    if (e->tex) {
        SDL_DestroyTexture(e->tex);
        f->bytes -= (size_t)e->w * (size_t)e->h * 4;
        f->stats.evictions++;
    }
    *e = (Entry){key, f->clock, tex, rgb, sw, sh};
    if (!tex) return e;
    f->bytes += (size_t)sw * (size_t)sh * 4;
    // over the byte budget: drop the least recently used textures (not this one)
    while (f->bytes > CACHE_BYTES) {
        Entry *old = NULL;
        for (int si = 0; si < CACHE_SETS; si++)
            for (int wi = 0; wi < CACHE_WAYS; wi++) {
                Entry *o = &f->cache[si][wi];
                if (o->tex && o != e && (!old || o->used < old->used)) old = o;
            }
        if (!old) break;
        SDL_DestroyTexture(old->tex);
        f->bytes -= (size_t)old->w * (size_t)old->h * 4;
        *old = (Entry){0};
        f->stats.evictions++;
    }
    return e;
}

SDL_Texture *text_texture(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, SDL_Color c,
                          const char *s, int *w, int *h)
{
    Entry *e = cached(f, r, face, px, wrap_w, &c, s);
    *w = e ? e->w : 0, *h = e ? e->h : 0;
    return e ? e->tex : NULL;
}

bool text_block_size(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, const char *s, int *w,
                     int *h)
{
    Entry *e = cached(f, r, face, px, wrap_w, NULL, s);
    *w = e ? e->w : 0, *h = e ? e->h : 0;
    return e != NULL;
}

void text_size(Fonts *f, SDL_Renderer *r, FontFace face, int px, const char *s, int *w, int *h)
{
    text_block_size(f, r, face, px, 0, s, w, h);
}

// The colour is in the texture: only a translucent draw (a fade) modulates.
static void blit(SDL_Renderer *r, SDL_Texture *t, Uint8 a, const SDL_Rect *src, const SDL_Rect *dst)
{
    SDL_SetTextureAlphaMod(t, a);
    SDL_RenderCopy(r, t, src, dst);
}

int text_draw(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c, int x, int y,
              TextAlign align, const char *s)
{
    int w, h;
    SDL_Texture *t = text_texture(f, r, face, px, 0, c, s, &w, &h);
    if (!t) return 0;
    if (align == ALIGN_CENTER) x -= w / 2;
    if (align == ALIGN_RIGHT) x -= w;
    blit(r, t, c.a, NULL, &(SDL_Rect){x, y, w, h});
    return w;
}

void text_draw_centered(Fonts *f, SDL_Renderer *r, FontFace face, int px, SDL_Color c,
                        SDL_Rect box, const char *s)
{
    int w, h;
    SDL_Texture *t = text_texture(f, r, face, px, 0, c, s, &w, &h);
    if (!t) return;
    blit(r, t, c.a, NULL, &(SDL_Rect){box.x + (box.w - w) / 2, box.y + (box.h - h) / 2, w, h});
}

int text_draw_wrapped(Fonts *f, SDL_Renderer *r, FontFace face, int px, int min_px, SDL_Color c,
                      SDL_Rect box, const char *s)
{
    int w = 0, h = 0;
    if (px < min_px) return 0;
    // the size that fits, else min_px's step (sizes only: no texture for the sizes tried)
    int fit = px;
    for (; px >= min_px; px -= 2) {
        fit = px;
        if (!text_block_size(f, r, face, px, box.w, s, &w, &h) || h <= box.h) break;
    }
    px = fit;
    SDL_Texture *t = text_texture(f, r, face, px, box.w, c, s, &w, &h);
    if (!t) return 0;
    // never draw past the box: crop the texture instead of scaling it
    int ch = h < box.h ? h : box.h, cw = w < box.w ? w : box.w;
    blit(r, t, c.a, &(SDL_Rect){0, 0, cw, ch}, &(SDL_Rect){box.x, box.y, cw, ch});
    return ch;
}

void text_draw_block(Fonts *f, SDL_Renderer *r, FontFace face, int px, int wrap_w, SDL_Color c, int x, int y,
                     const char *s)
{
    int w, h;
    SDL_Texture *t = text_texture(f, r, face, px, wrap_w, c, s, &w, &h);
    if (t) blit(r, t, c.a, NULL, &(SDL_Rect){x, y, w, h});
}

TextStats text_stats(const Fonts *f)
{
    TextStats st = f->stats;
    st.bytes = f->bytes;
    return st;
}
