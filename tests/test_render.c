// test_render.c — the drawing path without a display: colormap, playback,
// layout geometry, i18n, tooltips, PNG writing, and render_frame's pixels on
// the software renderer for every stage of every lesson at two sizes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <SDL.h>
#include <glob.h>
#include <math.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anim.h"
#include "chrome.h"
#include "colormap.h"
#include "explain.h"
#include "expview.h"
#include "frame.h"
#include "i18n.h"
#include "app/keys.h"
#include "keymap.h"
#include "labmenu.h"
#include "picker.h"
#include "layout.h"
#include "overlay.h"
#include "playback.h"
#include "app/png_write.h"
#include "app/presenter.h"
#include "heatmap.h"
#include "render.h"
#include "study.h"
#include "scene.h"
#include "session.h"
#include "text.h"
#include "view.h"
#include "viewkind.h"

#include "draw_support.h"
#include "ref_support.h"

static int setup(void **state)
{
    (void)state;
    return draw_setup(LANG_EN);
}

// ---- colormap -----------------------------------------------------------------

static void test_colormap_diverging(void **state)
{
    (void)state;
    for (int p = 0; p < PALETTE_COUNT; p++) {
        Rgb c = colormap_diverging((Palette)p, 0.0f);
        assert_true(c.r > 235 && c.g > 235 && c.b > 235); // white-ish centre
        // luminance rises towards 0 from both ends, strictly at the ends
        float prev = colormap_luminance(colormap_diverging((Palette)p, -1.0f));
        for (int i = -19; i <= 0; i++) {
            float l = colormap_luminance(colormap_diverging((Palette)p, (float)i / 20.0f));
            assert_true(l >= prev - 1e-4f);
            prev = l;
        }
        for (int i = 1; i <= 20; i++) {
            float l = colormap_luminance(colormap_diverging((Palette)p, (float)i / 20.0f));
            assert_true(l <= prev + 1e-4f);
            prev = l;
        }
        // the two ends have different hues (blue vs red / purple vs orange)
        Rgb lo = colormap_diverging((Palette)p, -1.0f), hi = colormap_diverging((Palette)p, 1.0f);
        assert_true(lo.b > lo.r && hi.r > hi.b);
        // clamping and NaN
        ColorScale cs = {(Palette)p, false, false, -2.0f, 2.0f, 0.0f};
        Rgb a = colormap_value(&cs, -100.0f), b = colormap_value(&cs, -INFINITY);
        assert_memory_equal(&a, &lo, sizeof a);
        assert_memory_equal(&b, &lo, sizeof b);
        Rgb n = colormap_value(&cs, NAN), nan = colormap_nan();
        assert_memory_equal(&n, &nan, sizeof n);
    }
}

static void test_colormap_sequential(void **state)
{
    (void)state;
    for (int p = 0; p < PALETTE_COUNT; p++) {
        float l0 = colormap_luminance(colormap_sequential((Palette)p, 0.0f));
        float l1 = colormap_luminance(colormap_sequential((Palette)p, 1.0f));
        float sign = l1 > l0 ? 1.0f : -1.0f;
        assert_true(fabsf(l1 - l0) > 0.5f);
        float prev = l0;
        for (int i = 1; i <= 40; i++) { // monotone in luminance
            float l = colormap_luminance(colormap_sequential((Palette)p, (float)i / 40.0f));
            assert_true(sign * (l - prev) >= -1e-4f);
            prev = l;
        }
    }
}

static float contrast(Rgb a, Rgb b)
{
    float la = colormap_luminance(a) + 0.05f, lb = colormap_luminance(b) + 0.05f;
    return la > lb ? la / lb : lb / la;
}

static void test_colormap_text(void **state)
{
    (void)state;
    Rgb black = {0, 0, 0}, white = {255, 255, 255};
    for (int p = 0; p < PALETTE_COUNT; p++)
        for (int i = 0; i <= 100; i++) {
            float t = (float)i / 100.0f;
            Rgb cs[] = {colormap_sequential((Palette)p, t), colormap_diverging((Palette)p, 2 * t - 1),
                        colormap_masked(), colormap_nan()};
            for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
                Rgb text = colormap_text_dark(cs[k]) ? black : white;
                assert_true(contrast(text, cs[k]) >= 4.5f); // WCAG AA for every cell colour
            }
        }
    // masked and NaN looks differ from each other and from the diverging centre
    assert_true(contrast(colormap_masked(), colormap_nan()) > 2.0f);
    assert_true(contrast(colormap_masked(), colormap_diverging(PALETTE_BLUE_RED, 0.0f)) > 1.5f);
}

// ---- playback -----------------------------------------------------------------

static void test_playback(void **state)
{
    (void)state;
    { // the lab's edit transition runs on the playback's clock: wall time, held or not
        Playback e;
        playback_init(&e, 5);
        assert_false(playback_editing(&e));
        assert_float_equal(playback_edit_progress(&e), 1.0f, 1e-6);
        playback_start_edit(&e);
        assert_true(playback_editing(&e));
        assert_float_equal(playback_edit_progress(&e), 0.0f, 1e-6);
        playback_hold(&e, true);
        playback_set_speed(&e, 4.0f);
        playback_update(&e, 0.2);
        assert_float_equal(playback_edit_progress(&e), (float)(0.2 / PLAYBACK_EDIT_SECONDS), 1e-5);
        playback_update(&e, 1.0);
        assert_false(playback_editing(&e));
        assert_float_equal(playback_edit_progress(&e), 1.0f, 1e-6);
    }
    assert_float_equal(ease_in_out_cubic(0.0f), 0.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(1.0f), 1.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(0.5f), 0.5f, 1e-6);
    assert_float_equal(ease_in_out_cubic(-3.0f), 0.0f, 1e-6);
    assert_float_equal(ease_in_out_cubic(7.0f), 1.0f, 1e-6);
    assert_float_equal(ease_out_cubic(0.0f), 0.0f, 1e-6);
    assert_float_equal(ease_out_cubic(1.0f), 1.0f, 1e-6);
    float prev = 0.0f;
    for (int i = 1; i <= 100; i++) {
        float y = ease_in_out_cubic((float)i / 100.0f);
        assert_true(y >= prev);
        prev = y;
    }
    for (int i = 0; i < 5; i++) {
        assert_float_equal(ease_stagger(0.0f, i, 5, 0.3f), 0.0f, 1e-6);
        assert_float_equal(ease_stagger(1.0f, i, 5, 0.3f), 1.0f, 1e-6);
    }
    Playback pb;
    playback_init(&pb, 5);
    assert_int_equal(pb.stage, 0);
    assert_false(playback_animating(&pb));
    playback_prev(&pb);
    assert_int_equal(pb.stage, 0); // clamped
    playback_goto(&pb, 99, true);
    assert_int_equal(pb.stage, 4);
    playback_goto(&pb, -7, false);
    assert_int_equal(pb.stage, 0);
    playback_next(&pb);
    assert_int_equal(pb.stage, 1);
    assert_true(playback_animating(&pb));
    assert_float_equal(playback_progress(&pb), 0.0f, 1e-6);
    for (int i = 0; i < 100; i++) playback_update(&pb, 0.1);
    assert_int_equal(pb.stage, 1); // paused: no auto-advance
    assert_float_equal(playback_progress(&pb), 1.0f, 1e-6);
    playback_toggle(&pb);
    assert_true(pb.playing);
    for (int i = 0; i < 1000; i++) playback_update(&pb, 0.1);
    assert_int_equal(pb.stage, 4); // played to the end, then stopped
    assert_false(pb.playing);
    playback_toggle(&pb); // at the end, play restarts
    assert_int_equal(pb.stage, 0);
    playback_set_speed(&pb, 100.0f);
    assert_float_equal(pb.speed, PLAYBACK_MAX_SPEED, 1e-6);
    playback_set_speed(&pb, 0.0f);
    assert_float_equal(pb.speed, PLAYBACK_MIN_SPEED, 1e-6);
    // time-based: two frame rates reach the same state
    Playback a, b;
    playback_init(&a, 3), playback_init(&b, 3);
    playback_next(&a), playback_next(&b);
    for (int i = 0; i < 10; i++) playback_update(&a, 0.1);
    for (int i = 0; i < 100; i++) playback_update(&b, 0.01);
    assert_float_equal(playback_progress(&a), playback_progress(&b), 1e-4);
    // the scrub bar: held inside a transition, time stands still; frame steps move it
    playback_init(&pb, 3);
    playback_next(&pb);
    playback_update(&pb, 0.4);
    playback_hold(&pb, true);
    float held = playback_progress(&pb);
    assert_true(held > 0.0f && held < 1.0f);
    for (int i = 0; i < 50; i++) playback_update(&pb, 0.1);
    assert_float_equal(playback_progress(&pb), held, 1e-6);
    assert_true(playback_animating(&pb));
    playback_scrub(&pb, 0.5f);
    assert_int_equal(playback_frame(&pb), PLAYBACK_SCRUB_FRAMES / 2);
    playback_step_frame(&pb, 1);
    assert_int_equal(playback_frame(&pb), PLAYBACK_SCRUB_FRAMES / 2 + 1);
    assert_float_equal(playback_progress(&pb), (float)(PLAYBACK_SCRUB_FRAMES / 2 + 1) / PLAYBACK_SCRUB_FRAMES, 1e-6);
    playback_step_frame(&pb, -1), playback_step_frame(&pb, -1);
    assert_int_equal(playback_frame(&pb), PLAYBACK_SCRUB_FRAMES / 2 - 1);
    playback_scrub(&pb, 7.0f);   // clamped
    assert_float_equal(playback_progress(&pb), 1.0f, 1e-6);
    playback_step_frame(&pb, 1); // at the end it stays there
    assert_int_equal(playback_frame(&pb), PLAYBACK_SCRUB_FRAMES);
    assert_int_equal(pb.stage, 1);
    playback_hold(&pb, false);   // released: time runs on
    playback_scrub(&pb, 0.0f), playback_hold(&pb, false);
    for (int i = 0; i < 4; i++) playback_update(&pb, 0.2);
    assert_float_equal(playback_progress(&pb), 0.5f, 1e-6);
    playback_goto(&pb, 2, false); // any move releases the hold
    assert_false(pb.held);
    playback_init(&pb, 3);        // a settled stage: a step back enters its transition from the end
    playback_step_frame(&pb, -1);
    assert_int_equal(playback_frame(&pb), PLAYBACK_SCRUB_FRAMES - 1);
    assert_true(pb.held);
}

// ---- i18n and tooltips ----------------------------------------------------------

static void test_i18n(void **state)
{
    (void)state;
    assert_string_equal(i18n_get(LANG_EN, "ui.batch"), "Batch");
    assert_string_equal(i18n_get(LANG_EN, "no.such.key"), "no.such.key");
    const char zh[] = "# test\nui.batch = 批次\nhelp.x = a\\nb\n";
    char err[200];
    assert_true(i18n_parse(LANG_ZH, "zh-test", zh, sizeof zh - 1, err, sizeof err));
    assert_string_equal(i18n_get(LANG_ZH, "ui.batch"), "批次");
    assert_string_equal(i18n_get(LANG_ZH, "help.x"), "a\nb");
    assert_string_equal(i18n_get(LANG_ZH, "ui.head"), "Head"); // falls back to English
    assert_false(i18n_parse(LANG_ZH, "zh-bad", "oops\n", 5, err, sizeof err));
    assert_non_null(strstr(err, "zh-bad:1"));
    char out[64];
    const char *args[] = {"A", "BB"};
    i18n_format(out, sizeof out, "x{2}y{1}z{3}", 2, args);
    assert_string_equal(out, "xBByAz");
    i18n_format(out, 5, "αβγδ", 0, NULL); // never cuts a UTF-8 sequence
    assert_string_equal(out, "αβ");
    // every key of en.txt that the code uses resolves (spot check)
    const char *keys[] = {"step.input", "step.ffn", "keys.next", "ui.mask_one", "tip.scores", "narr.attn",
                          "title.ffn_out", "alt.panel", "app.saved"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_string_not_equal(i18n_get(LANG_EN, keys[i]), keys[i]);
}

// A lesson and its trace in the caller's variables, built from the core like
// test_attention's fixtures (the app keeps both in a Session, test_session.c);
// neither may move until both are freed.
static bool load(const char *path, Lesson *ls, Trace *tr)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_load(ls, path, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    trace_init(tr);
    if (attn_forward(&ls->cfg, ls->w, &ls->in, tr)) {
        trace_compute_stats(tr); // as a Session does
        return true;
    }
    trace_free(tr);
    lesson_free(ls);
    return false;
}

static void test_explain(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    View v;
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "scores");
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.result_panel >= 0);
    char tip[1024];
    explain_cell(&tr, &v, &L, L.result_panel, 1, 2, tip, sizeof tip);
    assert_non_null(strstr(tip, "/ 1.41"));  // the actual scale
    assert_non_null(strstr(tip, "×"));       // terms written out
    char want[32];
    tip_number(tr.stages[v.stage].t.data[1 * 4 + 2], want, sizeof want);
    assert_non_null(strstr(tip, want));
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    explain_cell(&tr, &v, &L, L.result_panel, 0, 0, tip, sizeof tip);
    assert_non_null(strstr(tip, "exp("));
    v.stage = trace_find(&tr, "q_proj");
    layout_compute(&L, &tr, &v, 1280, 720);
    explain_cell(&tr, &v, &L, L.result_panel, 0, 0, tip, sizeof tip);
    assert_non_null(strstr(tip, "W_Q[")); // the weight as the lesson names it
    assert_non_null(strstr(tip, "b_Q["));
    trace_free(&tr);
    lesson_free(&ls);

    assert_true(load("tests/ref/masked-row-neginf.lesson.json", &ls, &tr));
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    const PanelSpec *ps = &L.spec[L.result_panel];
    bool found = false;
    for (int h = 0; h < tr.n_heads && !found; h++)
        for (int b = 0; b < tr.batch && !found; b++) {
            v.batch = b, v.head = h;
            layout_compute(&L, &tr, &v, 1280, 720);
            ps = &L.spec[L.result_panel];
            for (int i = 0; i < ps->rows && !found; i++)
                if (isnan(panel_value(ps, i, 0))) {
                    explain_cell(&tr, &v, &L, L.result_panel, i, 0, tip, sizeof tip);
                    assert_non_null(strstr(tip, "NaN"));
                    found = true;
                }
        }
    assert_true(found); // the lesson has a NaN row
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- lessons used by layout and pixel tests ---------------------------------------

static glob_t lesson_files(void)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    glob("tests/ref/*.lesson.json", GLOB_APPEND, NULL, &g);
    assert_true(g.gl_pathc >= 2);
    return g;
}

static void check_inside(Rect r, int w, int h, const char *what, const char *lesson, int stage)
{
    if (r.w <= 0 || r.h <= 0) return;
    if (r.x < 0 || r.y < 0 || r.x + r.w > w || r.y + r.h > h)
        fail_msg("%s stage %d: %s (%d,%d %dx%d) outside %dx%d", lesson, stage, what, r.x, r.y, r.w, r.h, w, h);
}

