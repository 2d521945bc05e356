// test_i18n.c — the interface in both languages: every English key has a
// Chinese text with the same {1}..{9} placeholders, every key the sources use
// exists, every text and lesson title/narration draws without missing glyphs,
// Chinese wraps inside its width, and zh without a Chinese font falls back to
// English with one line of warning.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <SDL.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "colormap.h"
#include "i18n.h"
#include "layout.h"
#include "render.h"
#include "text.h"
#include "typed.h"
#include "view.h"

#include "draw_support.h"

static int setup(void **state)
{
    (void)state;
    return draw_setup(LANG_ZH);
}

// Is key in lang's own table (not through the English fallback)?
static bool has_key(Lang lang, const char *key)
{
    for (int i = 0; i < i18n_count(lang); i++)
        if (strcmp(i18n_key_at(lang, i), key) == 0) return true;
    return false;
}

// Bit i set when {i+1} occurs in s.
static unsigned placeholders(const char *s)
{
    unsigned m = 0;
    for (const char *p = s; *p; p++)
        if (p[0] == '{' && p[1] >= '1' && p[1] <= '9' && p[2] == '}') m |= 1u << (p[1] - '1');
    return m;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

static void test_zh_has_every_key(void **state)
{
    (void)state;
    assert_true(i18n_count(LANG_EN) > 100);
    int missing = 0, extra = 0, mismatched = 0;
    for (int i = 0; i < i18n_count(LANG_EN); i++) {
        const char *key = i18n_key_at(LANG_EN, i);
        if (!has_key(LANG_ZH, key)) {
            fprintf(stderr, "zh.txt lacks %s\n", key);
            missing++;
            continue;
        }
        const char *en = i18n_get(LANG_EN, key), *zh = i18n_get(LANG_ZH, key);
        if (placeholders(en) != placeholders(zh)) {
            fprintf(stderr, "%s: placeholders differ: en \"%s\" zh \"%s\"\n", key, en, zh);
            mismatched++;
        }
        // the help overlay is a table: same rows, each "keys\twhat"
        if (count_char(en, '\n') != count_char(zh, '\n') || count_char(en, '\t') != count_char(zh, '\t')) {
            fprintf(stderr, "%s: line or column count differs between en and zh\n", key);
            mismatched++;
        }
    }
    for (int i = 0; i < i18n_count(LANG_ZH); i++)
        if (!has_key(LANG_EN, i18n_key_at(LANG_ZH, i))) {
            fprintf(stderr, "zh.txt has %s, which en.txt does not\n", i18n_key_at(LANG_ZH, i));
            extra++;
        }
    assert_int_equal(missing, 0);
    assert_int_equal(extra, 0);
    assert_int_equal(mismatched, 0);
}

static bool known_prefix(const char *key)
{
    static const char *const prefixes[] = {"app.",  "step.", "ui.",  "palette.", "name.",   "wname.",
                                           "title.", "fx.",  "narr.", "tip.",    "help.",   "picker.",
                                           "formula.", "pres.", "text."};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0) return true;
    return false;
}

// Every string literal in src/ that looks like a key ("ui.batch") must exist.
static void test_source_keys_exist(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("src/*/*.c", 0, NULL, &g), 0);
    int checked = 0, bad = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        FILE *fp = fopen(g.gl_pathv[f], "r");
        assert_non_null(fp);
        char line[4096];
        int ln = 0;
        while (fgets(line, sizeof line, fp)) {
            ln++;
            if (strncmp(line, "#include", 8) == 0) continue;
            for (char *q = strchr(line, '"'); q; q = strchr(q, '"')) {
                char *end = strchr(q + 1, '"');
                if (!end) break;
                size_t n = (size_t)(end - q - 1);
                char lit[128];
                bool keyish = n > 0 && n < sizeof lit;
                for (size_t k = 0; keyish && k < n; k++) {
                    char c = q[1 + k];
                    keyish = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
                }
                if (keyish) {
                    memcpy(lit, q + 1, n);
                    lit[n] = '\0';
                    if (strchr(lit, '.') && known_prefix(lit) && lit[n - 1] != '.') {
                        checked++;
                        if (!i18n_lookup(LANG_EN, lit)) {
                            fprintf(stderr, "%s:%d: key \"%s\" is not in assets/lang/en.txt\n", g.gl_pathv[f], ln, lit);
                            bad++;
                        }
                    }
                }
                q = end + 1;
            }
        }
        fclose(fp);
    }
    globfree(&g);
    assert_true(checked > 40);
    assert_int_equal(bad, 0);
}

