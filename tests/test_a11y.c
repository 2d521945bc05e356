// test_a11y.c — the cell cursor (Y) and the frame as the page's accessible layer reads
// it (describe_a11y_write), in-process on SDL's offscreen driver with a fake clock:
//  - the classic lesson's scores: nothing pointed at first; Y puts the cursor on the
//    result's first cell: its tooltip is drawn (the frame changes) and the layer's
//    "pointed" cell is it, its value the table's cell and its derivation the tooltip's
//    worked sum (adding up, tip_adds_up); → and ↓ move it (another derivation), it stops
//    at the panel's edge; Tab goes to the next panel, Shift+Tab back; a new stage keeps
//    it on a cell; Esc leaves it and the frame is the one before, pixel for pixel;
//  - every panel as a table: its rows and columns as the panel's shape, labelled with the
//    tokens, each cell written with the decimals --describe reports for that panel
//    (panel_format_cell, without the 0 where it says bare_point) or the masked cells' text;
//  - the study mode: the hidden result is "?" in every cell and its derivation is empty.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <SDL.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/describe.h"
#include "app/describe_a11y.h"
#include "session.h"
#include "study.h"
#include "layout.h"
#include "tip.h"

#define W 1280
#define H 720
static Uint32 px[W * H], before[W * H];
static bool want;

static void hook(void *ctx, const AppTestFrame *f)
{
    (void)ctx;
    if (!want) return;
    SDL_RenderReadPixels(f->r, NULL, SDL_PIXELFORMAT_ARGB8888, px, W * 4);
    want = false;
}

static void frames(App *a, int n)
{
    for (int i = 0; i < n; i++) assert_true(app_frame(a));
}
static void settle(App *a)
{
    for (int i = 0; i < 3000 && app_busy(a); i++) frames(a, 1);
    frames(a, 2);
}
static void shot(App *a, Uint32 *out)
{
    want = true;
    SDL_Event e = {.type = SDL_USEREVENT}; // (a frame is drawn only when something happened)
    SDL_PushEvent(&e);
    frames(a, 1);
    memcpy(out, px, sizeof px);
}
static void key(App *a, const char *name, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = SDL_GetKeyFromName(name);
    e.key.keysym.scancode = SDL_GetScancodeFromKey(e.key.keysym.sym);
    e.key.keysym.mod = mod;
    assert_int_not_equal(e.key.keysym.sym, SDLK_UNKNOWN);
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP, e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
    frames(a, 1);
}
static cJSON *layer(App *a)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    describe_a11y_write(a, f);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    if (!j) fail_msg("app_describe_a11y wrote no JSON: %.200s", buf);
    free(buf);
    return j;
}
static const char *str(const cJSON *o, const char *k)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(s)) fail_msg("no string \"%s\"", k);
    return s->valuestring;
}
static int num(const cJSON *o, const char *k)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(s)) fail_msg("no number \"%s\"", k);
    return s->valueint;
}
static const char *cell(const cJSON *j, int p, int r, int c)
{
    const cJSON *pn = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "panels"), p);
    return cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(pn, "cells"), r), c)->valuestring;
}

static App *open_app(AppOptions *o, const char *lesson)
{
    *o = (AppOptions){.lesson_path = lesson, .lang = LANG_EN, .width = W, .height = H};
    App *a = app_create(o);
    assert_non_null(a);
    settle(a);
    return a;
}
static void goto_stage(App *a, const char *name)
{
    for (int i = 0; i < 40 && strcmp(app_status(a).session->trace.stages[app_status(a).stage].name, name) != 0; i++) {
        key(a, "Right", KMOD_NONE);
        settle(a);
    }
    const AppStatus st = app_status(a);
    assert_string_equal(st.session->trace.stages[st.stage].name, name);
}