// Every stage of a lesson at the window sizes given (check_layout: five): regions inside and
// apart, panels inside the area, cells tiling each panel (its first and last cell own a
// pixel), readable results (a large result without numbers: its tooltip has the number).
static void check_layout_at(const char *name, const Lesson *ls, const Trace *tr, const int (*sizes)[2], size_t n_sizes)
{
    View v;
    view_init(&v, ls, LANG_EN);
    for (size_t z = 0; z < n_sizes; z++) {
        int w = sizes[z][0], h = sizes[z][1];
        for (int s = 0; s < tr->n; s++) {
            v.stage = s;
            Layout L;
            layout_compute(&L, tr, &v, w, h);
            assert_true(L.n_panels >= 1);
            assert_true(L.result_panel >= 0 && L.spec[L.result_panel].result);
            // fixed regions inside and apart
            Rect fixed[] = {L.timeline, L.tabs, L.header, L.area, L.narration, L.legend};
            for (size_t i = 0; i < 6; i++) {
                check_inside(fixed[i], w, h, "region", name, s);
                for (size_t j = i + 1; j < 6; j++)
                    if (rect_overlap(fixed[i], fixed[j]))
                        fail_msg("%s stage %d at %dx%d: regions %zu and %zu overlap", name, s, w, h, i, j);
            }
            for (int i = 0; i < L.n_steps; i++) {
                check_inside(L.step_rect[i], w, h, "step", name, s);
                for (int j = i + 1; j < L.n_steps; j++) assert_false(rect_overlap(L.step_rect[i], L.step_rect[j]));
            }
            // heatmaps: inside the area, not overlapping each other or their captions
            for (int p = 0; p < L.n_panels; p++) {
                Rect a = L.panel[p];
                if (a.x < L.area.x || a.y < L.area.y || a.x + a.w > L.area.x + L.area.w ||
                    a.y + a.h > L.area.y + L.area.h)
                    fail_msg("%s stage %d at %dx%d: panel %d (%d,%d %dx%d) outside the area (%d,%d %dx%d)", name,
                             s, w, h, p, a.x, a.y, a.w, a.h, L.area.x, L.area.y, L.area.w, L.area.h);
                for (int q = 0; q < L.n_panels; q++) {
                    if (q != p && rect_overlap(L.panel[p], L.panel[q]))
                        fail_msg("%s stage %d at %dx%d: panels %d and %d overlap", name, s, w, h, p, q);
                    if (rect_overlap(L.panel[p], L.caption[q]))
                        fail_msg("%s stage %d at %dx%d: panel %d overlaps caption %d", name, s, w, h, p, q);
                }
                // (a squeezed vocabulary axis, layout.h: cells under a pixel, an image; at least 1/LAYOUT_Q px;
                // and a panel drawn as an image in a small window: the subword model's 18×64 n₂ at 640×400)
                const bool sq_r = layout_squeezed(&L, p, true), sq_c = layout_squeezed(&L, p, false);
                if (!(L.cell[p] >= 1 || ((sq_r || sq_c || L.image[p]) && L.cell_wq[p] >= 1 && L.cell_hq[p] >= 1)))
                    fail_msg("%s stage %s at %dx%d: panel %d (%dx%d) cells %d px (%d/%d, %d/%d)", name,
                             tr->stages[s].name, w, h, p, L.spec[p].rows, L.spec[p].cols, L.cell[p], L.cell_wq[p],
                             LAYOUT_Q, L.cell_hq[p], LAYOUT_Q);
                // cells tile the panel
                Rect c0, c1;
                const PanelSpec *ps = &L.spec[p];
                assert_true(layout_cell_rect(&L, p, 0, 0, &c0));
                assert_true(layout_cell_rect(&L, p, ps->shown_rows - 1, ps->shown_cols - 1, &c1));
                assert_int_equal(c0.x, a.x);
                assert_int_equal(c0.y, a.y);
                assert_int_equal(c1.x + c1.w, a.x + a.w);
                assert_int_equal(c1.y + c1.h, a.y + a.h);
                assert_false(layout_cell_rect(&L, p, ps->shown_rows, 0, &c0));
                int hp, hr, hc;
                assert_true(layout_hit_cell(&L, c1.x + c1.w / 2, c1.y + c1.h / 2, &hp, &hr, &hc));
                assert_int_equal(hp, p);
                assert_int_equal(hr, ps->shown_rows - 1);
                assert_int_equal(hc, ps->shown_cols - 1);
            }
            // the timeline hit-test finds each step
            for (int i = 0; i < L.n_steps; i++)
                assert_int_equal(layout_hit_step(&L, L.step_rect[i].x + 2, L.step_rect[i].y + 2), (int)L.step_id[i]);
            if (w >= 800) { // readable: cells of the result at least 14 px at projector sizes
                // (10 px at 800×600, where every term of a projection shares the width)
                // (a squeezed vocabulary axis is an image: the other side must be readable)
                const int rp = L.result_panel;
                const int side = layout_squeezed(&L, rp, false) ? L.cell_hq[rp] / LAYOUT_Q
                                 : layout_squeezed(&L, rp, true) ? L.cell_wq[rp] / LAYOUT_Q : L.cell[rp];
                // (a large result — d_model 64 columns beside a 768-row E — is a heatmap: no
                // numbers in its cells, as describe.c counts them; hovering one gives its number)
                const PanelSpec *rs = &L.spec[rp];
                int results = 0; // (the heads' panels of a split: 4 of 18×16 share the 64 columns)
                for (int q = 0; q < L.n_panels; q++) results += L.spec[q].result;
                const bool numbers = !L.image[rp] && rs->decimals >= 0 && rs->px_cell > 0;
                const bool large = !numbers && (rs->cols * results >= 48 || rs->rows >= 48);
                if (side < (w >= 1024 ? 14 : 10) && !large)
                    fail_msg("%s stage %s at %dx%d: result cells %d px", name, tr->stages[s].name, w, h, side);
                if (large) {
                    char tip[2048], num[32];
                    explain_cell(tr, &v, &L, rp, rs->shown_rows - 1, rs->shown_cols - 1, tip, sizeof tip);
                    tip_number(panel_value(rs, rs->shown_rows - 1, rs->shown_cols - 1), num, sizeof num);
                    if (!strstr(tip, num))
                        fail_msg("%s stage %s at %dx%d: an image result's tooltip without its number %s: %s", name,
                                 tr->stages[s].name, w, h, num, tip);
                }
                for (int i = 0; i < L.n_batch_tabs; i++) check_inside(L.batch_tab[i], w, h, "tab", name, s);
                for (int i = 0; i < L.n_head_tabs; i++) check_inside(L.head_tab[i], w, h, "tab", name, s);
            }
        }
    }
}

static void check_layout(const char *name, const Lesson *ls, const Trace *tr)
{
    static const int sizes[][2] = {{1280, 720}, {800, 600}, {1920, 1080}, {640, 400}, {2560, 1440}};
    check_layout_at(name, ls, tr, sizes, sizeof sizes / sizeof sizes[0]);
}

static void test_layout(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        check_layout(g.gl_pathv[f], &ls, &tr);
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
}

// A vocabulary of 768 tokens (a BPE model's 256 bytes and 512 merges): tiny-lm-fortunes with
// 745 more tokens, their embedding and unembedding rows copies of the first ones. With
// V·cell a multiple of LAYOUT_Q (768 = 3·256), the squeezed axis's last cell (the last token's
// logit) had no pixel at every size: layout_cell_rect failed on it and the image never drew it.
static void test_layout_vocab_768(void **state)
{
    (void)state;
    cJSON *root = ref_read_json("lessons/tiny-lm-fortunes.json");
    cJSON *vocab = cJSON_GetObjectItem(root, "vocab"), *w = cJSON_GetObjectItem(root, "weights");
    cJSON *embed = cJSON_GetObjectItem(w, "embed"), *head = cJSON_GetObjectItem(w, "lm_head");
    const int V0 = cJSON_GetArraySize(vocab);
    for (int i = V0; i < 768; i++) {
        const unsigned cp = 0x4E00u + (unsigned)i; // (a CJK character: one token of its own)
        char tok[4] = {(char)(0xE0 | (cp >> 12)), (char)(0x80 | ((cp >> 6) & 0x3F)), (char)(0x80 | (cp & 0x3F)), 0};
        cJSON_AddItemToArray(vocab, cJSON_CreateString(tok));
        cJSON_AddItemToArray(embed, cJSON_Duplicate(cJSON_GetArrayItem(embed, i % V0), true));
        cJSON_AddItemToArray(head, cJSON_Duplicate(cJSON_GetArrayItem(head, i % V0), true));
    }
    cJSON_DeleteItemFromObject(root, "task"), cJSON_DeleteItemFromObject(root, "quiz");
    char *text = cJSON_PrintUnformatted(root), err[LESSON_ERR_MAX];
    cJSON_Delete(root);
    Lesson ls;
    Trace tr;
    if (!lesson_parse(&ls, "vocab-768.json", text, strlen(text), err, sizeof err)) fail_msg("%s", err);
    free(text);
    assert_int_equal(ls.n_vocab, 768);
    trace_init(&tr);
    assert_true(attn_forward(&ls.cfg, ls.w, &ls.in, &tr));
    trace_compute_stats(&tr);
    check_layout("vocab-768", &ls, &tr);
    trace_free(&tr);
    lesson_free(&ls);
}

// tests/big/subword-lm-768.json: the subword model's shape (V = 768, d_model 64, 4 heads, 4
// layers, a typed sentence of 18 tokens): every stage at every size lays out like a shipped
// lesson's (token_embed's result, 18×64, had 7 px cells at 1280×720).
static void test_layout_subword_768(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("tests/big/subword-lm-768.json", &ls, &tr));
    // (the sizes a class projects; at 800×600 and below the feed-forward's 64 + 256 + 256
    // columns leave its input's cells under a pixel)
    static const int sizes[][2] = {{1280, 720}, {1920, 1080}, {2560, 1440}, {3840, 2160}};
    check_layout_at("subword-lm-768", &ls, &tr, sizes, sizeof sizes / sizeof sizes[0]);
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- pixels ---------------------------------------------------------------------

#define GUARD 8
#define GUARD_BYTE 0xA5

typedef struct Target {
    unsigned char *buf; // (h + 2·GUARD) rows of (w + 2·GUARD) pixels
    int w, h, bpitch;
    SDL_Surface *s;     // the inner w×h window of buf
    SDL_Renderer *r;
    Canvas c;           // r with the shared fonts, no heatmap cache
    DrawList dl;        // c's commands
} Target;

static void target_init(Target *t, int w, int h)
{
    t->w = w, t->h = h;
    t->bpitch = (w + 2 * GUARD) * 4;
    t->buf = malloc((size_t)t->bpitch * (size_t)(h + 2 * GUARD));
    assert_non_null(t->buf);
    memset(t->buf, GUARD_BYTE, (size_t)t->bpitch * (size_t)(h + 2 * GUARD));
    t->s = SDL_CreateRGBSurfaceWithFormatFrom(t->buf + (size_t)GUARD * (size_t)t->bpitch + GUARD * 4, w, h, 32,
                                              t->bpitch, SDL_PIXELFORMAT_RGBA32);
    assert_non_null(t->s);
    t->r = SDL_CreateSoftwareRenderer(t->s);
    assert_non_null(t->r);
    draw_list_init(&t->dl);
    t->c = (Canvas){t->r, fonts, NULL, NULL, &t->dl};
}

static void target_free(Target *t)
{
    fonts_flush(fonts);
    draw_list_free(&t->dl);
    SDL_DestroyRenderer(t->r);
    SDL_FreeSurface(t->s);
    free(t->buf);
}

// A buffer for a copy of t's pixels and guards (bytes long), to compare frames with.
static unsigned char *target_copy(const Target *t, size_t *bytes)
{
    *bytes = (size_t)t->bpitch * (size_t)(t->h + 2 * GUARD);
    unsigned char *buf = malloc(*bytes);
    assert_non_null(buf);
    return buf;
}

static void check_guard(const Target *t, const char *what)
{
    for (int y = 0; y < t->h + 2 * GUARD; y++) {
        const unsigned char *row = t->buf + (size_t)y * (size_t)t->bpitch;
        bool inner_row = y >= GUARD && y < GUARD + t->h;
        for (int x = 0; x < (t->w + 2 * GUARD) * 4; x++) {
            if (inner_row && x >= GUARD * 4 && x < (GUARD + t->w) * 4) continue;
            if (row[x] != GUARD_BYTE) fail_msg("%s: drew outside the target at byte %d of guard row %d", what, x, y);
        }
    }
}

static Rgb pixel(const Target *t, int x, int y)
{
    const unsigned char *p = (const unsigned char *)t->s->pixels + (size_t)y * (size_t)t->s->pitch + (size_t)x * 4;
    return (Rgb){p[0], p[1], p[2]};
}

static bool near(Rgb a, Rgb b, int tol)
{
    return abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol;
}

// Every cell's corner inset shows the colormap colour of its value (or the masked / NaN look).
static void check_cells(const Target *t, const Layout *L, const char *what)
{
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        for (int i = 0; i < ps->shown_rows; i++)
            for (int j = 0; j < ps->shown_cols; j++) {
                Rect c;
                if (!layout_cell_rect(L, p, i, j, &c)) { // scrolled out (zoom) or narrower than a pixel
                    assert_true(L->zoom_x[p] || L->zoom_y[p] || L->image[p]);
                    continue;
                }
                if (c.w < 4 || c.h < 4) continue;
                int g = render_cell_gap(c.w < c.h ? c.w : c.h);
                if (!rect_contains(L->panel[p], c.x + g + 1, c.y + g + 1)) continue; // partly scrolled out
                Rgb want = render_cell_color(ps, i, j);
                CellLook look = render_cell_look(ps, i, j);
                float v = panel_value(ps, i, j);
                // a decoding step's key not in the cache yet: empty (issue 35), not a masked −∞
                bool absent = (strstr(ps->source, "decode_scores") || strstr(ps->source, "decode_attn")) && j > i;
                if (absent) {
                    Rgb got = pixel(t, c.x + g + 1, c.y + g + 1);
                    if (!near(got, THEME.empty, 2))
                        fail_msg("%s: panel %d cell (%d,%d), a key not cached yet: pixel %d,%d,%d, not empty", what, p, i,
                                 j, got.r, got.g, got.b);
                    continue;
                }
                if (isnan(v) && !(ps->mask && ps->mask[(size_t)i * (size_t)ps->cols + (size_t)j] == 0.0f))
                    assert_int_equal(look, CELL_NAN);
                if (ps->mask && ps->mask[(size_t)i * (size_t)ps->cols + (size_t)j] == 0.0f)
                    assert_int_equal(look, CELL_MASKED);
                Rgb got = pixel(t, c.x + g + 1, c.y + g + 1);
                if (!near(got, want, 2))
                    fail_msg("%s: panel %d cell (%d,%d) = %g: pixel %d,%d,%d, want %d,%d,%d (look %d)", what, p, i, j,
                             (double)v, got.r, got.g, got.b, want.r, want.g, want.b, (int)look);
                if (look == CELL_VALUE) { // the colour is the colormap's, not a special look
                    Rgb cm = colormap_value(&ps->scale, v);
                    assert_memory_equal(&cm, &want, sizeof cm);
                }
            }
    }
}

// make test-full (ATTNVIZ_FULL=1): every frame of every lesson; make test: the
// classic lesson and every 8th of the others (a different eighth each size).
static bool full_sweep(void)
{
    const char *v = getenv("ATTNVIZ_FULL");
    return v && *v && strcmp(v, "0") != 0;
}

static void test_render_all_lessons(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    const int sizes[][2] = {{1280, 720}, {800, 600}};
    const bool full = full_sweep();
    int frames = 0;
    for (size_t z = 0; z < 2; z++) {
        Target t;
        target_init(&t, sizes[z][0], sizes[z][1]);
        for (size_t f = 0; f < g.gl_pathc; f++) {
            if (!full && f % 8 != z * 4 && strcmp(g.gl_pathv[f], "lessons/arange-2x4x4.json") != 0) continue;
            Lesson ls;
            Trace tr;
            assert_true(load(g.gl_pathv[f], &ls, &tr));
            View v;
            Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
            view_init(&v, &ls, LANG_EN);
            for (int s = 0; s < tr.n; s++)
                for (int hb = 0; hb < 2; hb++) {
                    v.stage = s;
                    v.head = hb ? tr.n_heads - 1 : 0;
                    v.batch = hb ? tr.batch - 1 : 0;
                    Layout L;
                    layout_compute(&L, &tr, &v, t.w, t.h);
                    char what[300];
                    for (int values = 0; values < 2; values++) {
                        v.show_values = values;
                        v.anim = 1.0f;
                        render_frame(&t.c, &tr, &v, &ov);
                        snprintf(what, sizeof what, "%s %dx%d stage %s b%d h%d values %d", g.gl_pathv[f], t.w, t.h,
                                 tr.stages[s].name, v.batch, v.head, values);
                        check_cells(&t, &L, what);
                        frames++;
                    }
                    // mid-animation frames draw too, inside the target
                    v.anim = 0.4f;
                    render_frame(&t.c, &tr, &v, &ov);
                    check_guard(&t, what);
                }
            trace_free(&tr);
            lesson_free(&ls);
        }
        target_free(&t);
    }
    print_message("%d frames (%s)\n", frames, full ? "every lesson: ATTNVIZ_FULL" : "a sample: ATTNVIZ_FULL=1 for every lesson");
    assert_true(frames > (full ? 4000 : 100));
    globfree(&g);
}