// Keys built at run time: step.<step>, title./name./narr.<stage>, wname.<stage
// of each weight panel, the palettes; every stage of every lesson.
static void test_dynamic_keys_exist(void **state)
{
    (void)state;
    char key[96];
    int bad = 0;
    for (int s = 0; s < STEP_COUNT; s++) {
        snprintf(key, sizeof key, "step.%s", step_name((StepId)s));
        if (!has_key(LANG_EN, key) || !has_key(LANG_ZH, key)) fprintf(stderr, "missing %s\n", key), bad++;
    }
    for (int p = 0; p < PALETTE_COUNT; p++)
        if (!has_key(LANG_EN, colormap_palette_key((Palette)p))) bad++;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char err[LESSON_ERR_MAX];
        Session *ses = session_create(g.gl_pathv[i], err, sizeof err);
        if (!ses) fail_msg("%s", err);
        const Trace *tr = &ses->trace;
        for (int k = 0; k < tr->n; k++) {
            const Stage *st = &tr->stages[k];
            const char *fams[] = {"title", "name", "narr"};
            for (int j = 0; j < 3; j++) {
                snprintf(key, sizeof key, "%s.%s", fams[j], STAGE_INFO[st->id].name); // (a layer's: its table name)
                if (!has_key(LANG_EN, key)) fprintf(stderr, "%s: missing %s\n", g.gl_pathv[i], key), bad++;
            }
        }
        // every panel has a caption; parameters are named from the stage-name table (scene.c)
        View v;
        view_init(&v, &ses->lesson, LANG_EN);
        for (v.stage = 0; v.stage < tr->n; v.stage++) {
            Layout L;
            layout_compute(&L, tr, &v, 1280, 720);
            for (int p = 0; p < L.n_panels; p++) {
                const char *t = L.spec[p].title;
                if (!t[0] || strchr(t, '?') || strstr(t, "name."))
                    fprintf(stderr, "%s: stage %s: panel caption \"%s\"\n", g.gl_pathv[i], tr->stages[v.stage].name, t),
                        bad++;
            }
        }
        session_destroy(ses);
    }
    globfree(&g);
    assert_int_equal(bad, 0);
}

static int missing_any_face(const char *s)
{
    int m = 0;
    for (int f = 0; f < FONT_FACE_COUNT; f++) m += fonts_missing_glyphs(fonts, (FontFace)f, s);
    return m;
}

// No missing-glyph boxes: every interface text in both languages, every lesson
// title and narration, in every face; plus the symbols the renderer adds.
static void test_no_missing_glyphs(void **state)
{
    (void)state;
    assert_true(fonts_have_cjk(fonts)); // make deps installs fonts-wqy-microhei
    int bad = 0;
    for (int l = 0; l < LANG_COUNT; l++)
        for (int i = 0; i < i18n_count((Lang)l); i++) {
            const char *key = i18n_key_at((Lang)l, i), *s = i18n_get((Lang)l, key);
            if (missing_any_face(s)) fprintf(stderr, "%s %s: missing glyphs in \"%s\"\n", l ? "zh" : "en", key, s), bad++;
        }
    const char *extra[] = {"−∞", "∞", "NaN", "×", "…", "ᵀ", " · h0", "4×4 …", "▲", "▼", "Q·Kᵀ/√dₖ Σⱼ W₁ᵀ W₂ᵀ b₁ b₂ ε γ β ≈ ≠ ≤ ≥ → ← ▶ ❚❚"};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) bad += missing_any_face(extra[i]) != 0;
    glob_t g;
    assert_int_equal(glob("lessons/*.json", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        Lesson ls;
        char err[LESSON_ERR_MAX];
        assert_true(lesson_load(&ls, g.gl_pathv[i], err, sizeof err));
        for (int l = 0; l < LANG_COUNT; l++) {
            if (missing_any_face(lesson_title(&ls, (Lang)l))) fprintf(stderr, "%s: title\n", g.gl_pathv[i]), bad++;
            for (int k = 0; k < ls.n_steps; k++) {
                const char *t = lesson_step_text(&ls, ls.step_keys[k], (Lang)l);
                if (t && missing_any_face(t)) fprintf(stderr, "%s: steps.%s\n", g.gl_pathv[i], ls.step_keys[k]), bad++;
                // every shipped lesson has the teacher's notes for every step, in both languages
                if (!ls.note_text[l] || !ls.note_text[l][0]) {
                    fprintf(stderr, "%s: no notes\n", g.gl_pathv[i]), bad++;
                    break;
                }
                const char *n = NULL;
                for (int m = 0; m < ls.n_notes; m++)
                    if (strcmp(ls.note_keys[m], ls.step_keys[k]) == 0) n = ls.note_text[l][m];
                if (!n || missing_any_face(n))
                    fprintf(stderr, "%s: notes.%s (%s)\n", g.gl_pathv[i], ls.step_keys[k], l ? "zh" : "en"), bad++;
            }
        }
        for (int k = 0; k < ls.len_q && ls.q_tokens; k++) bad += missing_any_face(ls.q_tokens[k]) != 0;
        lesson_free(&ls);
    }
    globfree(&g);
    assert_int_equal(bad, 0);
    // a glyph no font has is counted
    assert_int_equal(fonts_missing_glyphs(fonts, FONT_SANS, "a\xCD\xB8"), 1); // U+0378, unassigned
}