// The pointed cell of the layer: its panel, row, col; its value is that cell of its
// table and its derivation a worked sum that adds up.
static void check_pointed(const cJSON *j, int p, int r, int c)
{
    const cJSON *pt = cJSON_GetObjectItem(j, "pointed");
    if (!cJSON_IsObject(pt)) fail_msg("nothing pointed at (expected panel %d cell %d,%d)", p, r, c);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(pt, "cursor")));
    if (num(pt, "panel") != p || num(pt, "row") != r || num(pt, "col") != c)
        fail_msg("the cursor is at panel %d cell %d,%d, expected %d cell %d,%d", num(pt, "panel"), num(pt, "row"),
                 num(pt, "col"), p, r, c);
    assert_string_equal(str(pt, "value"), cell(j, p, r, c));
    const char *d = str(pt, "derivation");
    char why[200];
    if (!*d || !strchr(d, '=') || !tip_adds_up(d, why, sizeof why)) fail_msg("derivation \"%s\": %s", d, why);
}

static void test_cursor(void **state)
{
    (void)state;
    AppOptions o;
    App *a = open_app(&o, "lessons/arange-2x4x4.json");
    goto_stage(a, "scores");
    shot(a, before);
    cJSON *j = layer(a);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "pointed")));
    const int res = app_status(a).layout->result_panel;
    assert_true(res >= 0);
    cJSON_Delete(j);

    key(a, "Y", KMOD_NONE);
    settle(a);
    shot(a, px);
    assert_true(memcmp(px, before, sizeof px) != 0); // the tooltip and the focus ring
    j = layer(a);
    check_pointed(j, res, 0, 0);
    char first[1024];
    snprintf(first, sizeof first, "%s", str(cJSON_GetObjectItem(j, "pointed"), "derivation"));
    cJSON_Delete(j);

    key(a, "Right", KMOD_NONE);
    key(a, "Down", KMOD_NONE);
    j = layer(a);
    check_pointed(j, res, 1, 1);
    assert_string_not_equal(str(cJSON_GetObjectItem(j, "pointed"), "derivation"), first);
    assert_string_equal(app_status(a).session->trace.stages[app_status(a).stage].name, "scores"); // (→ moved the cursor)
    cJSON_Delete(j);
    for (int i = 0; i < 10; i++) key(a, "Right", KMOD_NONE); // stops at the edge
    j = layer(a);
    check_pointed(j, res, 1, app_status(a).layout->spec[res].cols - 1);
    cJSON_Delete(j);

    const int np = app_status(a).layout->n_panels;
    key(a, "Tab", KMOD_NONE);
    j = layer(a);
    assert_int_equal(num(cJSON_GetObjectItem(j, "pointed"), "panel"), (res + 1) % np);
    cJSON_Delete(j);
    key(a, "Tab", KMOD_LSHIFT);
    j = layer(a);
    assert_int_equal(num(cJSON_GetObjectItem(j, "pointed"), "panel"), res);
    assert_int_equal(app_status(a).view->head, 0); // (Tab moved the cursor, not the head)
    cJSON_Delete(j);

    key(a, "PageDown", KMOD_NONE); // the next stage: still on one of its cells
    settle(a);
    j = layer(a);
    const cJSON *pt = cJSON_GetObjectItem(j, "pointed");
    assert_true(cJSON_IsObject(pt));
    assert_true(num(pt, "panel") < app_status(a).layout->n_panels);
    cJSON_Delete(j);
    key(a, "PageUp", KMOD_NONE);
    settle(a);

    key(a, "Escape", KMOD_NONE);
    settle(a);
    j = layer(a);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "pointed")));
    cJSON_Delete(j);
    shot(a, px);
    if (memcmp(px, before, sizeof px) != 0) fail_msg("Esc left something of the cursor on the frame");
    key(a, "Y", KMOD_NONE);
    key(a, "Y", KMOD_NONE); // Y again: off
    j = layer(a);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "pointed")));
    cJSON_Delete(j);
    app_destroy(a);
}