// A tooltip never covers what it explains: the hovered cell and the operand rows,
// columns and cells it reads keep their pixels when the tooltip is drawn.
static void test_tooltip_clear_of_operands(void **state)
{
    (void)state;
    const char *files[] = {"lessons/arange-2x4x4.json", "lessons/cross-attention-padding.json",
                           "lessons/dk-dv-residual-ffn.json", "lessons/sentence-the-cat.json"};
    Target t;
    target_init(&t, 1280, 720);
    size_t bytes;
    unsigned char *plain = target_copy(&t, &bytes);
    int checked = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(files[f], &ls, &tr));
        View v;
        Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
        view_init(&v, &ls, LANG_EN);
        for (v.stage = 0; v.stage < tr.n; v.stage++) {
            Layout L;
            layout_compute(&L, &tr, &v, t.w, t.h);
            int r = L.result_panel;
            if (r < 0) continue;
            const PanelSpec *res = &L.spec[r];
            int cells[3][2] = {{0, 0}, {res->rows / 2, res->cols - 1}, {res->rows - 1, res->cols / 2}};
            for (int k = 0; k < 3; k++) {
                int row = cells[k][0], col = cells[k][1];
                Rect q;
                if (!layout_cell_rect(&L, r, row, col, &q)) continue;
                ov.hover = false;
                render_frame(&t.c, &tr, &v, &ov);
                memcpy(plain, t.buf, bytes);
                ov.hover = true, ov.mouse_x = q.x + q.w / 2, ov.mouse_y = q.y + q.h / 2;
                render_frame(&t.c, &tr, &v, &ov);
                Rect keep[LAYOUT_MAX_PANELS + 1];
                int n = 0;
                keep[n++] = q;
                for (int p = 0; p < L.n_panels; p++) {
                    Highlight h;
                    if (!scene_highlight(&L, r, row, col, p, &h)) continue;
                    Rect pq = L.panel[p];
                    Rect a = {h.col < 0 ? pq.x : layout_col_x(&L, p, h.col), h.row < 0 ? pq.y : layout_row_y(&L, p, h.row), 0, 0};
                    a.w = (h.col < 0 ? pq.x + pq.w : layout_col_x(&L, p, h.col + 1)) - a.x;
                    a.h = (h.row < 0 ? pq.y + pq.h : layout_row_y(&L, p, h.row + 1)) - a.y;
                    keep[n++] = a;
                }
                for (int i = 0; i < n; i++)
                    for (int y = keep[i].y + 1; y < keep[i].y + keep[i].h - 1; y++)
                        for (int x = keep[i].x + 1; x < keep[i].x + keep[i].w - 1; x++) {
                            size_t off = (size_t)(y + GUARD) * (size_t)t.bpitch + (size_t)(x + GUARD) * 4;
                            if (memcmp(plain + off, t.buf + off, 4) != 0)
                                fail_msg("%s stage %s: the tooltip of [%d,%d] covers what it explains (%d,%d)", files[f],
                                         tr.stages[v.stage].name, row, col, x, y);
                        }
                checked++;
            }
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    free(plain);
    target_free(&t);
    assert_true(checked > 60);
}

// The frame as commands (drawlist.h): what render_frame_record leaves on the list
// for the classic lesson's scores: a clear first, balanced pushes, every text and
// rectangle on the output, each cell's number as a text; the hover layer adds
// the tooltip only without the help over it; a second frame reuses the memory.
// While the transition into the softmax runs, a row not computed yet has no tooltip, and
// neither has its Σ (issue 22 item 10: the Σ of a row still to come, over the strip);
// a computed row's cell and Σ have theirs, settled every row has.
static void test_hover_during_transition(void **state)
{
    (void)state;
    Target t;
    target_init(&t, 1280, 720);
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    View v;
    Overlays ov = {0};
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    assert_true(v.stage >= 0);
    Layout L;
    layout_compute(&L, &tr, &v, t.w, t.h);
    int r = L.result_panel, last = L.spec[r].rows - 1;
    assert_true(L.sum_w[r] > 0);
    // a moment of the transition when row 0 is computed and the last row not yet
    float mid = -1.0f;
    for (int i = 1; i < 40 && mid < 0.0f; i++) {
        v.anim = (float)i / 40.0f;
        if (anim_cell_shown(&L, &tr, &v, r, 0, 0) && !anim_cell_shown(&L, &tr, &v, r, last, 0)) mid = v.anim;
    }
    assert_true(mid > 0.0f);
    for (int settled = 0; settled < 2; settled++) {
        v.anim = settled ? 1.0f : mid;
        for (int row = 0; row <= last; row += last) {
            bool shown = anim_cell_shown(&L, &tr, &v, r, row, 0);
            assert_true(shown == (settled || row == 0));
            assert_true(anim_cell_shown(&L, &tr, &v, r, row, -1) == shown);
            Rect q;
            assert_true(layout_cell_rect(&L, r, row, 0, &q));
            int sx = L.panel[r].x + L.panel[r].w + (int)(6 * L.s) + L.sum_w[r] / 2, sy = q.y + q.h / 2;
            int xs[2] = {q.x + q.w / 2, sx}, ys[2] = {sy, sy};
            for (int k = 0; k < 2; k++) {
                ov.hover = false;
                render_frame_record(&t.c, &L, &tr, &v, &ov);
                size_t plain = t.dl.n;
                paint_flush(&t.c);
                ov.hover = true, ov.mouse_x = xs[k], ov.mouse_y = ys[k];
                render_frame_record(&t.c, &L, &tr, &v, &ov);
                size_t hovered = t.dl.n;
                paint_flush(&t.c);
                if ((hovered > plain) != shown)
                    fail_msg("anim %.1f row %d %s: tooltip %s", (double)v.anim, row, k ? "Σ" : "cell",
                             hovered > plain ? "drawn" : "missing");
            }
        }
    }
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// Issue 35, item 12: at 800x600 and 1024x768 the window's chrome (with its buttons, as the
// window draws it) keeps what it shows whole and apart, for every stage: a step's label
// (two lines where it is narrow) above its sub-step dots; the status line's texts whole
// (not "aused") and clear of the buttons; the Study, What if… and Lessons… buttons there
// (language-model lessons too); no legend name cut ("scores, mas…").
static void test_small_chrome(void **state)
{
    (void)state;
    static const char *lessons[] = {"lessons/tiny-lm-fortunes.json", "lessons/llama-block.json",
                                    "lessons/dk-dv-residual-ffn.json", "lessons/arange-2x4x4.json",
                                    "lessons/causal-decoder.json"};
    static const int sizes[][2] = {{800, 600}, {1024, 768}};
    static Picker picker;
    static LabMenu lab;
    static Study study;
    for (size_t li = 0; li < sizeof lessons / sizeof lessons[0]; li++)
        for (size_t si = 0; si < 2; si++)
            for (int lang = 0; lang < 2; lang++) {
                Lesson ls;
                Trace tr;
                assert_true(load(lessons[li], &ls, &tr));
                const int w = sizes[si][0], h = sizes[si][1];
                Target t;
                target_init(&t, w, h);
                TextMeasure measure = {text_measure, fonts};
                View v;
                view_init(&v, &ls, lang ? LANG_ZH : LANG_EN);
                v.measure = &measure;
                v.anim = 1.0f;
                Overlays ov = {0};
                ov.picker = &picker, ov.lab = &lab, ov.study = &study;
                for (v.stage = 0; v.stage < tr.n; v.stage++) {
                    Layout *L = malloc(sizeof *L);
                    assert_non_null(L);
                    layout_compute(L, &tr, &v, w, h);
                    render_frame_record(&t.c, L, &tr, &v, &ov);
                    Rect btn[3];
                    bool have = picker_button_rect(L, &btn[0]) && lab_button_rect(L, &btn[1]) && study_button_rect(L, &btn[2]);
                    if (!have) fail_msg("%s %dx%d %s: a button is missing (Study, What if…, Lessons…)", lessons[li], w, h,
                                        tr.stages[v.stage].name);
                    int dot = paint_px(L->s, 7);
                    const DrawList *dl = &t.dl;
                    for (size_t i = 0; i < dl->n; i++) {
                        const DrawCmd *c = &dl->cmd[i];
                        if (c->op != DRAW_TEXT || c->wrap_w > 0) continue;
                        const char *str = draw_list_str(dl, c);
                        int tw, th;
                        paint_text_size(&t.c, c->face, c->px, str, &tw, &th);
                        Rect e = {c->r.x, c->r.y, tw, th};
                        for (int k = 0; k < L->n_steps; k++) { // above the dots of its step
                            Rect q = L->step_rect[k];
                            if (!rect_contains(q, e.x + e.w / 2, e.y + e.h / 2)) continue;
                            int dots_top = q.y + q.h - dot - paint_px(L->s, 5);
                            if (e.y + e.h > dots_top + 1)
                                fail_msg("%s %dx%d %s: the step label \"%s\" (y %d-%d) runs into its dots (from y %d)",
                                         lessons[li], w, h, tr.stages[v.stage].name, str, e.y, e.y + e.h, dots_top);
                        }
                        if (rect_contains(L->status, e.x + e.w / 2, e.y + e.h / 2)) { // whole, beside the buttons
                            bool button = false;
                            for (int b = 0; b < 3; b++) button |= rect_contains(btn[b], e.x + e.w / 2, e.y + e.h / 2);
                            if (!button && (e.x < L->status.x || e.x + e.w > L->status.x + L->status.w))
                                fail_msg("%s %dx%d %s: \"%s\" cut at the status line's edge", lessons[li], w, h,
                                         tr.stages[v.stage].name, str);
                            for (int b = 0; b < 3 && !button; b++)
                                if (rect_overlap(e, btn[b]))
                                    fail_msg("%s %dx%d %s: \"%s\" under a button", lessons[li], w, h, tr.stages[v.stage].name, str);
                        }
                        size_t n = strlen(str);
                        if (rect_contains(L->legend, e.x, e.y) && n >= 3 && strcmp(str + n - 3, "…") == 0)
                            fail_msg("%s %dx%d %s: a legend name cut: \"%s\"", lessons[li], w, h, tr.stages[v.stage].name, str);
                    }
                    draw_list_clear(&t.dl);
                    free(L);
                }
                target_free(&t);
                trace_free(&tr);
                lesson_free(&ls);
            }
}

static void test_frame_commands(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    Target t;
    target_init(&t, 1280, 720);
    View v;
    Overlays ov = {0};
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "scores");
    v.anim = 1.0f;
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    render_frame_record(&t.c, &L, &tr, &v, &ov);
    const DrawList *dl = &t.dl;
    assert_false(dl->oom);
    assert_true(dl->n > 100);
    assert_int_equal(dl->cmd[0].op, DRAW_CLEAR);
    int depth = 0, texts = 0;
    for (size_t i = 0; i < dl->n; i++) {
        const DrawCmd *c = &dl->cmd[i];
        depth += c->op == DRAW_PUSH ? 1 : c->op == DRAW_POP ? -1 : 0;
        assert_true(depth >= 0);
        if (c->op == DRAW_TEXT) {
            texts++;
            assert_true(c->r.x < 1280 && c->r.y < 720 && c->px > 0);
            assert_true(draw_list_str(dl, c)[0] != '\0');
        }
        if (c->op == DRAW_FILL) assert_true(c->r.w > 0 && c->r.h > 0);
    }
    assert_int_equal(depth, 0);
    // every number of the first result panel stands as a text command
    int res = L.result_panel;
    assert_true(res >= 0);
    const PanelSpec *ps = &L.spec[res];
    assert_true(ps->decimals >= 1);
    int found = 0;
    for (int i = 0; i < ps->rows; i++)
        for (int j = 0; j < ps->cols; j++) {
            char num[32];
            snprintf(num, sizeof num, "%.*f", ps->decimals, (double)panel_value(ps, i, j));
            for (size_t k = 0; k < dl->n; k++)
                if (dl->cmd[k].op == DRAW_TEXT && strcmp(draw_list_str(dl, &dl->cmd[k]), num) == 0) {
                    found++;
                    break;
                }
        }
    assert_int_equal(found, ps->rows * ps->cols);
    size_t plain = dl->n;
    const DrawCmd *mem = dl->cmd;
    assert_true(paint_flush(&t.c));
    assert_int_equal(t.dl.n, 0);
    // the same frame again: the same commands in the same memory
    render_frame_record(&t.c, &L, &tr, &v, &ov);
    assert_int_equal(t.dl.n, plain);
    assert_ptr_equal(t.dl.cmd, mem);
    paint_flush(&t.c);
    // hovering a result cell adds the tooltip; with the help overlay the hover draws nothing
    Rect q;
    assert_true(layout_cell_rect(&L, res, 1, 1, &q));
    ov.hover = true, ov.mouse_x = q.x + q.w / 2, ov.mouse_y = q.y + q.h / 2;
    render_frame_record(&t.c, &L, &tr, &v, &ov);
    size_t hovered = t.dl.n;
    paint_flush(&t.c);
    assert_true(hovered > plain);
    ov.help = true;
    render_frame_record(&t.c, &L, &tr, &v, &ov);
    size_t help = t.dl.n;
    paint_flush(&t.c);
    ov.hover = false;
    render_frame_record(&t.c, &L, &tr, &v, &ov);
    assert_int_equal(t.dl.n, help);
    paint_flush(&t.c);
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// A flush between a push and its pop (an image refilled inside a crop) keeps the
// push: what is drawn after the flush is still clipped to it, and the pop restores.
static void test_flush_inside_push(void **state)
{
    (void)state;
    Target t;
    target_init(&t, 100, 100);
    const Rgb black = {0, 0, 0}, red = {230, 20, 30}, blue = {0, 0, 230};
    paint_clear(&t.c, black);
    paint_push(&t.c, (Rect){0, 0, 10, 10});
    assert_true(paint_flush(&t.c));
    paint_fill(&t.c, red, 255, 0, 0, 100, 100);
    paint_pop(&t.c);
    paint_fill(&t.c, blue, 255, 90, 90, 10, 10);
    assert_true(paint_flush(&t.c));
    Rgb in = pixel(&t, 5, 5), out = pixel(&t, 50, 50), after = pixel(&t, 95, 95);
    assert_true(in.r == red.r && in.g == red.g && in.b == red.b);
    assert_true(out.r == 0 && out.g == 0 && out.b == 0);
    assert_true(after.b == blue.b && after.r == 0); // the pop let drawing reach everywhere again
    assert_int_equal(t.dl.clips.depth, 0);
    target_free(&t);
}

// The key table (keymap.h): every name resolves to an SDL key; keys find their
// action (modifiers first, Shift passed through, Ctrl not); every action is bound;
// the help lists each section's rows in both languages, one "label<TAB>text" a line.
static void test_key_table(void **state)
{
    (void)state;
    char err[256];
    assert_true(keys_init(err, sizeof err));
    assert_int_equal(keys_lookup(SDLK_RIGHT, KMOD_NONE), KEY_ACT_NEXT);
    assert_int_equal(keys_lookup(SDLK_PAGEDOWN, KMOD_NONE), KEY_ACT_NEXT);
    assert_int_equal(keys_lookup(SDLK_RIGHT, KMOD_LSHIFT), KEY_ACT_PAN);
    assert_int_equal(keys_lookup(SDLK_RIGHT, KMOD_LCTRL), KEY_ACT_FRAME_FORWARD);
    assert_int_equal(keys_lookup(SDLK_TAB, KMOD_NONE), KEY_ACT_HEAD_NEXT);
    assert_int_equal(keys_lookup(SDLK_TAB, KMOD_RSHIFT), KEY_ACT_HEAD_PREV);
    assert_int_equal(keys_lookup(SDLK_l, KMOD_NONE), KEY_ACT_LANG);
    assert_int_equal(keys_lookup(SDLK_l, KMOD_LCTRL), KEY_ACT_LASER);
    assert_int_equal(keys_lookup(SDLK_p, KMOD_LSHIFT), KEY_ACT_PLAY);
    assert_int_equal(keys_lookup(SDLK_p, KMOD_LCTRL), KEY_ACT_NONE);
    assert_int_equal(keys_lookup(SDLK_z, KMOD_LSHIFT), KEY_ACT_ZOOM_OUT);
    assert_int_equal(keys_lookup(SDLK_SLASH, KMOD_LSHIFT), KEY_ACT_HELP);
    assert_int_equal(keys_lookup(SDLK_SLASH, KMOD_NONE), KEY_ACT_NONE);
    assert_int_equal(keys_lookup(SDLK_7, KMOD_NONE), KEY_ACT_DIGIT);
    assert_int_equal(keys_lookup(SDLK_q, KMOD_LCTRL), KEY_ACT_QUIT);
    assert_int_equal(keys_lookup(SDLK_q, KMOD_NONE), KEY_ACT_QUIT);
    assert_int_equal(keys_lookup(SDLK_ESCAPE, KMOD_NONE), KEY_ACT_ESCAPE); // never quits (issue 35)
    assert_int_equal(keys_lookup(SDLK_n, KMOD_NONE), KEY_ACT_LOOP_NEXT);
    assert_int_equal(keys_lookup(SDLK_n, KMOD_LSHIFT), KEY_ACT_LOOP_PREV);
    assert_int_equal(keys_lookup(SDLK_j, KMOD_NONE), KEY_ACT_LAYER_NEXT);
    assert_int_equal(keys_lookup(SDLK_UP, KMOD_LCTRL), KEY_ACT_WARMER);
    assert_int_equal(keys_lookup(SDLK_DOWN, KMOD_LCTRL), KEY_ACT_COOLER);
    assert_int_equal(keys_lookup(SDLK_a, KMOD_NONE), KEY_ACT_MODEL_VIEW);
    assert_int_equal(keys_lookup(SDLK_i, KMOD_NONE), KEY_ACT_TEXT);
    assert_int_equal(keys_lookup(SDLK_j, KMOD_LSHIFT), KEY_ACT_LAYER_PREV);
    assert_int_equal(keys_lookup(SDLK_r, KMOD_NONE), KEY_ACT_TRAIN);
    assert_int_equal(keys_lookup(SDLK_r, KMOD_LSHIFT), KEY_ACT_TRAIN_STEP);
    assert_int_equal(keys_lookup(SDLK_d, KMOD_LCTRL), KEY_ACT_COMPARE_NEXT);
    assert_int_equal(keys_lookup(SDLK_d, KMOD_LCTRL | KMOD_LSHIFT), KEY_ACT_COMPARE_PREV);
    assert_int_equal(keys_lookup(SDLK_r, KMOD_LCTRL), KEY_ACT_NONE); // (the lab's reset)
    assert_int_equal(keys_lookup(SDLK_b, KMOD_LCTRL), KEY_ACT_BACKWARD); // the backward view (issue 38)
    assert_int_equal(keys_lookup(SDLK_b, KMOD_NONE), KEY_ACT_BATCH_NEXT);
    assert_int_equal(keys_lookup(SDLK_b, KMOD_LSHIFT), KEY_ACT_BATCH_PREV);
    assert_int_equal(keys_lookup(SDLK_y, KMOD_NONE), KEY_ACT_CURSOR);
    bool bound[KEY_ACTION_COUNT] = {false};
    for (size_t r = 0; r < KEYMAP_N_ROWS; r++)
        for (int b = 0; b < KEYMAP_MAX_BINDINGS && KEYMAP_ROWS[r].bind[b].key; b++) bound[KEYMAP_ROWS[r].bind[b].action] = true;
    for (int k = KEY_ACT_NONE + 1; k < KEY_ACTION_COUNT; k++)
        if (!bound[k]) fail_msg("key action %d has no key", k);
    assert_int_equal(keys_lookup(SDLK_UP, KMOD_LCTRL | KMOD_LSHIFT), KEY_ACT_TOP_K);
    assert_int_equal(keys_lookup(SDLK_DOWN, KMOD_LCTRL | KMOD_RSHIFT), KEY_ACT_TOP_P);
    assert_int_equal(keys_lookup(SDLK_g, KMOD_LCTRL), KEY_ACT_GENERATE);
    assert_int_equal(keys_lookup(SDLK_g, KMOD_LCTRL | KMOD_LSHIFT), KEY_ACT_GENERATE_DRAW);
    const int rows[KEY_SECTION_COUNT] = {29, 18, 6, 10};
    for (int l = 0; l < LANG_COUNT; l++)
        for (int sct = 0; sct < KEY_SECTION_COUNT; sct++) {
            char help[2048];
            keymap_help((KeySection)sct, (Lang)l, help, sizeof help);
            int lines = 1, tabs = 0;
            for (const char *c = help; *c; c++) lines += *c == '\n', tabs += *c == '\t';
            assert_int_equal(lines, rows[sct]);
            assert_int_equal(tabs, rows[sct]);
            assert_true(strlen(help) + 1 < sizeof help);
        }
}

static void test_render_overlays_and_determinism(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("tests/ref/per-head-causal-neginf.lesson.json", &ls, &tr));
    Target a, b;
    target_init(&a, 1280, 720);
    View v;
    Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
    view_init(&v, &ls, LANG_EN);
    size_t bytes = (size_t)a.bpitch * (size_t)(a.h + 2 * GUARD);
    unsigned char *copy = malloc(bytes);
    assert_non_null(copy);
    for (int s = 0; s < tr.n; s++) {
        v.stage = s;
        for (int k = 0; k <= 4; k++) {
            v.anim = (float)k / 4.0f;
            render_frame(&a.c, &tr, &v, &ov); // may fill the text cache
            memcpy(copy, a.buf, bytes);
            render_frame(&a.c, &tr, &v, &ov); // from the cache: same pixels
            assert_memory_equal(copy, a.buf, bytes);
        }
    }
    // a different renderer (fresh cache) gives the same pixels too
    v.stage = trace_find(&tr, "masked_scores");
    v.anim = 0.5f;
    render_frame(&a.c, &tr, &v, &ov);
    memcpy(copy, a.buf, bytes);
    target_free(&a);
    target_init(&b, 1280, 720);
    render_frame(&b.c, &tr, &v, &ov);
    assert_memory_equal(copy, b.buf, bytes);
    // help overlay and a hover tooltip change the frame and stay inside it
    v.anim = 1.0f;
    render_frame(&b.c, &tr, &v, &ov);
    memcpy(copy, b.buf, bytes);
    ov.help = true;
    render_frame(&b.c, &tr, &v, &ov);
    check_guard(&b, "help");
    assert_memory_not_equal(copy, b.buf, bytes);
    ov.help = false;
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    Rect c;
    assert_true(layout_cell_rect(&L, L.result_panel, 1, 0, &c));
    ov.hover = true, ov.mouse_x = c.x + c.w / 2, ov.mouse_y = c.y + c.h / 2;
    render_frame(&b.c, &tr, &v, &ov);
    check_guard(&b, "tooltip");
    assert_memory_not_equal(copy, b.buf, bytes);
    // corners: hovering the last cell near the window edge keeps the tooltip inside
    ov.mouse_x = 1279, ov.mouse_y = 719;
    render_frame(&b.c, &tr, &v, &ov);
    check_guard(&b, "tooltip at the corner");
    ov.hover = false;
    ov.toast = "Saved /tmp/attnviz-0001-input.png";
    ov.toast_alpha = 1.0f;
    render_frame(&b.c, &tr, &v, &ov);
    check_guard(&b, "toast");
    // the text cache is hit once warm: a settled frame renders no new text
    TextStats s0 = text_stats(fonts);
    render_frame(&b.c, &tr, &v, &ov);
    TextStats s1 = text_stats(fonts);
    assert_int_equal(s1.misses, s0.misses);
    free(copy);
    target_free(&b);
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- readability: numbers, labels -----------------------------------------------------

// Numbers in cells are never below the readable size (13 px at 1280×720, scaled
// with the UI, at least 10 px); a panel drops decimals before it shrinks them.
static void test_numbers_readable(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    const int sizes[][2] = {{1280, 720}, {800, 600}, {1920, 1080}};
    int with_numbers = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        View v;
        view_init(&v, &ls, LANG_EN);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int s = 0; s < tr.n; s++) {
                v.stage = s;
                Layout L;
                layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
                int min_px = layout_min_number_px(L.s);
                assert_true(min_px >= 10 && min_px >= (int)lrintf(LAYOUT_MIN_NUMBER_PX * fminf(L.s, 1.0f)));
                for (int p = 0; p < L.n_panels; p++) {
                    const PanelSpec *ps = &L.spec[p];
                    if (ps->decimals < 0) continue;
                    with_numbers++;
                    if (ps->px_cell < min_px)
                        fail_msg("%s stage %s at %dx%d: panel %d numbers at %d px (< %d)", g.gl_pathv[f],
                                 tr.stages[s].name, sizes[z][0], sizes[z][1], p, ps->px_cell, min_px);
                    assert_false(L.image[p]);
                }
            }
        trace_free(&tr);
        lesson_free(&ls);
    }
    assert_true(with_numbers > 100);
    globfree(&g);
    // the rule itself: 2 decimals, else 1, else none
    int d, px;
    layout_fit_numbers(0.99f, false, 76, 76, 1.0f, &d, &px);
    assert_int_equal(d, 2);
    layout_fit_numbers(9.9f, false, 40, 40, 1.0f, &d, &px);
    assert_int_equal(d, 1);
    assert_true(px >= 13);
    layout_fit_numbers(0.99f, false, 40, 40, 1.0f, &d, &px); // 1 decimal would print 0.04 as "0.0"
    assert_int_equal(d, -1);
    layout_fit_numbers(0.99f, false, 30, 30, 1.0f, &d, &px);
    assert_int_equal(d, -1);
    layout_fit_numbers(1.0f, true, 40, 40, 1.0f, &d, &px); // the 0/1 mask: whole numbers
    assert_int_equal(d, 0);
}