static SDL_Renderer *soft(SDL_Surface **surf, int w, int h)
{
    *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    assert_non_null(*surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(*surf);
    assert_non_null(r);
    return r;
}

// Mixed Latin + CJK + maths renders; Chinese wraps within the width (SDL_ttf
// alone would only break at spaces); '\n' starts a line.
static void test_mixed_text_and_wrapping(void **state)
{
    (void)state;
    SDL_Surface *surf;
    SDL_Renderer *r = soft(&surf, 800, 600);
    int w1, h1, w2, h2;
    const SDL_Color ink = {28, 28, 30, 255};
    assert_non_null(text_texture(fonts, r, FONT_SANS, 20, 0, ink, "注意力 Q·Kᵀ/√dₖ", &w1, &h1));
    assert_true(w1 > 100 && h1 >= 20 && h1 < 40);
    // one line of Chinese without spaces, wrapped at 200 px: several lines, none wider
    const char *zh = i18n_get(LANG_ZH, "narr.q_proj");
    assert_non_null(text_texture(fonts, r, FONT_SANS, 20, 200, ink, zh, &w2, &h2));
    assert_true(w2 <= 200);
    assert_true(h2 >= 4 * h1);
    assert_non_null(text_texture(fonts, r, FONT_SANS, 20, 0, ink, "一\n二", &w2, &h2));
    assert_true(h2 >= 2 * h1 - 4);
    // a word longer than the width is cut, not left overflowing
    assert_non_null(text_texture(fonts, r, FONT_BOLD, 20, 60, ink, "注意力权重注意力权重", &w2, &h2));
    assert_true(w2 <= 60);
    fonts_flush(fonts);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
}

// Every stage of two lessons and the help overlay in zh: drawn without trouble.
// With ATTNVIZ_TEST_PNG_DIR set, the help overlays are written there to look at.
static void test_render_zh(void **state)
{
    (void)state;
    SDL_Surface *surf;
    SDL_Renderer *r = soft(&surf, 1280, 720);
    DrawList dl;
    draw_list_init(&dl);
    const char *lessons[] = {"lessons/arange-2x4x4.json", "lessons/dk-dv-residual-ffn.json"};
    for (size_t i = 0; i < 2; i++) {
        char err[LESSON_ERR_MAX];
        Session *ses = session_create(lessons[i], err, sizeof err);
        if (!ses) fail_msg("%s", err);
        const Trace *tr = &ses->trace;
        View v;
        Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
        view_init(&v, &ses->lesson, LANG_ZH);
        for (int s = 0; s < tr->n; s++) {
            v.stage = s;
            render_frame(&(Canvas){r, fonts, NULL, NULL, &dl}, tr, &v, &ov);
        }
        for (int l = 0; l < LANG_COUNT; l++) {
            v.lang = (Lang)l, ov.help = true;
            render_frame(&(Canvas){r, fonts, NULL, NULL, &dl}, tr, &v, &ov);
            const char *dir = getenv("ATTNVIZ_TEST_PNG_DIR");
            if (dir && i == 0) {
                char path[600];
                snprintf(path, sizeof path, "%s/help-%s.bmp", dir, l ? "zh" : "en");
                SDL_SaveBMP(surf, path);
            }
        }
        session_destroy(ses);
    }
    fonts_flush(fonts);
    draw_list_free(&dl);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
}

// zh with no Chinese font (a fontconfig that knows only DejaVu): the fonts
// still load, and the language falls back to English with one warning line.
static void test_no_cjk_font_falls_back(void **state)
{
    (void)state;
    char conf[] = "/tmp/attnviz-fc-XXXXXX";
    int fd = mkstemp(conf);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("<?xml version=\"1.0\"?>\n<fontconfig><dir>/usr/share/fonts/truetype/dejavu</dir></fontconfig>\n", f);
    fclose(f);
    const char *old = getenv("FONTCONFIG_FILE");
    char *saved = old ? strdup(old) : NULL;
    setenv("FONTCONFIG_FILE", conf, 1);
    char err[600];
    Fonts *latin = fonts_create(NULL, LANG_ZH, err, sizeof err);
    if (saved) setenv("FONTCONFIG_FILE", saved, 1);
    else unsetenv("FONTCONFIG_FILE");
    free(saved);
    remove(conf);
    assert_non_null(latin);
    assert_false(fonts_have_cjk(latin));
    FILE *w = tmpfile();
    assert_int_equal(fonts_usable_lang(latin, LANG_ZH, w), LANG_EN);
    assert_int_equal(fonts_usable_lang(latin, LANG_EN, w), LANG_EN);
    rewind(w);
    char line[400];
    int lines = 0;
    while (fgets(line, sizeof line, w)) lines++;
    fclose(w);
    assert_int_equal(lines, 1);
    assert_non_null(strstr(line, "no Chinese font"));
    assert_true(fonts_missing_glyphs(latin, FONT_SANS, "注意") == 2); // why it must fall back
    fonts_destroy(latin);
    assert_int_equal(fonts_usable_lang(fonts, LANG_ZH, NULL), LANG_ZH);
}

// The window's text box says in plain words, in its language, why a text cannot be read:
// the position, the character and the characters the model knows (issue 35), no JSON path.
static void test_typed_text_problem(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    Lesson ls;
    assert_true(lesson_load(&ls, "lessons/tiny-lm-fortunes.json", err, sizeof err));
    char out[1200];
    assert_false(typed_text_problem(&ls, "to be or not to be", LANG_EN, out, sizeof out));
    assert_string_equal(out, "");
    assert_true(typed_text_problem(&ls, "to be or not te bex", LANG_EN, out, sizeof out));
    assert_string_equal(out, "Character 19, “x”, is not one this model knows. It knows: a b c d e f g h i k l m n o p r s "
                             "t u v w y, space.");
    assert_true(typed_text_problem(&ls, "to be or not te bex", LANG_ZH, out, sizeof out));
    assert_string_equal(out, "第 19 个字符“x”不是这个模型认识的字符。它认识：a b c d e f g h i k l m n o p r s t u v w y, 空格。");
    assert_true(typed_text_problem(&ls, "", LANG_ZH, out, sizeof out));
    assert_string_equal(out, "请至少输入一个字符。");
    assert_true(typed_text_problem(&ls, "to be or not to be or", LANG_EN, out, sizeof out)); // 21 of 20 positions
    assert_string_equal(out, "That is 21 characters; this model reads at most 20.");
    lesson_free(&ls);
}

// The grammar lesson's words (lessons/train_grammar.py): a sentence of the grammar is read; a
// word outside its 20 (a new noun, a lower-case name, punctuation stuck to a word) is named
// with its place and the whole vocabulary, in both languages; a 14th word is one too many.
static void test_typed_grammar_words(void **state)
{
    (void)state;
    char err[LESSON_ERR_MAX];
    Lesson ls;
    assert_true(lesson_load(&ls, "lessons/grammar-agreement.json", err, sizeof err));
    char out[1200];
    const char *ok[] = {"the man that the men see likes Tom", "Anna thanked Tom because he likes the men",
                        "( ( [ ] ) )", "Mary thanked John because the men that the man likes see Anna"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) assert_false(typed_text_problem(&ls, ok[i], LANG_EN, out, sizeof out));
    static const char known[] = "the man men that sees see likes like Mary Anna John Tom thanked because she he ( ) [ ]";
    char want[600];
    assert_true(typed_text_problem(&ls, "the keys that the man holds are red", LANG_EN, out, sizeof out));
    snprintf(want, sizeof want, "Word 2, “keys”, is not one this model knows. It knows: %s.", known);
    assert_string_equal(out, want);
    assert_true(typed_text_problem(&ls, "mary thanked John because she likes the man", LANG_ZH, out, sizeof out));
    snprintf(want, sizeof want, "第 1 个词“mary”不是这个模型认识的词。它认识：%s。", known);
    assert_string_equal(out, want);
    assert_true(typed_text_problem(&ls, "the men see Tom.", LANG_EN, out, sizeof out));
    assert_non_null(strstr(out, "Word 4, “Tom.”"));
    assert_true(typed_text_problem(&ls, "( ) ( ) ( ) ( ) ( ) ( ) ( )", LANG_EN, out, sizeof out));
    assert_string_equal(out, "That is 14 words; this model reads at most 13.");
    lesson_free(&ls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zh_has_every_key),
        cmocka_unit_test(test_source_keys_exist),
        cmocka_unit_test(test_dynamic_keys_exist),
        cmocka_unit_test(test_no_missing_glyphs),
        cmocka_unit_test(test_mixed_text_and_wrapping),
        cmocka_unit_test(test_render_zh),
        cmocka_unit_test(test_no_cjk_font_falls_back),
        cmocka_unit_test(test_typed_text_problem),
        cmocka_unit_test(test_typed_grammar_words),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