// Every panel of every stage as a table: shape, labels, each cell as the screen writes it.
static void test_tables(void **state)
{
    (void)state;
    AppOptions o;
    App *a = open_app(&o, "lessons/causal-decoder.json");
    const int n = app_status(a).session->trace.n;
    int checked = 0;
    for (int s = 0; s < n; s++) {
        const AppStatus st = app_status(a);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        fputc('{', f);
        describe_frame_fields(f, st.shown, st.view, st.width, st.height);
        fputc('}', f);
        fclose(f);
        cJSON *d = cJSON_Parse(buf), *j = layer(a);
        free(buf);
        assert_non_null(d);
        assert_string_equal(str(j, "formula"), str(d, "formula"));
        assert_string_equal(str(j, "narration"), str(d, "narration"));
        assert_string_equal(str(j, "alt"), str(d, "alt"));
        const Layout *L = st.layout;
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "panels")), L->n_panels);
        for (int p = 0; p < L->n_panels; p++) {
            const PanelSpec *ps = &L->spec[p];
            const cJSON *tp = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "panels"), p);
            const cJSON *dp = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "panels"), p);
            const int dec = num(dp, "decimals");
            PanelSpec shown = *ps; // (the decimals --describe reports, and "−.03" where it says bare_point)
            shown.decimals = dec, shown.bare_point = cJSON_IsTrue(cJSON_GetObjectItem(dp, "bare_point"));
            assert_string_equal(str(tp, "title"), ps->title);
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(tp, "rows")), ps->rows);
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(tp, "cols")), ps->cols);
            if (ps->row_axis == AXIS_QUERY) // the lesson's tokens label the queries
                assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(tp, "rows"), 0)->valuestring,
                                    st.view->lesson->q_tokens ? st.view->lesson->q_tokens[0] : "0");
            for (int r = 0; r < ps->rows; r++)
                for (int c = 0; c < ps->cols && dec >= 0; c++) {
                    char want_text[48];
                    const float x = panel_value(ps, r, c);
                    if (ps->mask && ps->mask != ps->data && ps->mask[r * ps->cols + c] == 0.0f) continue; // (the fill's text)
                    panel_format_cell(&shown, x, want_text, sizeof want_text);
                    if (strcmp(cell(j, p, r, c), want_text) != 0)
                        fail_msg("stage %d panel %s cell %d,%d: \"%s\", the screen writes \"%s\"", s, ps->title, r, c,
                                 cell(j, p, r, c), want_text);
                    checked++;
                }
        }
        cJSON_Delete(d);
        cJSON_Delete(j);
        key(a, "Right", KMOD_NONE);
        settle(a);
    }
    assert_true(checked > 100);
    app_destroy(a);
}

// The study mode: nothing of a hidden result reaches the layer.
static void test_study_hidden(void **state)
{
    (void)state;
    AppOptions o;
    App *a = open_app(&o, "lessons/arange-2x4x4.json");
    key(a, "T", KMOD_NONE);
    settle(a);
    bool seen = false;
    for (int s = 0; s < 14 && !seen; s++) {
        cJSON *j = layer(a);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "panels"))
        {
            if (!cJSON_IsTrue(cJSON_GetObjectItem(p, "hidden"))) continue;
            seen = true;
            assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "question")));
            const cJSON *row, *c;
            cJSON_ArrayForEach(row, cJSON_GetObjectItem(p, "cells")) cJSON_ArrayForEach(c, row)
                assert_string_equal(c->valuestring, "?");
        }
        if (seen) {
            key(a, "Y", KMOD_NONE);
            cJSON_Delete(j);
            j = layer(a);
            const cJSON *pt = cJSON_GetObjectItem(j, "pointed");
            assert_true(cJSON_IsObject(pt));
            assert_string_equal(str(pt, "value"), "?");
            assert_string_equal(str(pt, "derivation"), "");
        }
        cJSON_Delete(j);
        key(a, "Right", KMOD_NONE);
        frames(a, 60);
    }
    assert_true(seen);
    key(a, "T", KMOD_NONE);
    app_destroy(a);
}

int main(void)
{
    setenv("SDL_VIDEODRIVER", "offscreen", 0);
    setenv("ATTNVIZ_ASSETS", "assets", 0);
    char data[] = "/tmp/attnviz-a11y-XXXXXX";
    if (!mkdtemp(data)) return 1;
    setenv("XDG_DATA_HOME", data, 1);
    setenv("ATTNVIZ_SAVE_DIR", data, 1);
    static const AppTestHook h = {16.0, hook, NULL};
    app_test_hook = &h;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cursor),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_study_hidden),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", data);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