// ALiBi's lesson (issue 22 item 5): where its tokens do not all fit over the columns,
// every column is labelled with its index (every other token left "a … a" without
// saying which key); the position bias has 2 decimals or none, never 1 (0.0, 0.2, 0.5,
// 0.8 for steps of 0.25); a later key's tooltip says why its bias is positive.
static void test_alibi_labels(void **state)
{
    (void)state;
    Target t;
    target_init(&t, 1280, 720);
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/alibi-linear-bias.json", &ls, &tr));
    View v;
    view_init(&v, &ls, LANG_EN);
    TextMeasure tm = {text_measure, fonts};
    v.measure = &tm;
    const int sizes[][2] = {{800, 600}, {1024, 768}, {1280, 720}, {1920, 1080}};
    for (int z = 0; z < 4; z++)
        for (v.stage = 0; v.stage < tr.n; v.stage++) {
            Layout L;
            layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
            for (int p = 0; p < L.n_panels; p++)
                if (L.spec[p].two_decimals) assert_true(L.spec[p].decimals == -1 || L.spec[p].decimals == 2);
            if (strcmp(tr.stages[v.stage].name, "scores") || z != 2) continue;
            int p = 2; // the position bias: its column labels
            assert_true(L.spec[p].two_decimals);
            render_frame_record(&t.c, &L, &tr, &v, NULL);
            const DrawList *dl = &t.dl;
            int indices = 0, tokens = 0;
            Rect q = L.panel[p];
            for (size_t k = 0; k < dl->n; k++) {
                const DrawCmd *c = &dl->cmd[k];
                if (c->op != DRAW_TEXT || c->r.y >= q.y || c->r.y < q.y - L.col_label_h - 4 || c->r.x < q.x - 20 ||
                    c->r.x > q.x + q.w + 20)
                    continue;
                const char *s = draw_list_str(dl, c);
                char ib[16];
                bool idx = false;
                for (int j = 0; j < L.spec[p].cols; j++) idx |= (snprintf(ib, sizeof ib, "%d", j), !strcmp(s, ib));
                if (idx) indices++;
                else tokens++;
            }
            paint_flush(&t.c);
            // (tokens: each with its index under it, issue 35)
            if (!((indices == L.spec[p].cols && tokens == 0) || (tokens == L.spec[p].cols && indices == L.spec[p].cols)))
                fail_msg("position bias column labels: %d indices, %d tokens of %d columns", indices, tokens, L.spec[p].cols);
        }
    // the tooltip of a later key (row 1, key 4, head 0)
    v.stage = trace_find(&tr, "position_bias");
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    char tip[1024];
    explain_cell(&tr, &v, &L, L.result_panel, 1, 4, tip, sizeof tip);
    assert_non_null(strstr(tip, "j > i"));
    assert_non_null(strstr(tip, "= −0.25·(1 − 4)"));
    assert_true(tip_adds_up(tip, NULL, 0));
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// Whether the recorded frame has text s inside r.
static bool text_in(const DrawList *dl, const char *s, Rect r)
{
    for (size_t k = 0; k < dl->n; k++) {
        const DrawCmd *c = &dl->cmd[k];
        if (c->op != DRAW_TEXT || strcmp(draw_list_str(dl, c), s) != 0) continue;
        if (c->r.x >= r.x && c->r.x < r.x + r.w && c->r.y >= r.y && c->r.y < r.y + r.h) return true;
    }
    return false;
}

// Every row and column of a token axis labelled with its token, and its index (issue 35,
// item 7: the tiny LM's 19 px rows were labelled every other one, its vocabulary axis read
// 0, 2, …, 22 instead of the characters), so "row 8, key 3" in a narration is found on
// screen: the token lessons at 1280x720 and 1920x1080, every settled stage, every panel
// drawn as cells (rows at least 16 px: 12 px text and its line). A column's index where
// the columns are at least 24 px wide (a vocabulary of 23 in 17 px columns: every other).
static void test_token_labels_every_row(void **state)
{
    (void)state;
    static const char *lessons[] = {"lessons/tiny-lm-fortunes.json", "lessons/sentence-the-cat.json",
                                    "lessons/induction-heads.json", "lessons/cross-attention-padding.json"};
    const int sizes[][2] = {{1280, 720}, {1920, 1080}};
    Target t;
    target_init(&t, 1920, 1080);
    int rows = 0, cols = 0;
    for (size_t f = 0; f < sizeof lessons / sizeof *lessons; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(lessons[f], &ls, &tr));
        View v;
        view_init(&v, &ls, LANG_EN);
        TextMeasure tm = {text_measure, fonts};
        v.measure = &tm;
        for (int z = 0; z < 2; z++)
            for (v.stage = 0; v.stage < tr.n; v.stage++) {
                Layout L;
                layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
                render_frame_record(&t.c, &L, &tr, &v, NULL);
                const DrawList *dl = &t.dl;
                for (int p = 0; p < L.n_panels; p++) {
                    const PanelSpec *ps = &L.spec[p];
                    if (L.image[p]) continue;
                    Rect q = L.panel[p];
                    char b[24], ib[16];
                    if (L.row_labels[p] && layout_axis_has_tokens(&v, ps->row_axis) && L.cell_hq[p] >= 16 * LAYOUT_Q)
                        for (int i = 0; i < ps->rows; i++, rows++) {
                            int y0 = layout_row_y(&L, p, i), y1 = layout_row_y(&L, p, i + 1);
                            Rect band = {q.x - L.label_w[p], y0 - 2, L.label_w[p], y1 - y0 + 2};
                            const char *tok = panel_axis_label(&v, ps->row_axis, i, b, sizeof b);
                            snprintf(ib, sizeof ib, "%d", i);
                            if (!text_in(dl, tok, band) || !text_in(dl, ib, band))
                                fail_msg("%s at %dx%d stage %s panel %s: row %d (\"%s\" %s) not labelled with both",
                                         lessons[f], sizes[z][0], sizes[z][1], tr.stages[v.stage].name, ps->title, i,
                                         tok, ib);
                        }
                    if (layout_axis_has_tokens(&v, ps->col_axis) && L.cell_wq[p] >= 16 * LAYOUT_Q && !ps->stacked)
                        for (int j = 0; j < ps->cols; j++, cols++) {
                            int x0 = layout_col_x(&L, p, j), x1 = layout_col_x(&L, p, j + 1);
                            Rect band = {x0 - 12, q.y - L.col_label_h - 2, x1 - x0 + 24, L.col_label_h + 2};
                            const char *tok = panel_axis_label(&v, ps->col_axis, j, b, sizeof b);
                            snprintf(ib, sizeof ib, "%d", j);
                            if (!text_in(dl, tok, band) || (x1 - x0 >= 24 && !text_in(dl, ib, band)))
                                fail_msg("%s at %dx%d stage %s panel %s: column %d (\"%s\" %s) not labelled",
                                         lessons[f], sizes[z][0], sizes[z][1], tr.stages[v.stage].name, ps->title, j,
                                         tok, ib);
                        }
                }
                paint_flush(&t.c);
            }
        trace_free(&tr);
        lesson_free(&ls);
    }
    target_free(&t);
    print_message("%d token rows, %d token columns labelled\n", rows, cols);
    assert_true(rows > 1000 && cols > 1000);
}

// A token axis's row indices never overlap (issue 39 item 2): at 3840x2160 a subword
// model's 18 rows × 64 columns (d_model 64) are drawn as cells under 20 px tall, the
// tokens' labels shrink to fit them but each row's index was drawn at the UI's index size
// (36 px): "2 4 6 … 17" piled on top of each other. Every settled stage of such a lesson
// (tests/big/wide-lm-18.json) and the tiny LM at 1280x720 and 3840x2160: in a panel's
// label column, the indices are no larger than the tokens beside them and each is at least
// its own height below the one above.
static void test_token_indices_apart(void **state)
{
    (void)state;
    static const char *lessons[] = {"tests/big/wide-lm-18.json", "lessons/tiny-lm-fortunes.json"};
    const int sizes[][2] = {{1280, 720}, {3840, 2160}};
    int checked = 0;
    for (int z = 0; z < 2; z++) {
        Target t;
        target_init(&t, sizes[z][0], sizes[z][1]);
        for (size_t f = 0; f < sizeof lessons / sizeof *lessons; f++) {
            Lesson ls;
            Trace tr;
            assert_true(load(lessons[f], &ls, &tr));
            View v;
            view_init(&v, &ls, LANG_EN);
            TextMeasure tm = {text_measure, fonts};
            v.measure = &tm;
            for (v.stage = 0; v.stage < tr.n; v.stage++) {
                Layout L;
                layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
                render_frame_record(&t.c, &L, &tr, &v, NULL);
                const DrawList *dl = &t.dl;
                for (int p = 0; p < L.n_panels; p++) {
                    const PanelSpec *ps = &L.spec[p];
                    if (L.image[p] || !L.row_labels[p] || !layout_axis_has_tokens(&v, ps->row_axis)) continue;
                    Rect q = L.panel[p];
                    int tok_px = 0, last_y = -100000, last_px = 0;
                    for (size_t k = 0; k < dl->n; k++) { // the tokens' size in the label column
                        const DrawCmd *c = &dl->cmd[k];
                        if (c->op != DRAW_TEXT || c->r.x < q.x - L.label_w[p] || c->r.x >= q.x || c->r.y < q.y - 40 ||
                            c->r.y > q.y + q.h + 40)
                            continue;
                        const char *s = draw_list_str(dl, c);
                        if (strspn(s, "0123456789") != strlen(s) && c->px > tok_px) tok_px = c->px;
                    }
                    for (size_t k = 0; k < dl->n; k++) { // the indices: in order, top to bottom
                        const DrawCmd *c = &dl->cmd[k];
                        if (c->op != DRAW_TEXT || c->r.x < q.x - L.label_w[p] || c->r.x >= q.x || c->r.y < q.y - 40 ||
                            c->r.y > q.y + q.h + 40)
                            continue;
                        const char *s = draw_list_str(dl, c);
                        if (!*s || strspn(s, "0123456789") != strlen(s)) continue;
                        checked++;
                        if (tok_px && c->px > tok_px)
                            fail_msg("%s at %dx%d stage %s panel %s: index %s at %d px beside %d px tokens", lessons[f],
                                     sizes[z][0], sizes[z][1], tr.stages[v.stage].name, ps->title, s, c->px, tok_px);
                        if (c->r.y - last_y < last_px)
                            fail_msg("%s at %dx%d stage %s panel %s: index %s %d px below the one above (%d px text)",
                                     lessons[f], sizes[z][0], sizes[z][1], tr.stages[v.stage].name, ps->title, s,
                                     c->r.y - last_y, last_px);
                        last_y = c->r.y, last_px = c->px;
                    }
                }
                paint_flush(&t.c);
            }
            trace_free(&tr);
            lesson_free(&ls);
        }
        target_free(&t);
    }
    print_message("%d row indices checked\n", checked);
    assert_true(checked > 1000);
}

// Small screens (issue 22 item 7): no text under 12 px at 800×600 or 1024×768, on any
// settled frame of any shipped lesson, both languages (the narration was ~8 px, the strip ~9).
static void test_small_screens(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    glob("lessons/*.json", 0, NULL, &g);
    const int sizes[][2] = {{800, 600}, {1024, 768}, {1280, 720}};
    int frames = 0, bad = 0;
    for (int z = 0; z < 3; z++) {
        Target t;
        target_init(&t, sizes[z][0], sizes[z][1]);
        for (size_t f = 0; f < g.gl_pathc; f++) {
            Lesson ls;
            Trace tr;
            assert_true(load(g.gl_pathv[f], &ls, &tr));
            for (int lang = 0; lang < LANG_COUNT; lang++) {
                View v;
                view_init(&v, &ls, (Lang)lang);
                TextMeasure tm = {text_measure, fonts};
                v.measure = &tm;
                for (v.stage = 0; v.stage < tr.n; v.stage++) {
                    Layout L;
                    layout_compute(&L, &tr, &v, t.w, t.h);
                    render_frame_record(&t.c, &L, &tr, &v, NULL);
                    for (size_t k = 0; k < t.dl.n; k++) {
                        const DrawCmd *c = &t.dl.cmd[k];
                        if (c->op == DRAW_TEXT && c->px < 12 && bad++ < 40)
                            print_message("%s %s stage %s at %dx%d: \"%s\" at %d px\n", g.gl_pathv[f],
                                          lang ? "zh" : "en", tr.stages[v.stage].name, t.w, t.h,
                                          draw_list_str(&t.dl, c), c->px);
                        // the header's formula (and its note) is never cut at the right edge
                        const char *str = c->op == DRAW_TEXT ? draw_list_str(&t.dl, c) : "";
                        if (c->op == DRAW_TEXT && L.formula[0] && !strncmp(str, L.formula, strlen(L.formula)) &&
                            c->r.y >= L.header.y && c->r.y < L.header.y + L.header.h &&
                            c->r.x + text_measure(fonts, false, c->px, str) > L.header.x + L.header.w && bad++ < 40)
                            print_message("%s stage %s at %dx%d: the formula \"%s\" is cut\n", g.gl_pathv[f],
                                          tr.stages[v.stage].name, t.w, t.h, str);
                    }
                    paint_flush(&t.c);
                    frames++;
                }
            }
            trace_free(&tr);
            lesson_free(&ls);
        }
        target_free(&t);
    }
    globfree(&g);
    assert_true(frames > 100);
    assert_int_equal(bad, 0);
}

// The legend's colour ramp keeps at least 30 % of the box under a long name ("scores,
// masked scores" left it about 50 px; issue 22 item 6).
static void test_legend_ramp(void **state)
{
    (void)state;
    Target t;
    target_init(&t, 1280, 720);
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/cross-attention-padding.json", &ls, &tr));
    View v;
    view_init(&v, &ls, LANG_EN);
    TextMeasure tm = {text_measure, fonts};
    v.measure = &tm;
    v.stage = trace_find(&tr, "masked_scores");
    Layout L;
    layout_compute(&L, &tr, &v, t.w, t.h);
    render_frame_record(&t.c, &L, &tr, &v, NULL);
    // the ramp of the first row: the run of fills of one height inside the legend's first row
    Rect g = L.legend;
    int row_h = (int)((float)L.px_small * 1.45f), bar_h = row_h * 6 / 10, y0 = -1, w = 0;
    for (size_t k = 0; k < t.dl.n; k++) {
        const DrawCmd *c = &t.dl.cmd[k];
        if (c->op != DRAW_FILL || c->r.h != bar_h || c->r.x < g.x || c->r.x + c->r.w > g.x + g.w || c->r.y < g.y)
            continue;
        if (y0 < 0) y0 = c->r.y;
        if (c->r.y == y0) w += c->r.w;
    }
    paint_flush(&t.c);
    if (w * 100 < g.w * 29) fail_msg("the ramp is %d px of a %d px legend", w, g.w);
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// The row-label column fits the longest token as drawn ("black" was cut to "olack").
static void test_labels_fit(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    int checked = 0;
    Target t;
    target_init(&t, 1280, 720);
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        View v;
        view_init(&v, &ls, LANG_EN);
        TextMeasure tm = {text_measure, fonts};
        v.measure = f % 2 ? &tm : NULL; // the fonts' own widths (as the window and export), or the estimate
        for (int s = 0; s < tr.n; s++) {
            v.stage = s;
            Layout L;
            layout_compute(&L, &tr, &v, 1280, 720);
            for (int p = 0; p < L.n_panels; p++) {
                if (!L.row_labels[p]) continue;
                const PanelSpec *ps = &L.spec[p];
                for (int i = 0; i < ps->rows; i++) {
                    char b[24];
                    const char *lab = panel_axis_label(&v, ps->row_axis, i, b, sizeof b);
                    int tw, th;
                    text_size(fonts, t.r, FONT_SANS, L.px_small, lab, &tw, &th);
                    if (tw > layout_text_width_est(lab, L.px_small))
                        fail_msg("\"%s\": %d px drawn, estimated %d", lab, tw, layout_text_width_est(lab, L.px_small));
                    if (tw + (int)lrintf(6 * L.s) + 3 > L.label_w[p] && L.label_w[p] < (int)(170 * L.s))
                        fail_msg("%s stage %s: label \"%s\" (%d px) does not fit its column (%d px)", g.gl_pathv[f],
                                 tr.stages[s].name, lab, tw, L.label_w[p]);
                    checked++;
                }
            }
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    target_free(&t);
    assert_true(checked > 1000);
    globfree(&g);
}

// A squeezed vocabulary axis's labels (V = 768: logits, probs, W_Uᵀ) at the sizes a class
// projects: each one whole inside the window and the clip it is drawn in, none over another
// (a neighbour panel's included), and the first and last tokens named over every such panel.
// At 1280×720 the logits panel's last label, "␣something", ran off the window, and W_Uᵀ's
// over the logits' "<0x00>".
static void test_vocab_labels_inside(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1280, 720}, {1920, 1080}, {3840, 2160}};
    Lesson ls;
    Trace tr;
    assert_true(load("tests/big/subword-lm-768.json", &ls, &tr));
    assert_int_equal(ls.n_vocab, 768);
    const char *first = lesson_vocab_label(&ls, 0), *last = lesson_vocab_label(&ls, 767);
    int squeezed_panels = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const int W = sizes[z][0], H = sizes[z][1];
        Target t;
        target_init(&t, W, H);
        TextMeasure tm = {text_measure, fonts};
        static const char *stages[] = {"logits", "probs"};
        for (int k = 0; k < 2; k++) {
            View v;
            Overlays ov = {0};
            view_init(&v, &ls, LANG_EN);
            v.measure = &tm, v.anim = 1.0f;
            v.stage = trace_find(&tr, stages[k]);
            assert_true(v.stage >= 0);
            Layout L;
            layout_compute(&L, &tr, &v, W, H);
            render_frame_record(&t.c, &L, &tr, &v, &ov);
            Rect lab[64];
            int n = 0;
            bool clip_on = false;
            Rect clip = {0};
            for (int p = 0; p < L.n_panels; p++) {
                if (!layout_squeezed(&L, p, false)) continue;
                squeezed_panels++;
                const Rect q = L.panel[p];
                bool saw_first = false, saw_last = false;
                for (size_t i = 0; i < t.dl.n; i++) {
                    const DrawCmd *c = &t.dl.cmd[i];
                    if (c->op == DRAW_CLIP) clip_on = !c->none, clip = c->r;
                    if (c->op != DRAW_TEXT) continue;
                    int tw, th;
                    const char *str = draw_list_str(&t.dl, c);
                    text_size(fonts, t.r, c->face, c->px, str, &tw, &th);
                    const Rect r = {c->r.x, c->r.y, tw, th};
                    // the labels' band over this panel
                    if (r.y + th / 2 < q.y - L.col_label_h || r.y + th / 2 >= q.y) continue;
                    if (r.x + r.w <= q.x - 200 || r.x >= q.x + q.w + 200) continue;
                    char what[200];
                    snprintf(what, sizeof what, "%dx%d stage %s panel %d: label \"%s\" at x %d..%d", W, H, stages[k], p,
                             str, r.x, r.x + r.w);
                    if (r.x < 0 || r.x + r.w > W) fail_msg("%s: off the window", what);
                    if (clip_on && (r.x < clip.x || r.x + r.w > clip.x + clip.w)) fail_msg("%s: cut by its clip", what);
                    saw_first |= strcmp(str, first) == 0 && r.x <= q.x + q.w / 4;
                    saw_last |= strcmp(str, last) == 0 && r.x + r.w >= q.x + q.w * 3 / 4;
                    bool same = false;
                    for (int o = 0; o < n; o++) {
                        same |= lab[o].x == r.x && lab[o].y == r.y;
                        if (!same && rect_overlap(lab[o], r)) fail_msg("%s: over another label", what);
                    }
                    if (!same && n < 64) lab[n++] = r;
                }
                if (!saw_first || !saw_last)
                    fail_msg("%dx%d stage %s panel %d: \"%s\" %s, \"%s\" %s over it", W, H, stages[k], p, first,
                             saw_first ? "named" : "missing", last, saw_last ? "named" : "missing");
            }
            paint_flush(&t.c);
        }
        target_free(&t);
    }
    assert_true(squeezed_panels >= 3 * 4); // W_Uᵀ and logits, logits and probs, at each size
    trace_free(&tr);
    lesson_free(&ls);
}

// ---- large lessons: image mode, hover, zoom --------------------------------------------

#define BIG_LESSON "tests/big/long-256.json"

// Every visible cell of an image-mode panel shows its exact colour at its centre pixel.
static int check_image_cells(const Target *t, const Layout *L, const char *what)
{
    int checked = 0;
    for (int p = 0; p < L->n_panels; p++) {
        if (!L->image[p]) continue;
        const PanelSpec *ps = &L->spec[p];
        int r0, r1, c0, c1;
        layout_visible(L, p, &r0, &r1, &c0, &c1);
        for (int i = r0; i <= r1; i++)
            for (int j = c0; j <= c1; j++) {
                Rect c;
                if (!layout_cell_rect(L, p, i, j, &c)) continue; // narrower than a pixel: subsampled
                int x = c.x + c.w / 2, y = c.y + c.h / 2;
                if (!rect_contains(L->panel[p], x, y)) continue;
                Rgb want = render_cell_color(ps, i, j), got = pixel(t, x, y);
                if (!near(got, want, 0))
                    fail_msg("%s: image panel %d cell (%d,%d) at %d,%d: pixel %d,%d,%d, want %d,%d,%d", what, p, i, j,
                             x, y, got.r, got.g, got.b, want.r, want.g, want.b);
                // and the hit-test names that same cell
                int hp, hr, hc;
                assert_true(layout_hit_cell(L, x, y, &hp, &hr, &hc));
                assert_int_equal(hp, p);
                assert_int_equal(hr, i);
                assert_int_equal(hc, j);
                checked++;
            }
    }
    return checked;
}

// The Σ column of a softmax shows its numbers wherever the result does, in every
// palette, projector mode on and off, and at the projector sizes; its text contrasts
// with its cell (issue 23: in the high-contrast palette at 1280x720 in projector
// mode it was solid black, its numbers dropped). Checked on the pixels: in each Σ
// cell, text pixels of the colour that contrasts with the cell's fill.
static void test_row_sums_readable(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1280, 720}, {1024, 768}, {1920, 1080}};
    glob_t g = lesson_files();
    int checked = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        bool classic = strstr(g.gl_pathv[f], "arange-2x4x4") != NULL;
        for (int st = 0; st < tr.n; st++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
                for (int proj = 0; proj < 2; proj++)
                    for (int pal = 0; pal < PALETTE_COUNT; pal++) {
                        View v;
                        view_init(&v, &ls, LANG_EN);
                        v.stage = st, v.projector = proj, v.palette = (Palette)pal;
                        TextMeasure m = {text_measure, fonts};
                        v.measure = &m;
                        int parts = proj ? layout_projector_parts(&tr, &v, sizes[z][0], sizes[z][1]) : 1;
                        v.part = parts - 1; // the result
                        Layout L;
                        layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
                        int p = L.result_panel;
                        if (p < 0 || !L.spec[p].row_sums || L.sum_w[p] <= 0) continue;
                        if (L.spec[p].decimals >= 0 && !L.image[p] && L.sum_decimals[p] < 0)
                            fail_msg("%s stage %s at %dx%d%s: the result has numbers, its Σ column none", g.gl_pathv[f],
                                     tr.stages[st].name, sizes[z][0], sizes[z][1], proj ? " (projector)" : "");
                        if (!classic || L.sum_decimals[p] < 0) continue;
                        // the pixels: the classic lesson only (a frame each)
                        Target t;
                        target_init(&t, sizes[z][0], sizes[z][1]);
                        render_frame(&t.c, &tr, &v, NULL);
                        SDL_RenderFlush(t.r);
                        int x0 = L.panel[p].x + L.panel[p].w + (int)(6 * L.s);
                        for (int i = 0; i < L.spec[p].rows; i++) {
                            int y0 = layout_row_y(&L, p, i), y1 = layout_row_y(&L, p, i + 1);
                            int gap = render_cell_gap(L.sum_w[p] < y1 - y0 ? L.sum_w[p] : y1 - y0) + 1;
                            Rgb fill = pixel(&t, x0 + gap, y0 + gap), ink = fill;
                            float best = 1.0f;
                            for (int y = y0 + gap; y < y1 - gap; y++)
                                for (int x = x0 + gap; x < x0 + L.sum_w[p] - gap; x++) {
                                    Rgb c = pixel(&t, x, y);
                                    float k = contrast(c, fill);
                                    if (k > best) best = k, ink = c;
                                }
                            if (best < 4.5f)
                                fail_msg("%s at %dx%d%s, palette %d: Σ row %d: fill (%d,%d,%d), its text at most %.2f:1 "
                                         "(ink %d,%d,%d)", tr.stages[st].name, sizes[z][0], sizes[z][1],
                                         proj ? " (projector)" : "", pal, i, fill.r, fill.g, fill.b, (double)best,
                                         ink.r, ink.g, ink.b);
                            checked++;
                        }
                        target_free(&t);
                    }
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
    print_message("Σ cells with readable numbers: %d\n", checked);
    assert_true(checked >= 2 * 3 * 3 * 4);
}

// The presenter window's small copy of the audience's frame is that frame scaled down
// (issue 23: laid out at its own small size it rounded −0.08, 0.40, 1.38 to "0 0 1"
// and left W and b without numbers): its pixels are the audience frame's drawn at the
// audience's size and scaled into the copy's rectangle, at the sizes projectors have.
static void test_presenter_copy(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1280, 720}, {1024, 768}, {1920, 1080}, {3840, 2160}};
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        int aw = sizes[z][0], ah = sizes[z][1], cw, ch;
        presenter_copy_size(aw, ah, &cw, &ch);
        assert_true(cw == aw && ch == ah); // the audience's own size (up to 4096 px wide)
        Target t;
        target_init(&t, 1280, 720);
        char err[600];
        Presenter *pres = presenter_create_offscreen(t.r, NULL, LANG_EN, err, sizeof err);
        assert_non_null(pres);
        TextMeasure m = {text_measure, fonts};
        View v;
        view_init(&v, &ls, LANG_EN);
        v.measure = &m;
        Overlays ov = {0};
        Pin pin = {0, 1, 1, 1, -1.0f, -1.0f}; // the attention weight (1, 1)
        // three frames in a row: the copy follows the stage and a pin added (never stale),
        // and a frame the same as the one before
        Uint32 *prev = NULL;
        size_t prev_n = 0;
        for (int step = 0; step < 3; step++) {
        v.stage = trace_find(&tr, step == 0 ? "q_proj" : "attn");
        pin.stage = v.stage;
        if (step == 2) ov.pins = &pin, ov.n_pins = 1;
        PresenterFrame f = {&tr, &v, &ov, aw, ah, false, false, 0, "t"};
        presenter_draw(pres, &f);
        SDL_RenderFlush(t.r);
        int x, y, w, h;
        assert_true(presenter_copy_rect(pres, &x, &y, &w, &h));
        size_t n = (size_t)w * (size_t)h;
        Uint32 *got = malloc(n * 4), *want = malloc(n * 4);
        assert_true(got && want);
        SDL_Rect box = {x, y, w, h};
        assert_int_equal(SDL_RenderReadPixels(t.r, &box, SDL_PIXELFORMAT_ARGB8888, got, w * 4), 0);
        // the audience's frame at the copy's size, scaled the same way
        SDL_Texture *full = SDL_CreateTexture(t.r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_TARGET, cw, ch);
        assert_non_null(full);
        SDL_SetTextureScaleMode(full, SDL_ScaleModeLinear);
        HeatmapCache *hc = heatmap_cache_create();
        assert_true(SDL_SetRenderTarget(t.r, full) == 0);
        Canvas c = {t.r, fonts, hc, NULL, &t.dl};
        render_frame(&c, &tr, &v, &ov);
        SDL_SetRenderTarget(t.r, NULL);
        SDL_RenderCopy(t.r, full, NULL, &box);
        SDL_RenderFlush(t.r);
        assert_int_equal(SDL_RenderReadPixels(t.r, &box, SDL_PIXELFORMAT_ARGB8888, want, w * 4), 0);
        long differ = 0;
        for (size_t i = 0; i < n; i++) {
            int d = 0;
            for (int sh = 0; sh < 24; sh += 8) d += abs((int)((got[i] >> sh) & 255) - (int)((want[i] >> sh) & 255));
            differ += d > 12;
        }
        print_message("presenter copy of a %dx%d frame %d (drawn at %dx%d, shown %dx%d): %ld of %zu pixels differ\n",
                      aw, ah, step, cw, ch, w, h, differ, n);
        assert_true(differ * 200 < (long)n); // under 0.5 %
        heatmap_cache_flush(hc);
        heatmap_cache_destroy(hc);
        SDL_DestroyTexture(full);
        if (step == 2) // the pin shows in the copy too
            assert_true(prev_n == n && memcmp(prev, got, n * 4) != 0);
        free(prev);
        prev = got, prev_n = n;
        free(want);
        }
        free(prev);
        presenter_destroy(pres);
        target_free(&t);
    }
    trace_free(&tr);
    lesson_free(&ls);
}

// One display: the audience and presenter windows side by side, never overlapping,
// inside the screen (issue 23: both opened 1280x720 at the same place); from 1280 px
// wide the audience window keeps 800 px or more and its height (issue 35: 640x360 on
// 1280x720, the presenter window 8 px off the screen), the presenter's at least 440.
static void test_presenter_place(void **state)
{
    (void)state;
    static const int screens[][2] = {{3840, 2160}, {2560, 1440}, {1920, 1080}, {1366, 768}, {1280, 800},
                                     {1280, 720}, {1024, 768}};
    static const int wins[][2] = {{1280, 720}, {1024, 768}, {1920, 1080}, {800, 600}};
    for (size_t i = 0; i < sizeof screens / sizeof screens[0]; i++)
        for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++) {
            int sw = screens[i][0], sh = screens[i][1], aw = wins[k][0], ah = wins[k][1];
            PresenterPlace pl = presenter_place(sw, sh, aw, ah, aw, ah);
            if (pl.ax + pl.aw > pl.px || pl.ax < 0 || pl.px + pl.pw > sw || pl.ay < 0 || pl.py < 0 ||
                pl.ay + pl.ah > sh || pl.py + pl.ph > sh || pl.pw < 320 || pl.aw < 320 ||
                (sw >= 1280 && (pl.pw < PRESENTER_MIN_W || pl.aw < PRESENTER_AUDIENCE_MIN_W)))
                fail_msg("screen %dx%d, windows %dx%d: audience %d,%d %dx%d, presenter %d,%d %dx%d", sw, sh, aw, ah,
                         pl.ax, pl.ay, pl.aw, pl.ah, pl.px, pl.py, pl.pw, pl.ph);
            if (aw + 8 + PRESENTER_MIN_W <= sw) assert_true(pl.aw == aw && pl.ah == (ah < sh ? ah : sh)); // as it is
            if (ah <= sh) assert_int_equal(pl.ah, ah); // narrower, never lower
        }
}

static bool rects_meet(Rect a, Rect b)
{
    return a.w > 0 && a.h > 0 && b.w > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h &&
           b.y < a.y + a.h;
}

// The scrub bar (K) covers nothing a held transition is paused to explain: no panel,
// caption or Σ column, not the derivation strip under the panels (issue 23: at 1280x720
// it covered the softmax strip's Σ and ÷Σ lines, and attn·V's bottom row), not the
// narration or legend; it is inside the frame and its track has room. Every stage of
// every lesson at five sizes, projector mode on and off.
static void test_scrub_bar_clear(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1280, 720}, {1024, 768}, {800, 600}, {1920, 1080}, {3840, 2160}};
    glob_t g = lesson_files();
    int checked = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        assert_true(load(g.gl_pathv[f], &ls, &tr));
        View v;
        view_init(&v, &ls, LANG_EN);
        TextMeasure m = {text_measure, fonts};
        v.measure = &m;
        for (int st = 0; st < tr.n; st++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
                for (int proj = 0; proj < 2; proj++) {
                    v.stage = st, v.projector = proj, v.part = 0;
                    static Layout L;
                    layout_compute(&L, &tr, &v, sizes[z][0], sizes[z][1]);
                    Rect b, t;
                    overlay_scrub_rect(&L, &b, &t);
                    char where[300];
                    snprintf(where, sizeof where, "%s stage %s at %dx%d%s", g.gl_pathv[f], tr.stages[st].name,
                             sizes[z][0], sizes[z][1], proj ? " (projector)" : "");
                    if (b.x < 0 || b.y < 0 || b.x + b.w > L.w || b.y + b.h > L.h || t.w < 100 * L.s)
                        fail_msg("%s: the scrub bar %d,%d %dx%d (track %d px)", where, b.x, b.y, b.w, b.h, t.w);
                    Rect keep[4 * LAYOUT_MAX_PANELS + 3];
                    int n = 0;
                    keep[n++] = L.deriv, keep[n++] = L.narration, keep[n++] = L.legend;
                    for (int p = 0; p < L.n_panels; p++) {
                        keep[n++] = L.panel[p], keep[n++] = L.caption[p];
                        if (L.sum_w[p] > 0)
                            keep[n++] = (Rect){L.panel[p].x + L.panel[p].w, L.panel[p].y - L.col_label_h,
                                               L.sum_w[p] + (int)(8 * L.s), L.panel[p].h + L.col_label_h};
                        keep[n++] = (Rect){L.panel[p].x - L.label_w[p], L.panel[p].y - L.col_label_h,
                                           L.panel[p].w + L.label_w[p], L.col_label_h}; // column labels
                    }
                    for (int i = 0; i < n; i++)
                        if (rects_meet(b, keep[i]))
                            fail_msg("%s: the scrub bar %d,%d %dx%d covers %d,%d %dx%d (part %d of the frame)", where,
                                     b.x, b.y, b.w, b.h, keep[i].x, keep[i].y, keep[i].w, keep[i].h, i);
                    checked++;
                }
        trace_free(&tr);
        lesson_free(&ls);
    }
    globfree(&g);
    assert_true(checked > 1000);
}

// Head blocks flying in (concat) or out (split) never cover a head that has landed
// (issue 23: in the concat transition head 1's cells flew over concat's head-0
// columns): every frame of the two transitions of the classic lesson, the inside of
// each cell of a landed head exactly as in the settled frame.
static void test_heads_fly_under(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    Target t, ref;
    target_init(&t, 1280, 720);
    target_init(&ref, 1280, 720);
    TextMeasure m = {text_measure, fonts};
    const char *stages[] = {"concat", "q_heads"};
    int checked = 0;
    for (int k = 0; k < 2; k++) {
        View v;
        view_init(&v, &ls, LANG_EN);
        v.measure = &m;
        v.stage = trace_find(&tr, stages[k]);
        assert_true(v.stage >= 0);
        static Layout L;
        layout_compute(&L, &tr, &v, 1280, 720);
        render_frame(&ref.c, &tr, &v, NULL);
        SDL_RenderFlush(ref.r);
        for (int f = 1; f < PLAYBACK_SCRUB_FRAMES; f++) {
            v.anim = (float)f / PLAYBACK_SCRUB_FRAMES;
            render_frame(&t.c, &tr, &v, NULL);
            SDL_RenderFlush(t.r);
            float e = ease_in_out_cubic(v.anim);
            for (int p = 0; p < L.n_panels; p++) {
                const PanelSpec *ps = &L.spec[p];
                if (!ps->result) continue;
                int nb = ps->block_cols > 0 ? ps->cols / ps->block_cols : 1;
                for (int h = 0; h < nb; h++) {
                    // concat: block h of the result; split: the panel of head h (one block)
                    int head = ps->block_cols > 0 ? h : ps->head;
                    int n_heads = ps->block_cols > 0 ? nb : tr.n_heads;
                    if (ease_stagger(e, head, n_heads, 0.4f) < 1.0f) continue; // still flying
                    int c0 = ps->block_cols > 0 ? h * ps->block_cols : 0;
                    int c1 = ps->block_cols > 0 ? c0 + ps->block_cols : ps->cols;
                    for (int i = 0; i < ps->rows; i++)
                        for (int j = c0; j < c1; j++) {
                            Rect c;
                            if (!layout_cell_rect(&L, p, i, j, &c)) continue;
                            int g = render_cell_gap(c.w < c.h ? c.w : c.h) + 1;
                            for (int y = c.y + g; y < c.y + c.h - g; y += 3)
                                for (int x = c.x + g; x < c.x + c.w - g; x += 3)
                                    if (!near(pixel(&t, x, y), pixel(&ref, x, y), 0)) {
                                        fail_msg("%s frame %d/%d: head %d has landed, but its cell (%d,%d) of %s is "
                                                 "covered at %d,%d", stages[k], f, PLAYBACK_SCRUB_FRAMES, head, i, j,
                                                 ps->title, x, y);
                                    }
                            checked++;
                        }
                }
            }
        }
    }
    print_message("landed head cells checked: %d\n", checked);
    assert_true(checked > 100);
    target_free(&ref);
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// The text cache keeps a texture per colour a string is drawn in, with the
// colour in its pixels: a covered pixel is exactly that colour, two colours of
// one string are two textures, and measuring makes no texture (the first draw
// turns the measured entry into a texture). A fade still blends with alpha.
static void test_text_colours(void **state)
{
    (void)state;
    Target t;
    target_init(&t, 200, 100);
    const char *s = "\u2588\u2588"; // full blocks: pixels the glyph covers fully
    Rgb bg = {248, 248, 246}, a = {0, 90, 170}, b = {176, 40, 32};
    paint_clear(&t.c, bg);
    TextStats s0 = text_stats(fonts);
    int w = 0, h = 0;
    paint_text_size(&t.c, FONT_SANS, 40, s, &w, &h);
    assert_true(w > 20 && h > 20);
    TextStats s1 = text_stats(fonts);
    assert_int_equal(s1.misses, s0.misses + 1);
    paint_text(&t.c, FONT_SANS, 40, a, 255, 0, 0, ALIGN_LEFT, s);        // the measured entry gets its texture
    paint_text(&t.c, FONT_SANS, 40, b, 255, 100, 0, ALIGN_LEFT, s);      // a second colour: a second texture
    paint_text(&t.c, FONT_SANS, 40, a, 128, 0, 50, ALIGN_LEFT, s);       // faded: the first texture again
    assert_true(paint_flush(&t.c));
    paint_text_size(&t.c, FONT_SANS, 40, s, &w, &h);                      // any colour's entry has the size
    TextStats s2 = text_stats(fonts);
    assert_int_equal(s2.misses, s1.misses + 2);
    assert_int_equal(s2.evictions, s1.evictions);
    SDL_RenderFlush(t.r);
    int cx = w / 2, cy = h / 2;
    Rgb pa = pixel(&t, cx, cy), pb = pixel(&t, 100 + cx, cy), pf = pixel(&t, cx, 50 + cy);
    if (!near(pa, a, 0) || !near(pb, b, 0))
        fail_msg("text pixels (%d,%d,%d) and (%d,%d,%d), drawn in (%d,%d,%d) and (%d,%d,%d)", pa.r, pa.g, pa.b,
                 pb.r, pb.g, pb.b, a.r, a.g, a.b, b.r, b.g, b.b);
    Rgb half = {(uint8_t)((a.r + bg.r) / 2), (uint8_t)((a.g + bg.g) / 2), (uint8_t)((a.b + bg.b) / 2)};
    if (!near(pf, half, 2)) fail_msg("faded text pixel (%d,%d,%d), expected about (%d,%d,%d)", pf.r, pf.g, pf.b,
                                     half.r, half.g, half.b);
    check_guard(&t, "text colours");
    target_free(&t);
}

static void test_image_mode_pixels(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load(BIG_LESSON, &ls, &tr));
    assert_int_equal(tr.stages[trace_find(&tr, "attn")].t.shape[2], 256);
    Target a, b;
    target_init(&a, 1280, 720);
    target_init(&b, 1280, 720);
    size_t bytes = (size_t)a.bpitch * (size_t)(a.h + 2 * GUARD);
    HeatmapCache *hc = heatmap_cache_create();
    assert_non_null(hc);
    View v;
    Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
    view_init(&v, &ls, LANG_EN);
    int images = 0, checked = 0;
    for (int s = 0; s < tr.n; s++)
        for (int head = 0; head < 2; head++) {
            v.stage = s, v.head = head * (tr.n_heads - 1);
            Layout L;
            layout_compute(&L, &tr, &v, a.w, a.h);
            for (int p = 0; p < L.n_panels; p++) {
                images += L.image[p];
                // every row and column is there (nothing cut)
                assert_int_equal(L.spec[p].shown_rows, L.spec[p].rows);
                assert_int_equal(L.spec[p].shown_cols, L.spec[p].cols);
                // the viewport is covered: first and last cells are visible
                Rect c0, c1;
                assert_true(layout_cell_rect(&L, p, 0, 0, &c0));
                assert_true(layout_cell_rect(&L, p, L.spec[p].rows - 1, L.spec[p].cols - 1, &c1));
                assert_int_equal(c0.x, L.panel[p].x);
                assert_int_equal(c1.y + c1.h, L.panel[p].y + L.panel[p].h);
            }
            char what[200];
            snprintf(what, sizeof what, "%s stage %s h%d", BIG_LESSON, tr.stages[s].name, v.head);
            // without a cache (rectangles) and with one (textures): the same pixels
            Canvas cached = {b.r, fonts, hc, NULL, &b.dl};
            render_frame(&a.c, &tr, &v, &ov);
            check_guard(&a, what);
            checked += check_image_cells(&a, &L, what);
            check_cells(&a, &L, what);
            render_frame(&cached, &tr, &v, &ov);
            assert_memory_equal(a.buf, b.buf, bytes);
            // a settled frame again: the textures are reused, not refilled or reallocated
            HeatmapStats s0 = heatmap_cache_stats(hc);
            render_frame(&cached, &tr, &v, &ov);
            HeatmapStats s1 = heatmap_cache_stats(hc);
            assert_int_equal(s1.fills, s0.fills);
            assert_int_equal(s1.allocs, s0.allocs);
            int n_image = 0;
            for (int p = 0; p < L.n_panels; p++) n_image += L.image[p];
            assert_int_equal(s1.reuses - s0.reuses, n_image);
            assert_memory_equal(a.buf, b.buf, bytes);
            // mid-transition frames: both paths agree too
            v.anim = 0.5f;
            render_frame(&a.c, &tr, &v, &ov);
            render_frame(&cached, &tr, &v, &ov);
            assert_memory_equal(a.buf, b.buf, bytes);
            check_guard(&b, what);
            v.anim = 1.0f;
        }
    assert_true(images >= tr.n);   // every stage has at least one image panel
    assert_true(checked > 200000); // the 256×256 panels, cell by cell
    // textures are allocated when panels grow, not per frame
    assert_true(heatmap_cache_stats(hc).allocs <= 3 * LAYOUT_MAX_PANELS);
    heatmap_cache_flush(hc);
    target_free(&a);
    target_free(&b);
    heatmap_cache_destroy(hc);
    trace_free(&tr);
    lesson_free(&ls);
}

// Hovering any cell of a 256×256 image names that cell, and the tooltip shows the tensor's value.
static void test_image_mode_hover(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load(BIG_LESSON, &ls, &tr));
    View v;
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    v.head = 2;
    Layout L;
    layout_compute(&L, &tr, &v, 1280, 720);
    int p = L.result_panel;
    assert_true(L.image[p]);
    const Tensor *t = &tr.stages[v.stage].t; // (B, H, L, L)
    int n = t->shape[2];
    int hits = 0;
    for (int y = L.panel[p].y; y < L.panel[p].y + L.panel[p].h; y += 7)
        for (int x = L.panel[p].x; x < L.panel[p].x + L.panel[p].w; x += 5) {
            int hp, r, c;
            assert_true(layout_hit_cell(&L, x, y, &hp, &r, &c));
            assert_int_equal(hp, p);
            Rect q;
            assert_true(layout_cell_rect(&L, p, r, c, &q));
            assert_true(rect_contains(q, x, y));
            float want = t->data[((size_t)v.head * (size_t)n + (size_t)r) * (size_t)n + (size_t)c];
            assert_memory_equal(&want, &(float){panel_value(&L.spec[p], r, c)}, sizeof want);
            if (hits++ % 97 == 0) { // the tooltip prints it
                char tip[1024], num[32];
                explain_cell(&tr, &v, &L, p, r, c, tip, sizeof tip);
                tip_number(want, num, sizeof num);
                assert_non_null(strstr(tip, num));
            }
        }
    assert_true(hits > 3000);
    trace_free(&tr);
    lesson_free(&ls);
}

static void test_zoom_and_pan(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load(BIG_LESSON, &ls, &tr));
    View v;
    Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    Layout L0, L;
    layout_compute(&L0, &tr, &v, 1280, 720);
    int p = L0.result_panel, src = 0;
    assert_true(L0.image[p] && L0.image[src]);
    assert_false(L0.zoom_x[p] || L0.zoom_y[p]);
    // the wheel at a point: the cell under it stays under it, cells grow by the factor
    int mx = L0.panel[p].x + L0.panel[p].w / 3, my = L0.panel[p].y + L0.panel[p].h * 2 / 3;
    int p0, r0, c0;
    assert_true(layout_hit_cell(&L0, mx, my, &p0, &r0, &c0));
    assert_true(layout_zoom_at(&v, &L0, mx, my, 4.0f));
    assert_float_equal(v.zoom, 4.0f, 1e-6);
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.zoom_x[p] && L.zoom_y[p]);
    assert_true(L.zoom_x[src] && L.zoom_y[src]); // masked scores: same rows and columns, follows
    assert_int_equal(L.cell_wq[p], (int)((float)L0.fit_wq * 4.0f));
    assert_int_equal(L.cell_hq[p], (int)((float)L0.fit_hq * 4.0f));
    assert_true(L.panel[p].x == L0.panel[p].x && L.panel[p].w == L0.panel[p].w); // the viewport stays
    int p1, r1, c1;
    assert_true(layout_hit_cell(&L, mx, my, &p1, &r1, &c1));
    assert_int_equal(p1, p);
    assert_true(abs(r1 - r0) <= 1 && abs(c1 - c0) <= 1);
    // zoomed cells tile: neighbours abut, the visible range covers the viewport
    int vr0, vr1, vc0, vc1;
    layout_visible(&L, p, &vr0, &vr1, &vc0, &vc1);
    assert_true(vr1 - vr0 + 1 < 256 / 3 && vc1 - vc0 + 1 < 256 / 3);
    for (int i = vr0; i < vr1; i++) {
        Rect a, b;
        assert_true(layout_cell_rect(&L, p, i, vc0, &a));
        assert_true(layout_cell_rect(&L, p, i + 1, vc0, &b));
        assert_int_equal(a.y + a.h, b.y);
    }
    Rect first, last;
    assert_true(layout_cell_rect(&L, p, vr0, vc0, &first));
    assert_true(layout_cell_rect(&L, p, vr1, vc1, &last));
    assert_true(first.x <= L.panel[p].x && first.y <= L.panel[p].y);
    assert_true(last.x + last.w >= L.panel[p].x + L.panel[p].w && last.y + last.h >= L.panel[p].y + L.panel[p].h);
    assert_false(layout_cell_rect(&L, p, 0, 255, &first) && layout_cell_rect(&L, p, 255, 0, &last));
    // pixels of zoomed images are exact too, and they agree with and without a cache
    Target t;
    target_init(&t, 1280, 720);
    render_frame(&t.c, &tr, &v, &ov);
    assert_true(check_image_cells(&t, &L, "zoom 4") > 1000);
    check_guard(&t, "zoom 4");
    // zoom far enough and cells become cells with numbers (never below 13 px)
    for (int k = 0; k < 10; k++) layout_zoom_at(&v, &L, mx, my, 2.0f), layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(v.zoom <= layout_max_zoom(&L, p) + 1e-3f);
    assert_false(L.image[p]);
    assert_true(L.spec[p].decimals >= 0);
    assert_true(L.spec[p].px_cell >= LAYOUT_MIN_NUMBER_PX);
    v.show_values = true;
    render_frame(&t.c, &tr, &v, &ov);
    check_cells(&t, &L, "zoomed in");
    check_guard(&t, "zoomed in");
    // pan: dragging right shows columns further left; clamped at the edges
    int off = L.off_xq[p];
    assert_true(layout_pan(&v, &L, 40, 0));
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.off_xq[p] < off);
    assert_int_equal(L.off_xq[src], L.off_xq[p]);
    layout_pan(&v, &L, 1000000, 1000000);
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_int_equal(L.off_xq[p], 0);
    assert_int_equal(L.off_yq[p], 0);
    assert_false(layout_pan(&v, &L, 10, 10)); // nothing further
    layout_pan(&v, &L, -10000000, -10000000);
    layout_compute(&L, &tr, &v, 1280, 720);
    Rect br;
    assert_true(layout_cell_rect(&L, p, 255, 255, &br));
    assert_int_equal(br.x + br.w, L.panel[p].x + L.panel[p].w);
    assert_int_equal(br.y + br.h, L.panel[p].y + L.panel[p].h);
    // zooming out all the way is the whole tensor again; so is view_reset_zoom
    layout_zoom_at(&v, &L, mx, my, 1e-6f);
    assert_float_equal(v.zoom, 1.0f, 1e-6);
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_memory_equal(L.panel, L0.panel, sizeof L.panel);
    assert_int_equal(L.cell_wq[p], L0.cell_wq[p]);
    assert_int_equal(L.off_xq[p], 0);
    // scores: zooming the result follows in Q's rows and Kᵀ's columns only
    view_reset_zoom(&v);
    v.stage = trace_find(&tr, "scores");
    layout_compute(&L, &tr, &v, 1280, 720);
    int rp = L.result_panel;
    layout_zoom_at(&v, &L, L.panel[rp].x + 5, L.panel[rp].y + 5, 3.0f);
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.n_panels == 3);
    assert_true(L.zoom_y[0] && !L.zoom_x[0]); // Q (256×16): its rows
    assert_true(!L.zoom_y[1] && L.zoom_x[1]); // Kᵀ (16×256): its columns
    assert_true(L.zoom_x[rp] && L.zoom_y[rp]);
    render_frame(&t.c, &tr, &v, &ov);
    check_cells(&t, &L, "scores zoomed");
    check_image_cells(&t, &L, "scores zoomed");
    check_guard(&t, "scores zoomed");
    // small lessons zoom a little (to about 100 px cells) and stay exact
    trace_free(&tr);
    lesson_free(&ls);
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    view_init(&v, &ls, LANG_EN);
    v.stage = trace_find(&tr, "attn");
    layout_compute(&L, &tr, &v, 1280, 720);
    rp = L.result_panel;
    layout_zoom_at(&v, &L, L.panel[rp].x + 3, L.panel[rp].y + 3, 10.0f);
    layout_compute(&L, &tr, &v, 1280, 720);
    assert_true(L.cell[rp] <= 101 && L.cell[rp] > L0.cell[rp]);
    render_frame(&t.c, &tr, &v, &ov);
    check_cells(&t, &L, "small lesson zoomed");
    check_guard(&t, "small lesson zoomed");
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}

// The window's export progress is drawn from View fields, inside the frame.
static void test_export_overlay(void **state)
{
    (void)state;
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    Target t;
    target_init(&t, 1280, 720);
    size_t bytes;
    unsigned char *copy = target_copy(&t, &bytes);
    View v;
    Overlays ov = {0}; // the window's overlays (tooltip, help, toast, E progress)
    view_init(&v, &ls, LANG_EN);
    render_frame(&t.c, &tr, &v, &ov);
    memcpy(copy, t.buf, bytes);
    ov.export_done = 3, ov.export_total = 13;
    render_frame(&t.c, &tr, &v, &ov);
    check_guard(&t, "export progress");
    assert_memory_not_equal(copy, t.buf, bytes);
    ov.export_done = ov.export_total = 0;
    render_frame(&t.c, &tr, &v, &ov);
    assert_memory_equal(copy, t.buf, bytes);
    free(copy);
    target_free(&t);
    trace_free(&tr);
    lesson_free(&ls);
}


// ---- the study mode ---------------------------------------------------------------

// Reverses each batch slice of t (the values a hidden result holds move; each batch's
// range, and so every colour scale, stays the same).
static void reverse_batches(Tensor *t)
{
    size_t per = t->size / (size_t)t->shape[0];
    for (int b = 0; b < t->shape[0]; b++) {
        float *d = t->data + (size_t)b * per;
        for (size_t i = 0, j = per - 1; i < j; i++, j--) {
            float x = d[i];
            d[i] = d[j], d[j] = x;
        }
    }
}

// A result the study mode hides gives nothing of itself away: the frame asking about
// it (the question, the hint, a tooltip over it) is the same, pixel for pixel, whatever
// the numbers in it; shown, they differ. Every stage with questions of every lesson.
static void test_study_hides_result(void **state)
{
    (void)state;
    glob_t g = lesson_files();
    Study *st = calloc(1, sizeof *st);
    assert_non_null(st);
    Target t;
    target_init(&t, 1024, 640);
    size_t bytes;
    unsigned char *before = target_copy(&t, &bytes);
    int checked = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        Lesson ls;
        Trace tr;
        if (!strstr(g.gl_pathv[f], "lessons/") || !load(g.gl_pathv[f], &ls, &tr)) continue;
        memset(st, 0, sizeof *st);
        study_load(st, &tr, &ls, LANG_EN, true, 0);
        st->on = true;
        for (int i = 0; i < st->n; i++) {
            const QuizQuestion *q = &st->q[i];
            if (i > 0 && st->q[i - 1].stage == q->stage) continue; // a stage once
            Stage *sg = &tr.stages[q->stage];
            if (sg->t.size < 2) continue;
            study_enter(st, q->stage);
            st->hint = true;
            View v;
            view_init(&v, &ls, LANG_EN);
            v.stage = q->stage, v.anim = 0.0f;
            v.batch = q->batch < 0 ? 0 : q->batch, v.head = q->head < 0 ? 0 : q->head;
            v.study = v.hide_result = true;
            v.study_total = st->n;
            Overlays ov = {0};
            ov.study = st;
            Layout L;
            layout_compute(&L, &tr, &v, t.w, t.h);
            int p = L.result_panel;
            assert_true(p >= 0);
            ov.hover = true; // the pointer on the hidden result: no tooltip
            ov.mouse_x = L.panel[p].x + L.panel[p].w / 2, ov.mouse_y = L.panel[p].y + L.panel[p].h / 2;
            for (int shown = 0; shown < 2; shown++) {
                v.hide_result = !shown;
                render_frame(&t.c, &tr, &v, &ov);
                memcpy(before, t.buf, bytes);
                reverse_batches(&sg->t);
                trace_compute_stats(&tr);
                render_frame(&t.c, &tr, &v, &ov);
                reverse_batches(&sg->t);
                trace_compute_stats(&tr);
                bool same = memcmp(before, t.buf, bytes) == 0;
                if (!shown && !same) fail_msg("%s: stage %s: the hidden result shows through", g.gl_pathv[f], sg->name);
                if (shown && !same) checked++; // (a palindromic slice looks the same reversed)
            }
            // an answer's feedback at once, its derivation only once the stage shows: its numbers
            // would answer the stage's other questions (issue 35)
            int n_here;
            study_stage_questions(st, q->stage, &n_here);
            ov.hover = false, v.hide_result = true;
            for (int k = 0; k < n_here && n_here > 1; k++) {
                study_give_up(st);
                v.hide_result = study_pending(st, q->stage);
                render_frame_record(&t.c, &L, &tr, &v, &ov);
                const char *ex = st->q[st->focus].explanation; // a line drawn that is its start (not the formula)
                size_t first = strcspn(ex, "\n"), least = first < 30 ? first : 30;
                bool said = false;
                for (size_t c = 0; c < t.dl.n; c++) {
                    const char *line = t.dl.text + t.dl.cmd[c].text;
                    size_t len = strlen(line), m = len < first ? len : first; // (a block: its first line)
                    said |= t.dl.cmd[c].op == DRAW_TEXT && m >= least && !strncmp(line, ex, m);
                }
                paint_flush(&t.c);
                if (said == v.hide_result) fail_msg("%s: %s: the derivation %s", g.gl_pathv[f], st->q[st->focus].id, said ? "before the result shows" : "missing");
                study_next(st);
            }
        }
        trace_free(&tr);
        lesson_free(&ls);
    }
    assert_true(checked >= 20);
    free(before);
    target_free(&t);
    free(st);
    globfree(&g);
}

// ---- PNG ------------------------------------------------------------------------

// The help overlay in Chinese is drawn at least as large as the English one and from
// 1024x768 up at 12 px or more (issue 35: ~11 px in Chinese) — the window's help and the
// page's (its E row: keys.export_web, or keys.export_web_no_mp4 without H.264; web_main.c).
static void test_help_size_zh(void **state)
{
    (void)state;
    if (!fonts_have_cjk(fonts)) skip();
    char err[600];
    assert_true(i18n_load("assets", err, sizeof err)); // (test_i18n left a Chinese table of its own)
    Lesson ls;
    Trace tr;
    assert_true(load("lessons/arange-2x4x4.json", &ls, &tr));
    static const int size[][2] = {{1280, 720}, {1920, 1080}, {1024, 768}, {800, 600}};
    static const char *const export_row[] = {NULL, "keys.export_web", "keys.export_web_no_mp4"};
    for (size_t k = 0; k < sizeof size / sizeof size[0] * 3; k++) {
        i18n_alias("keys.export", export_row[k % 3]);
        Target t;
        target_init(&t, size[k / 3][0], size[k / 3][1]);
        int px[LANG_COUNT];
        for (int l = 0; l < LANG_COUNT; l++) {
            View v;
            view_init(&v, &ls, (Lang)l);
            Layout L;
            layout_compute(&L, &tr, &v, size[k / 3][0], size[k / 3][1]);
            px[l] = chrome_help_px(&t.c, &L, &v);
        }
        if (px[LANG_ZH] < px[LANG_EN] || (px[LANG_ZH] < 12 && size[k / 3][0] >= 1024))
            fail_msg("%dx%d (E's row: %s): the help is %d px in Chinese, %d px in English", size[k / 3][0], size[k / 3][1],
                     export_row[k % 3] ? export_row[k % 3] : "keys.export", px[LANG_ZH], px[LANG_EN]);
        target_free(&t);
    }
    i18n_alias("keys.export", NULL);
    trace_free(&tr);
    lesson_free(&ls);
}

// Issue 39: the model view of the subword model (4 layers × 4 heads) with a student's sentence
// of 15–25 tokens is projectable at 1280×720, 1920×1080 and 3840×2160, in projector mode,
// in both languages. On main its 16 maps were ~70 px squares at 1280×720 (the width beside the
// grid empty), the token labels 8 px, and the narration named the heads one by one, cut at
// "… Layer 3 head". Now: every map at least 72·s px tall and 200·s wide, the labels at
// least LAYOUT_MIN_TEXT_PX and none overlapping another, the narration whole in its box.
// (It depends on the lesson's shape, not its numbers: the lead may retrain it.)
static void test_model_view_subword(void **state)
{
    (void)state;
    char err[600];
    assert_true(i18n_load("assets", err, sizeof err));
    Session *base = session_create("lessons/subword-lm-fortunes.json", err, sizeof err);
    if (!base) fail_msg("%s", err);
    Session *s = session_retext(base, "My teacher said that the cat sat on the mat, and then it ran.", err, sizeof err);
    if (!s) fail_msg("%s", err);
    const Trace *tr = &s->trace;
    assert_true(s->lesson.len_q >= 15 && s->lesson.len_q <= 25);
    static const int size[][2] = {{1280, 720}, {1920, 1080}, {3840, 2160}};
    for (int z = 0; z < 6; z++)
        for (int lang = 0; lang < LANG_COUNT; lang++) {
            if (lang == LANG_ZH && !fonts_have_cjk(fonts)) continue;
            const int w = size[z % 3][0], h = size[z % 3][1];
            char what[80];
            snprintf(what, sizeof what, "%dx%d%s %s", w, h, z >= 3 ? " projector" : "", lang ? "zh" : "en");
            Target t;
            target_init(&t, w, h);
            View v;
            view_init(&v, &s->lesson, (Lang)lang);
            TextMeasure tm = {text_measure, fonts};
            v.measure = &tm, v.kind = VIEW_MODEL, v.projector = z >= 3, v.stage = trace_find(tr, "l0.attn");
            Layout L;
            layout_compute(&L, tr, &v, w, h);
            const ModelViewLayout *M = &L.view.model;
            assert_int_equal(M->layers, 4);
            assert_int_equal(M->heads, 4);
            for (int l = 0; l < 4; l++)
                for (int hd = 0; hd < 4; hd++) {
                    const Rect q = M->map[l][hd];
                    if (q.h < (int)(72 * L.s) || q.w < (int)(200 * L.s))
                        fail_msg("%s: map %d.%d is %dx%d px", what, l, hd, q.w, q.h);
                }
            if (M->tok_px < LAYOUT_MIN_TEXT_PX) fail_msg("%s: token labels at %d px", what, M->tok_px);
            render_frame_record(&t.c, &L, tr, &v, NULL);
            // the token labels (at tok_px, beside or above a map): no two overlap
            Rect lab[512];
            int n = 0;
            const char *narr = NULL;
            for (size_t i = 0; i < t.dl.n; i++) {
                const DrawCmd *c = &t.dl.cmd[i];
                if (c->op != DRAW_TEXT) continue;
                const char *str = draw_list_str(&t.dl, c);
                if (c->wrap_w > 0 && c->r.y >= L.narration.y) { // the narration: whole, not cropped
                    narr = str;
                    const int need = paint_text_wrapped_height(&t.c, c->face, c->px, c->wrap_w, str);
                    if (need > c->r.h || c->r.y + c->r.h > L.narration.y + L.narration.h)
                        fail_msg("%s: the narration needs %d px, has %d: %s", what, need, c->r.h, str);
                    continue;
                }
                if (c->px != M->tok_px || c->r.y < M->col_label[0].y || c->r.y > M->map[3][0].y + M->map[3][0].h ||
                    c->r.x >= M->map[0][3].x + M->map[0][3].w)
                    continue;
                assert_true(n < 512);
                lab[n++] = (Rect){c->r.x, c->r.y, text_measure(fonts, false, c->px, str), c->px};
            }
            assert_non_null(narr);
            assert_true(strlen(narr) > 40);
            assert_true(n >= 4 * 4 + 4 * 4); // (rows of every layer, keys of every head)
            for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++)
                    if (lab[i].x < lab[j].x + lab[j].w && lab[j].x < lab[i].x + lab[i].w && lab[i].y < lab[j].y + lab[j].h &&
                        lab[j].y < lab[i].y + lab[i].h)
                        fail_msg("%s: token labels overlap at (%d, %d) and (%d, %d)", what, lab[i].x, lab[i].y, lab[j].x,
                                 lab[j].y);
            paint_flush(&t.c);
            target_free(&t);
        }
    session_destroy(s);
    session_destroy(base);
}

// Issue 41: an experiment's frame is no stage's. Its draw list (window, PNG/SVG/PDF, the page and
// projector mode replay it) has no step of the timeline (the stage on screen was lit as "8 Softmax"
// over the ablation table) and no head or layer tab; the row in the timeline's place names the
// experiment, lit, and says how to go back. Both languages, at 1280×720 and 4K, in projector mode.
static void test_experiment_chrome(void **state)
{
    (void)state;
    char err[600];
    assert_true(i18n_load("assets", err, sizeof err)); // (test_i18n left a Chinese table of its own)
    Session *s = session_create("lessons/induction-heads.json", err, sizeof err);
    assert_non_null(s);
    const Trace *tr = &s->trace;
    static const char *const NAMES[] = {"ablation", "logit-lens", "logit-attribution"};
    static const int size[][2] = {{1280, 720}, {3840, 2160}};
    for (int k = 0; k < 3; k++) {
        ExpView x;
        assert_true(expview_open(&x, NAMES[k], s, NULL, err, sizeof err));
        for (int lang = 0; lang < LANG_COUNT; lang++) {
            if (lang == LANG_ZH && !fonts_have_cjk(fonts)) continue;
            for (int z = 0; z < 4; z++) {
                const int w = size[z % 2][0], h = size[z % 2][1];
                Target t;
                target_init(&t, w, h);
                View v, st;
                view_init(&v, &s->lesson, (Lang)lang);
                v.stage = tr->n - 1, v.projector = z >= 2, v.anim = 1.0f;
                st = v;
                v.kind = x.kind, v.exp = &x;
                Layout L, S;
                layout_compute(&S, tr, &st, w, h); // (the same stage's own frame: its steps' labels)
                Frame F;
                frame_prepare(&F, &S, tr, &st, NULL);
                layout_compute(&L, tr, &v, w, h);
                assert_int_equal(L.n_steps, 0);
                assert_int_equal(L.n_head_tabs + L.n_layer_tabs, 0);
                render_frame_record(&t.c, &L, tr, &v, NULL);
                char row[200];
                const char *args[] = {i18n_get((Lang)lang, viewkind_of(x.kind)->row_key)};
                i18n_fmt(row, sizeof row, (Lang)lang, "ui.exp_row", 1, args);
                bool named = false, back = false;
                for (size_t i = 0; i < t.dl.n; i++) {
                    const DrawCmd *c = &t.dl.cmd[i];
                    if (c->op != DRAW_TEXT) continue;
                    const char *text = draw_list_str(&t.dl, c);
                    if (strcmp(text, row) == 0) {
                        named = true;
                        assert_true(c->r.y < L.tabs.y); // (in the timeline's place, at the top)
                    }
                    back |= strcmp(text, i18n_get((Lang)lang, "ui.exp_back")) == 0;
                    if (strcmp(text, i18n_get((Lang)lang, "ui.head")) == 0 || strcmp(text, i18n_get((Lang)lang, "ui.layer")) == 0)
                        fail_msg("%s %s %dx%d: a head or layer tab's label \"%s\"", NAMES[k], lang ? "zh" : "en", w, h, text);
                    for (int j = 0; j < S.n_steps; j++) { // no step's "N  Name" (nor "N Name")
                        char a1[120], a2[120];
                        const char *name = i18n_get((Lang)lang, F.step_key[j]);
                        snprintf(a1, sizeof a1, "%d  %s", j + 1, name), snprintf(a2, sizeof a2, "%d %s", j + 1, name);
                        if (strcmp(text, a1) == 0 || strcmp(text, a2) == 0)
                            fail_msg("%s %s %dx%d: the timeline's step \"%s\" on an experiment's frame", NAMES[k],
                                     lang ? "zh" : "en", w, h, text);
                    }
                }
                if (!named) fail_msg("%s %s %dx%d: no row \"%s\"", NAMES[k], lang ? "zh" : "en", w, h, row);
                assert_true(back);
                paint_flush(&t.c);
                target_free(&t);
            }
        }
        expview_free(&x);
    }
    session_destroy(s);
}

static void test_png_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-png-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], err[300];
    snprintf(path, sizeof path, "%s/a.png", dir);
    enum { W = 5, H = 3, PITCH = W * 4 + 8 };
    unsigned char px[PITCH * H];
    for (int i = 0; i < PITCH * H; i++) px[i] = (unsigned char)(i * 7);
    for (int y = 0; y < H; y++)   // frames are opaque: the encoder keeps R, G, B
        for (int x = 0; x < W; x++) px[y * PITCH + x * 4 + 3] = 255;
    assert_true(png_write_rgba(path, px, W, H, PITCH, 6, false, err, sizeof err));
    // decode and compare
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    spng_ctx *ctx = spng_ctx_new(0);
    spng_set_png_file(ctx, f);
    struct spng_ihdr ih;
    assert_int_equal(spng_get_ihdr(ctx, &ih), 0);
    assert_int_equal(ih.width, W);
    assert_int_equal(ih.height, H);
    assert_int_equal(ih.color_type, SPNG_COLOR_TYPE_TRUECOLOR);
    unsigned char out[W * 4 * H];
    assert_int_equal(spng_decode_image(ctx, out, sizeof out, SPNG_FMT_RGBA8, 0), 0);
    for (int y = 0; y < H; y++) assert_memory_equal(out + y * W * 4, px + y * PITCH, W * 4);
    spng_ctx_free(ctx);
    fclose(f);
    // only the final file is left (no temporaries)
    glob_t g;
    char pat[128];
    snprintf(pat, sizeof pat, "%s/*", dir);
    assert_int_equal(glob(pat, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    globfree(&g);
    remove(path);
    // a missing directory: false, one line naming the path
    snprintf(path, sizeof path, "%s/no/such/dir/b.png", dir);
    assert_false(png_write_rgba(path, px, W, H, PITCH, 6, false, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_null(strchr(err, '\n'));
    rmdir(dir);
}

int main(void)
{
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colormap_diverging),
        cmocka_unit_test(test_colormap_sequential),
        cmocka_unit_test(test_colormap_text),
        cmocka_unit_test(test_playback),
        cmocka_unit_test(test_i18n),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_layout_vocab_768),
        cmocka_unit_test(test_layout_subword_768),
        cmocka_unit_test(test_model_view_subword),
        cmocka_unit_test(test_render_all_lessons),
        cmocka_unit_test(test_frame_commands),
        cmocka_unit_test(test_key_table),
        cmocka_unit_test(test_flush_inside_push),
        cmocka_unit_test(test_render_overlays_and_determinism),
        cmocka_unit_test(test_tooltip_clear_of_operands),
        cmocka_unit_test(test_hover_during_transition),
        cmocka_unit_test(test_alibi_labels),
        cmocka_unit_test(test_token_labels_every_row),
        cmocka_unit_test(test_token_indices_apart),
        cmocka_unit_test(test_small_screens),
        cmocka_unit_test(test_legend_ramp),
        cmocka_unit_test(test_numbers_readable),
        cmocka_unit_test(test_labels_fit),
        cmocka_unit_test(test_vocab_labels_inside),
        cmocka_unit_test(test_text_colours),
        cmocka_unit_test(test_row_sums_readable),
        cmocka_unit_test(test_experiment_chrome),
        cmocka_unit_test(test_presenter_copy),
        cmocka_unit_test(test_presenter_place),
        cmocka_unit_test(test_small_chrome),
        cmocka_unit_test(test_scrub_bar_clear),
        cmocka_unit_test(test_heads_fly_under),
        cmocka_unit_test(test_image_mode_pixels),
        cmocka_unit_test(test_image_mode_hover),
        cmocka_unit_test(test_zoom_and_pan),
        cmocka_unit_test(test_export_overlay),
        cmocka_unit_test(test_study_hides_result),
        cmocka_unit_test(test_png_write),
        cmocka_unit_test(test_help_size_zh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
