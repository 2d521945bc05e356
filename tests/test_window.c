// test_window.c — the window in-process, without X: SDL's offscreen video driver,
// pushed key and pointer events, a fake clock of 16 ms a frame (window_driver.h).
// What the Xvfb tests checked with xdotool and fixed sleeps, checked frame by frame:
//  - keys: two digits typed quickly reach steps 10 and 11 (1 then 0, 1 then 1); one
//    digit alone still jumps at once; S names the stage it saves; hovering a softmax's
//    Σ cell shows its tooltip; G cycles the attention colour scale (the frame changes);
//  - projector: M on, then off, gives back the frame from before, palette included;
//    --projector at 1280x720 steps through the ALiBi lesson's query projection's three parts;
//  - lab: the what-if lab, keyboard only, as a student would: Enter selects the first
//    editable cell, arrows move it, typing 7.5 + Enter edits input.query[0,1,1] (the
//    frame changes); W opens the switches: scale 1 (the frame changes), Ctrl+Z undoes
//    it (the frame before, pixel for pixel); mask causal from the switches on the last
//    stage (S names the output), Ctrl+Z, Ctrl+Y, Ctrl+Z; on the masked scores, Space
//    toggles the selected cell's mask; Ctrl+S saves a new lesson: --check accepts it,
//    its --dump equals --dump of the original with the same edits as --set, the
//    original file is unchanged;
//  - study: --study opens the study mode; every question of the classic lesson is
//    answered with the keys (the answers typed from `attnviz --quiz`, → to the next
//    stage with questions, no pause after it; Enter after each feedback to the stage's
//    next question; T twice after a stage's last answer reopens its feedback); digits and Q typed into an answer do
//    nothing else; progress.json then holds every answer, all right; reopened, the
//    answers are restored (N finds nothing to give up: it says so in the study box,
//    no toast) and the picker opens; a corrupt
//    progress.json is reported on stderr and set aside, its bytes kept;
//  - save: the window's own save (S) has the export's pixels at the same size (the
//    scores of the classic lesson, against attnviz --export; ImageMagick's compare).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file_support.h"
#include "lesson.h"
#include "window_driver.h"

static char save_dir[64];
static char bin[512]; // the attnviz beside this test's directory (build/attnviz, build/san/attnviz)
static Uint32 shot_a[WD_MAX_W * WD_MAX_H], shot_b[WD_MAX_W * WD_MAX_H];

static AppOptions options(const char *lesson)
{
    AppOptions o = {.lesson_path = lesson, .lang = LANG_EN, .width = 1280, .height = 720};
    return o;
}

// The newest S-save's stage: attnviz-NNNN-STAGE[-K].png with the highest NNNN… by
// modification order is what the shell tests used; here the count of files tells
// which one is new.
static int count_saves(void)
{
    DIR *dir = opendir(getenv("ATTNVIZ_SAVE_DIR"));
    int n = 0;
    if (!dir) return 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, "attnviz-", 8) == 0 && strstr(e->d_name, ".png")) n++;
    closedir(dir);
    return n;
}

static char saved_path[512]; // the newest S-save

// saved: S typed; the stage the new file names ("" when none appeared)
static const char *saved(Driver *d)
{
    static char stage[256];
    stage[0] = 0;
    int n = count_saves();
    wd_key(d, "S");
    if (count_saves() != n + 1) {
        wd_fail(d, "S saved no new PNG in %s", getenv("ATTNVIZ_SAVE_DIR"));
        return stage;
    }
    // the newest: the one with the newest mtime (ties: the longest name, a -K suffix)
    DIR *dir = opendir(getenv("ATTNVIZ_SAVE_DIR"));
    struct timespec best = {0, 0};
    char name[256] = "";
    for (struct dirent *e; dir && (e = readdir(dir));) {
        if (strncmp(e->d_name, "attnviz-", 8) != 0) continue;
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", getenv("ATTNVIZ_SAVE_DIR"), e->d_name);
        if (stat(path, &st) != 0) continue;
        if (st.st_mtim.tv_sec > best.tv_sec || (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec >= best.tv_nsec)) {
            best = st.st_mtim;
            snprintf(name, sizeof name, "%s", e->d_name);
        }
    }
    if (dir) closedir(dir);
    snprintf(saved_path, sizeof saved_path, "%s/%s", getenv("ATTNVIZ_SAVE_DIR"), name);
    // attnviz-0010-residual_sum.png → residual_sum; attnviz-0010-residual_sum-2.png too
    const char *s = name + strlen("attnviz-NNNN-");
    snprintf(stage, sizeof stage, "%s", strlen(name) > 13 ? s : "");
    char *dot = strstr(stage, ".png");
    if (dot) *dot = 0;
    char *dash = strrchr(stage, '-');
    if (dash && dash[1] >= '0' && dash[1] <= '9') *dash = 0;
    return stage;
}

// ---- keys -------------------------------------------------------------------------

static void keys_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "1");
    wd_key(d, "0");
    wd_settle(d);
    const char *st = saved(d);
    if (strcmp(st, "residual_sum") != 0) wd_fail(d, "1 then 0 showed %s, expected step 10 (residual_sum)", st);
    wd_key(d, "1");
    wd_key(d, "1");
    wd_settle(d);
    st = saved(d);
    if (strcmp(st, "ffn_hidden") != 0) wd_fail(d, "1 then 1 showed %s, expected step 11 (ffn_hidden)", st);
    wd_wait(d, 1.2); // longer than a second: the next digit starts anew
    wd_key(d, "6");
    wd_settle(d);
    st = saved(d);
    if (strcmp(st, "attn") != 0) wd_fail(d, "6 showed %s, expected step 6 (attn)", st);
    // the Σ column of the softmax: its tooltip. The Σ cell of row 0 is right of the
    // result panel: the rightmost yellow (Σ = 1) pixel run in the row of cells
    wd_settle(d); // the save's toast fades
    if (!wd_shot(d, shot_a)) return;
    int x = -1;
    for (int y = 220; y < 280; y++)
        for (int i = 0; i < d->w; i++) {
            Uint32 c = shot_a[y * d->w + i] & 0xFFFFFF;
            if (c == 0xFDE725 || c == 0xFDE724 || c == 0xFCE626) x = i;
        }
    if (x < 0) {
        wd_fail(d, "no Σ cell found on the softmax frame");
        return;
    }
    // the tooltip's own background colour (255, 255, 250) is on screen only with it
    if (wd_has_colour(d, shot_a, 0xFFFFFA)) wd_fail(d, "a tooltip is already on screen before hovering");
    wd_mouse(d, x - 4, 245, 0);
    wd_settle(d);
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "hovering the Σ cell at (%d, 245) changed nothing", x - 4);
    if (!wd_has_colour(d, shot_b, 0xFFFFFA)) wd_fail(d, "hovering the Σ cell at (%d, 245) showed no tooltip", x - 4);
    wd_mouse(d, 5, 715, 0);
    // G: the colour scale of the attention weights (the toast names it; the frame changes)
    wd_settle(d);
    wd_shot(d, shot_a);
    wd_key(d, "G");
    wd_frames(d, 2);
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "G changed nothing");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "still running 5 frames after Ctrl+Q");
}

static void test_keys(void **state)
{
    (void)state;
    AppOptions o = options("lessons/dk-dv-residual-ffn.json");
    assert_int_equal(wd_run("keys", keys_script, &o), 0);
}

// ---- the compare view (Ctrl+D) ---------------------------------------------------------------

// Ctrl+D on the induction lesson's probs: B = l0.h0 ablated, the compare view (another picture);
// hovering a cell of B's panel shows a tooltip (A's and B's derivations); Ctrl+D through the other
// three heads, then off: the stage's panels again, the picture from before; Ctrl+Shift+D from there:
// the last head (l1.h1); A back to the panels.
static void compare_script(Driver *d)
{
    static Uint32 c[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "End");
    wd_settle(d);
    wd_shot(d, shot_a);
    wd_key_mod(d, "D", KMOD_LCTRL);
    wd_settle(d);
    wd_shot(d, shot_b);
    if (d->kind != VIEW_COMPARE || strcmp(d->stage, "probs") != 0) wd_fail(d, "Ctrl+D showed kind %d at %s", d->kind, d->stage);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "Ctrl+D changed nothing");
    if (wd_has_colour(d, shot_b, 0xFFFFFA)) wd_fail(d, "a tooltip is on screen before hovering");
    Rect p = d->panel1;
    wd_mouse(d, p.x + p.w / 4, p.y + p.h / 4, 0);
    wd_settle(d);
    wd_shot(d, c);
    if (!wd_has_colour(d, c, 0xFFFFFA)) wd_fail(d, "hovering B's panel at (%d, %d) showed no tooltip", p.x + p.w / 4, p.y + p.h / 4);
    wd_mouse(d, 5, 715, 0);
    for (int k = 1; k < 4; k++) {
        wd_key_mod(d, "D", KMOD_LCTRL);
        wd_settle(d);
        if (d->kind != VIEW_COMPARE) wd_fail(d, "Ctrl+D %d left the compare view", k + 1);
    }
    wd_key_mod(d, "D", KMOD_LCTRL);
    wd_settle(d);
    wd_shot(d, c);
    if (d->kind != VIEW_PANELS) wd_fail(d, "Ctrl+D after the last head showed kind %d", d->kind);
    if (!wd_same(d, shot_a, c)) wd_fail(d, "compare off did not give back the stage's picture");
    wd_key_mod(d, "D", KMOD_LCTRL | KMOD_LSHIFT);
    wd_settle(d);
    if (d->kind != VIEW_COMPARE) wd_fail(d, "Ctrl+Shift+D did not compare with the last head");
    wd_key(d, "A");
    wd_settle(d);
    if (d->kind != VIEW_PANELS) wd_fail(d, "A from the compare view showed kind %d", d->kind);
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_compare(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("compare", compare_script, &o), 0);
}

// The induction lesson's probs (shot_a), then Shift+D: its compare menu over it.
static void menu_at_probs(Driver *d)
{
    wd_settle(d);
    wd_key(d, "End");
    wd_settle(d);
    wd_shot(d, shot_a);
    wd_key_mod(d, "D", KMOD_LSHIFT);
    wd_settle(d);
}

// Shift+D: the compare menu over the frame (the view still the stage's panels); Esc closes it (the
// picture from before); Shift+D again, Down and Enter: B from the menu, the compare view; Shift+D
// and a click outside the menu close it, B kept.
static void compare_menu_script(Driver *d)
{
    static Uint32 c[WD_MAX_W * WD_MAX_H];
    menu_at_probs(d);
    wd_shot(d, shot_b);
    if (d->kind != VIEW_PANELS) wd_fail(d, "Shift+D changed the view to kind %d", d->kind);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "Shift+D showed no menu");
    wd_key(d, "Escape");
    wd_settle(d);
    wd_shot(d, c);
    if (!wd_same(d, shot_a, c)) wd_fail(d, "Esc did not close the compare menu");
    wd_key_mod(d, "D", KMOD_LSHIFT);
    wd_settle(d);
    wd_key(d, "Down");
    wd_key(d, "Return");
    wd_settle(d);
    if (d->kind != VIEW_COMPARE || strcmp(d->stage, "probs") != 0) wd_fail(d, "the menu's B showed kind %d at %s", d->kind, d->stage);
    wd_mouse(d, 3, 3, 0);
    wd_settle(d);
    wd_shot(d, shot_b);
    wd_key_mod(d, "D", KMOD_LSHIFT);
    wd_settle(d);
    wd_mouse(d, 3, 3, 1);
    wd_settle(d);
    wd_shot(d, c);
    if (d->kind != VIEW_COMPARE || !wd_same(d, shot_b, c)) wd_fail(d, "a click outside the menu did not close it, B kept");
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_compare_menu(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("compare_menu", compare_menu_script, &o), 0);
}

// Issue 41: Shift+D's first item, a typed text as B: Enter opens the text box on A's text (no
// compare yet); a text of 11 tokens (A's has 12) and a character outside the vocabulary are
// refused in the box, each with its reason (no compare); "qkdmbxqkdmbq" reads: the compare view of A's text against it,
// at the same stage; Enter closes the box, B kept (the keys move through the stages again). In
// the window's language (lang): the box's title and reasons come from the language files.
static void compare_text_script(Driver *d)
{
    static Uint32 c[WD_MAX_W * WD_MAX_H];
    menu_at_probs(d);
    wd_key(d, "Return"); // (the first item: a typed text)
    wd_settle(d);
    wd_shot(d, shot_b);
    if (d->kind != VIEW_PANELS || d->compare[0]) wd_fail(d, "the menu's typed text compared at once (kind %d, B %s)", d->kind, d->compare);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "the menu's typed text opened no box");
    wd_key(d, "BackSpace"); // "qkdmbxqkdmb": 11 tokens
    wd_settle(d);
    wd_shot(d, c);
    if (d->kind != VIEW_PANELS || d->compare[0]) wd_fail(d, "a text of 11 tokens made B %s", d->compare);
    if (wd_same(d, shot_b, c)) wd_fail(d, "a text of 11 tokens: the box said nothing");
    wd_type(d, "Z");
    wd_settle(d);
    wd_shot(d, shot_b);
    if (d->kind != VIEW_PANELS || d->compare[0]) wd_fail(d, "a character outside the vocabulary made B %s", d->compare);
    if (wd_same(d, shot_b, c)) wd_fail(d, "a character outside the vocabulary: the box said the same as for 11 tokens");
    wd_key(d, "BackSpace");
    wd_type(d, "q");
    wd_settle(d);
    if (d->kind != VIEW_COMPARE || strcmp(d->compare, "text:qkdmbxqkdmbq") != 0 || strcmp(d->stage, "probs") != 0)
        wd_fail(d, "a text of 12 tokens showed kind %d, B \"%s\" at %s", d->kind, d->compare, d->stage);
    wd_key(d, "Return");
    wd_settle(d);
    wd_shot(d, c);
    if (d->kind != VIEW_COMPARE || strcmp(d->compare, "text:qkdmbxqkdmbq") != 0) wd_fail(d, "Enter in the box dropped B");
    wd_key(d, "Left"); // (the box closed: the keys move through the stages again)
    wd_settle(d);
    if (strcmp(d->stage, "probs") == 0) wd_fail(d, "after Enter, Left did not move (the box still open?)");
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_compare_text(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("compare_text", compare_text_script, &o), 0);
    o.lang = LANG_ZH;
    assert_int_equal(wd_run("compare_text_zh", compare_text_script, &o), 0);
}

// ---- inside a loop ------------------------------------------------------------------

// N steps through decoding (6 tokens): each step another picture on the same stage, the 7th
// N the whole loop again (the first picture); Shift+N from there the last step; the stage the
// step moves to (←) keeps it; N where there is no loop stays there.
static void loop_script(Driver *d)
{
    static Uint32 whole[WD_MAX_W * WD_MAX_H], a[WD_MAX_W * WD_MAX_H], b[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "End");
    wd_settle(d);
    if (strcmp(d->stage, "decode_output") != 0) wd_fail(d, "End showed %s, expected decode_output", d->stage);
    wd_shot(d, whole);
    memcpy(a, whole, sizeof a);
    for (int t = 0; t < 6; t++) {
        wd_key(d, "N");
        wd_settle(d);
        wd_shot(d, b);
        if (strcmp(d->stage, "decode_output") != 0) wd_fail(d, "N %d left the stage for %s", t + 1, d->stage);
        if (d->loop != t) wd_fail(d, "N %d showed step %d", t + 1, d->loop);
        if (wd_same(d, a, b)) wd_fail(d, "N %d showed the same picture again", t + 1);
        memcpy(a, b, sizeof a);
    }
    // the step bar: a click at its left end shows step 0, at its right end the last
    wd_mouse(d, d->bar_track.x + 1, d->bar.y + d->bar.h / 2, SDL_BUTTON_LEFT);
    wd_settle(d);
    if (d->loop != 0) wd_fail(d, "a click at the step bar's left end showed step %d", d->loop);
    wd_mouse(d, d->bar_track.x + d->bar_track.w - 2, d->bar.y + d->bar.h / 2, SDL_BUTTON_LEFT);
    wd_settle(d);
    if (d->loop != 5) wd_fail(d, "a click at the step bar's right end showed step %d", d->loop);
    wd_key(d, "N");
    wd_settle(d);
    wd_shot(d, b);
    if (!wd_same(d, whole, b)) wd_fail(d, "N past the last step did not show the whole loop again");
    wd_key_mod(d, "N", KMOD_LSHIFT);
    wd_settle(d);
    wd_shot(d, b);
    if (!wd_same(d, a, b)) wd_fail(d, "Shift+N from the whole loop did not show the last step");
    wd_key(d, "Left"); // decode_attn at the same step
    wd_settle(d);
    if (strcmp(d->stage, "decode_attn") != 0 || d->loop != 5) wd_fail(d, "← showed %s at step %d, expected decode_attn at 5", d->stage, d->loop);
    wd_shot(d, a);
    wd_key_mod(d, "N", KMOD_LSHIFT); // step 4
    wd_settle(d);
    wd_shot(d, b);
    if (d->loop != 4 || wd_same(d, a, b)) wd_fail(d, "Shift+N showed step %d, the same picture as step 5", d->loop);
    for (int i = 0; i < 3; i++) { // decode_scores, cache_v, cache_k: the same loop, the same step
        wd_key(d, "Left");
        wd_settle(d);
        if (d->loop != 4) wd_fail(d, "%s lost the loop's step (%d)", d->stage, d->loop);
    }
    wd_key(d, "Left"); // the stage before the loop: the step forgotten
    wd_settle(d);
    if (d->loop != -1) wd_fail(d, "%s kept the loop's step %d", d->stage, d->loop);
    wd_key(d, "1");
    wd_settle(d);
    wd_key(d, "N"); // (a toast says there is no loop here)
    wd_settle(d);
    if (strcmp(d->stage, "input") != 0 || d->loop != -1) wd_fail(d, "N at the input (no loop) moved to %s, step %d", d->stage, d->loop);
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

static void test_loop(void **state)
{
    (void)state;
    AppOptions o = options("lessons/kv-cache-decoding.json");
    assert_int_equal(wd_run("loop", loop_script, &o), 0);
}

// ---- a model of several layers ------------------------------------------------------

// J and Shift+J move to the same stage of the next / previous layer, wrapping; a click on
// a layer tab does too; → from a layer's last stage goes on to the next layer's first.
static void layers_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "6"); // layer 0's scores (input, norm, Q K V, heads, RoPE, scores)
    wd_settle(d);
    if (strcmp(d->stage, "l0.scores") != 0) wd_fail(d, "6 showed %s, expected l0.scores", d->stage);
    if (d->n_layer_tabs != 3) wd_fail(d, "%d layer tabs, expected 3", d->n_layer_tabs);
    wd_key(d, "J");
    wd_settle(d);
    if (strcmp(d->stage, "l1.scores") != 0) wd_fail(d, "J showed %s, expected l1.scores", d->stage);
    wd_key_mod(d, "J", KMOD_LSHIFT);
    wd_key_mod(d, "J", KMOD_LSHIFT);
    wd_settle(d);
    if (strcmp(d->stage, "l2.scores") != 0) wd_fail(d, "Shift+J twice from layer 1 showed %s, expected l2.scores", d->stage);
    wd_key(d, "6"); // the timeline's steps are the layer's own
    wd_settle(d);
    if (strcmp(d->stage, "l2.scores") != 0) wd_fail(d, "6 in layer 2 showed %s", d->stage);
    if (d->n_layer_tabs == 3) {
        Rect q = d->layer_tab[1];
        wd_mouse(d, q.x + q.w / 2, q.y + q.h / 2, SDL_BUTTON_LEFT);
        wd_settle(d);
        if (strcmp(d->stage, "l1.scores") != 0) wd_fail(d, "a click on layer tab 1 showed %s", d->stage);
    }
    wd_key(d, "End");
    wd_settle(d);
    wd_key(d, "J"); // from the last layer's last stage: the first layer's same stage
    wd_settle(d);
    if (strncmp(d->stage, "l0.", 3) != 0) wd_fail(d, "J from the last layer showed %s", d->stage);
    wd_key(d, "1"); // the model's input: layer 0's timeline
    wd_settle(d);
    if (strcmp(d->stage, "input") != 0) wd_fail(d, "1 showed %s", d->stage);
    // A: the model view, a map per layer and head; a click on the last opens layer 2's
    // attention weights at head 3, A again closes it
    static Uint32 before[WD_MAX_W * WD_MAX_H], grid[WD_MAX_W * WD_MAX_H];
    wd_shot(d, before);
    wd_key(d, "A");
    wd_settle(d);
    wd_shot(d, grid);
    if (d->mv_layers != 3 || d->mv_heads != 4) wd_fail(d, "A: a grid of %d × %d maps, expected 3 × 4", d->mv_layers, d->mv_heads);
    if (wd_same(d, before, grid)) wd_fail(d, "A changed nothing on screen");
    if (d->mv_layers == 3) {
        wd_mouse(d, d->mv_last.x + d->mv_last.w / 2, d->mv_last.y + d->mv_last.h / 2, SDL_BUTTON_LEFT);
        wd_settle(d);
        if (strcmp(d->stage, "l2.attn") != 0 || d->head != 3 || d->mv_layers != 0)
            wd_fail(d, "a click on layer 2's head 3 showed %s, head %d (model view %s)", d->stage, d->head,
                    d->mv_layers ? "still on" : "off");
    }
    wd_key(d, "A"); // the model view again
    wd_settle(d);
    wd_key(d, "A"); // then the head view: layer 2's head 3 as lines
    wd_settle(d);
    wd_shot(d, before);
    if (d->mv_layers != 0 || d->hv_n != 6) wd_fail(d, "A twice: model view %d, head view of %d tokens (expected 6)", d->mv_layers, d->hv_n);
    wd_key(d, "Tab"); // another head: other lines
    wd_settle(d);
    wd_shot(d, grid);
    if (wd_same(d, before, grid)) wd_fail(d, "Tab in the head view changed nothing");
    wd_key(d, "A"); // back to the stage
    wd_settle(d);
    if (d->mv_layers != 0 || d->hv_n != 0) wd_fail(d, "A three times did not go back to the stage");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

static void test_layers(void **state)
{
    (void)state;
    AppOptions o = options("tests/ref/stack-3-prenorm-rope-gqa-decode.lesson.json");
    assert_int_equal(wd_run("layers", layers_script, &o), 0);
}

// I: a language model's text typed in. A character outside the vocabulary is refused
// (the lesson on screen stays: Esc shows the frame from before); a text that reads is
// computed at once, at the same stage.
static void text_script(Driver *d)
{
    static Uint32 s0[WD_MAX_W * WD_MAX_H], s1[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "End"); // the next-token probabilities
    wd_settle(d);
    if (strcmp(d->stage, "probs") != 0) wd_fail(d, "End showed %s, expected probs", d->stage);
    wd_shot(d, s0);
    wd_key(d, "I");
    wd_settle(d);
    wd_shot(d, s1);
    if (wd_same(d, s0, s1)) wd_fail(d, "I opened no text box");
    wd_type(d, "Z"); // not in the vocabulary (its 12 lowercase letters)
    wd_settle(d);
    wd_key(d, "Escape");
    wd_settle(d);
    wd_shot(d, s1);
    if (!wd_same(d, s0, s1)) wd_fail(d, "a character outside the vocabulary changed the lesson on screen");
    wd_key(d, "I");
    wd_key(d, "BackSpace"); // "qkdmbxqkdmb": 11 tokens, computed at once
    wd_settle(d);
    wd_key(d, "Return");
    wd_settle(d);
    wd_shot(d, s1);
    if (strcmp(d->stage, "probs") != 0) wd_fail(d, "after typing, the stage is %s, expected probs", d->stage);
    if (wd_same(d, s0, s1)) wd_fail(d, "a shorter text showed the same frame");
    // Ctrl+↑: a warmer softmax (T 1 → 1.5), an edit: the probabilities and their bars change;
    // Ctrl+Z takes it back
    wd_key_mod(d, "Up", KMOD_LCTRL);
    wd_wait(d, 2.0);
    wd_shot(d, s0);
    if (wd_same(d, s0, s1)) wd_fail(d, "Ctrl+Up changed nothing on the probabilities");
    wd_key_mod(d, "Z", KMOD_LCTRL);
    wd_wait(d, 6.0); // (its toast gone)
    wd_shot(d, s0);
    if (!wd_same(d, s0, s1)) wd_fail(d, "Ctrl+Z did not take the temperature back");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

// Issue 36, item 1: the text box passes the size checks --text passes. The lesson's text
// (64 tokens) has FlashAttention's accumulator at the limit (B·H·L·L·d_v = 64·64·1024); one
// more character would pass it: the box says why (it grows by the reason's lines) and the
// lesson on screen stays (Esc shows the frame from before).
static void text_limits_script(Driver *d)
{
    static Uint32 s0[WD_MAX_W * WD_MAX_H], s1[WD_MAX_W * WD_MAX_H], s2[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_shot(d, s0);
    wd_key(d, "I");
    wd_settle(d);
    wd_shot(d, s1); // the box, no reason
    wd_type(d, "a");
    wd_settle(d);
    wd_shot(d, s2);
    if (wd_same(d, s1, s2)) wd_fail(d, "a text over the limit: the box said nothing");
    wd_key(d, "Escape");
    wd_settle(d);
    wd_shot(d, s1);
    if (!wd_same(d, s0, s1)) wd_fail(d, "a text over the limit changed the lesson on screen");
    wd_frames(d, 5);
}

static void test_text_limits(void **state)
{
    (void)state;
    char path[] = "/tmp/attnviz-test-window-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("{\"title\": \"flash at the limit\", \"vocab\": [\"a\", \"b\"], \"model\": {\"d_model\": 8, \"n_heads\": 1, \"d_k\": 4, "
          "\"d_v\": 1024, \"positions\": \"none\", \"flash\": {\"block_q\": 1, \"block_k\": 1}}, \"input\": {\"text\": \"", f);
    for (int i = 0; i < 64; i++) fputc("ab"[i % 2], f);
    fputs("\"}, \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}", f);
    fclose(f);
    AppOptions o = options(path);
    int rc = wd_run("text_limits", text_limits_script, &o);
    unlink(path);
    assert_int_equal(rc, 0);
}

// The training slider: Shift+U from the trained weights goes to the last checkpoint, U and
// Shift+U step along; a click at the loss curve's left end picks checkpoint 0, whose
// (untrained) attention looks nothing like the trained one.
static void checkpoints_script(Driver *d)
{
    static Uint32 s0[WD_MAX_W * WD_MAX_H], s1[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "End");
    wd_settle(d);
    if (d->checkpoint != -1 || d->curve.w <= 0) wd_fail(d, "opened at checkpoint %d, curve %d px wide", d->checkpoint, d->curve.w);
    wd_shot(d, s0);
    wd_key_mod(d, "U", KMOD_LSHIFT);
    wd_settle(d);
    if (d->checkpoint != 19) wd_fail(d, "Shift+U from the trained weights showed checkpoint %d, expected 19", d->checkpoint);
    wd_key_mod(d, "U", KMOD_LSHIFT);
    wd_settle(d);
    wd_key(d, "U");
    wd_settle(d);
    if (d->checkpoint != 19) wd_fail(d, "Shift+U then U showed checkpoint %d, expected 19", d->checkpoint);
    wd_mouse(d, d->curve.x + 2, d->curve.y + d->curve.h / 2, SDL_BUTTON_LEFT);
    wd_settle(d);
    wd_shot(d, s1);
    if (d->checkpoint != 0) wd_fail(d, "a click at the loss curve's left end showed checkpoint %d", d->checkpoint);
    if (strcmp(d->stage, "probs") != 0) wd_fail(d, "the checkpoint moved the stage to %s", d->stage);
    if (wd_same(d, s0, s1)) wd_fail(d, "checkpoint 0 looks like the trained model");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

// Ctrl+B: the backward view opens at its first stage (the targets), → walks on to dL/dlogits,
// the training slider keeps it (its stages computed at the checkpoint's weights: another
// frame), a typed text too; Ctrl+B again goes back to the forward stages (the last: probs).
static void backward_script(Driver *d)
{
    static Uint32 s0[WD_MAX_W * WD_MAX_H], s1[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key_mod(d, "B", KMOD_LCTRL);
    wd_settle(d);
    if (strcmp(d->stage, "grad.target") != 0) wd_fail(d, "Ctrl+B showed %s, expected grad.target", d->stage);
    wd_key(d, "Right");
    wd_settle(d);
    if (strcmp(d->stage, "grad.logits") != 0) wd_fail(d, "→ from the targets showed %s, expected grad.logits", d->stage);
    wd_wait(d, 6.0); // (the toast gone)
    wd_shot(d, s0);
    wd_key_mod(d, "U", KMOD_LSHIFT); // the checkpoint before the trained weights
    wd_wait(d, 6.0);
    wd_shot(d, s1);
    if (strcmp(d->stage, "grad.logits") != 0 || d->checkpoint != 19)
        wd_fail(d, "Shift+U showed %s at checkpoint %d, expected grad.logits at 19", d->stage, d->checkpoint);
    if (wd_same(d, s0, s1)) wd_fail(d, "the gradients at checkpoint 19 look like the trained weights'");
    wd_key(d, "I");
    wd_key(d, "BackSpace"); // a shorter text: its backward pass computed at once
    wd_key(d, "Return");
    wd_settle(d);
    if (strcmp(d->stage, "grad.logits") != 0) wd_fail(d, "after typing, the stage is %s, expected grad.logits", d->stage);
    wd_key_mod(d, "B", KMOD_LCTRL);
    wd_settle(d);
    if (strcmp(d->stage, "probs") != 0) wd_fail(d, "Ctrl+B again showed %s, expected probs", d->stage);
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

static void test_backward(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("backward", backward_script, &o), 0);
}

// A lesson that is not a language model: Ctrl+B says so and the stage stays.
static void backward_refused_script(Driver *d)
{
    wd_settle(d);
    wd_key(d, "3");
    wd_settle(d);
    char before[64];
    snprintf(before, sizeof before, "%s", d->stage);
    wd_key_mod(d, "B", KMOD_LCTRL);
    wd_settle(d);
    if (strcmp(d->stage, before) != 0) wd_fail(d, "Ctrl+B on the classic lesson moved %s to %s", before, d->stage);
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_backward_refused(void **state)
{
    (void)state;
    AppOptions o = options("lessons/arange-2x4x4.json");
    assert_int_equal(wd_run("backward_refused", backward_refused_script, &o), 0);
}

static void test_checkpoints(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("checkpoints", checkpoints_script, &o), 0);
}

static void test_text(void **state)
{
    (void)state;
    AppOptions o = options("lessons/induction-heads.json");
    assert_int_equal(wd_run("text", text_script, &o), 0);
}

// Ctrl+G / Ctrl+Shift+G: a language model generates: the greedy token, then a seeded draw, each
// appended and every stage computed again (the probs gain a row); at the model's context
// (20 positions) Ctrl+G says so and the text stays. Ctrl+Shift+↑ (top-k 1) changes the bars;
// Ctrl+Z takes it back.
static void generate_script(Driver *d)
{
    static Uint32 s0[WD_MAX_W * WD_MAX_H], s1[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "End");
    wd_settle(d);
    if (strcmp(d->stage, "probs") != 0 || d->result_rows != 18) wd_fail(d, "End: %s with %d rows", d->stage, d->result_rows);
    wd_key_mod(d, "G", KMOD_LCTRL);
    wd_settle(d);
    if (strcmp(d->stage, "probs") != 0 || d->result_rows != 19) wd_fail(d, "Ctrl+G: %s with %d rows, expected 19", d->stage, d->result_rows);
    wd_key_mod(d, "G", KMOD_LCTRL | KMOD_LSHIFT);
    wd_settle(d);
    if (d->result_rows != 20) wd_fail(d, "Ctrl+Shift+G: %d rows, expected 20", d->result_rows);
    wd_wait(d, 6.0); // (its toast gone)
    wd_shot(d, s0);
    wd_key_mod(d, "G", KMOD_LCTRL); // past the context: a message, nothing else
    wd_settle(d);
    if (d->result_rows != 20) wd_fail(d, "Ctrl+G past the context: %d rows", d->result_rows);
    wd_wait(d, 10.0);
    wd_shot(d, s1);
    if (!wd_same(d, s0, s1)) wd_fail(d, "Ctrl+G past the context changed the frame");
    wd_key_mod(d, "Up", KMOD_LCTRL | KMOD_LSHIFT); // top-k 1: one bar kept, the rest cut
    wd_wait(d, 2.0);
    wd_shot(d, s1);
    if (wd_same(d, s0, s1)) wd_fail(d, "Ctrl+Shift+Up changed nothing");
    wd_key_mod(d, "Z", KMOD_LCTRL);
    wd_wait(d, 6.0);
    wd_shot(d, s1);
    if (!wd_same(d, s0, s1)) wd_fail(d, "Ctrl+Z did not take top-k back");
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
}

static void test_generate(void **state)
{
    (void)state;
    AppOptions o = options("lessons/tiny-lm-fortunes.json");
    assert_int_equal(wd_run("generate", generate_script, &o), 0);
}

// ---- projector mode ---------------------------------------------------------------

// M on, then off: the frame as it was, palette included (it stayed high-contrast).
static void projector_script(Driver *d)
{
    static Uint32 before[WD_MAX_W * WD_MAX_H], on[WD_MAX_W * WD_MAX_H], after[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "6"); // the softmax
    wd_settle(d);
    wd_shot(d, before);
    wd_key(d, "M");
    wd_settle(d);
    wd_shot(d, on);
    if (wd_same(d, before, on)) wd_fail(d, "M changed nothing");
    wd_key(d, "M");
    wd_settle(d);
    wd_shot(d, after);
    if (!wd_same(d, before, after)) wd_fail(d, "M twice did not bring back the frame before (the palette?)");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

// --projector at 1280x720 (issue 23: → went straight to the next stage): the query
// projection of the ALiBi lesson (8 tokens) is shown in parts, x, W_Qᵀ with b_Q, then Q:
// two → stay on it, each showing another picture, the third goes on to k_proj. (The
// classic lesson's stages fit whole since issue 35: tests/test_scene.)
static void parts_script(Driver *d)
{
    static Uint32 a[WD_MAX_W * WD_MAX_H], b[WD_MAX_W * WD_MAX_H];
    wd_settle(d);
    wd_key(d, "2");
    wd_settle(d);
    if (strcmp(d->stage, "q_proj") != 0) wd_fail(d, "2 showed %s, expected q_proj", d->stage);
    for (int i = 0; i < 2; i++) {
        wd_shot(d, a);
        wd_key(d, "Right");
        wd_settle(d);
        wd_shot(d, b);
        if (strcmp(d->stage, "q_proj") != 0) wd_fail(d, "→ %d left the projection's parts for %s", i + 1, d->stage);
        if (wd_same(d, a, b)) wd_fail(d, "→ %d showed the same part again", i + 1);
    }
    wd_key(d, "Right");
    wd_settle(d);
    if (strcmp(d->stage, "k_proj") != 0) wd_fail(d, "the third → showed %s, expected k_proj", d->stage);
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

static void test_projector_parts(void **state)
{
    (void)state;
    AppOptions o = options("lessons/alibi-linear-bias.json");
    o.projector = true;
    assert_int_equal(wd_run("parts", parts_script, &o), 0);
}

static void test_projector_off(void **state)
{
    (void)state;
    AppOptions o = options("lessons/arange-2x4x4.json");
    assert_int_equal(wd_run("projector", projector_script, &o), 0);
}

// ---- lab --------------------------------------------------------------------------

// The window's standard output goes to a file while it runs (it prints the paths it saves).
static char out_path[128];
static int saved_stdout = -1;

static char err_path[128];
static int saved_stderr = -1;

static void stdout_to_file(void)
{
    snprintf(out_path, sizeof out_path, "%s/out.txt", save_dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", save_dir);
    fflush(stdout);
    fflush(stderr);
    saved_stdout = dup(1);
    saved_stderr = dup(2);
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(o >= 0 && e >= 0);
    dup2(o, 1), dup2(e, 2);
    close(o), close(e);
}

static void stdout_back(void)
{
    fflush(stdout);
    fflush(stderr);
    dup2(saved_stdout, 1), dup2(saved_stderr, 2);
    close(saved_stdout), close(saved_stderr);
}

static bool file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, text) != NULL;
}

static int run(const char *fmt, ...) // a shell command; its exit status
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

#define K(name) (wd_key(d, name), wd_settle(d))
#define CTRL(name) (wd_key_mod(d, name, KMOD_CTRL), wd_settle(d))

static void lab_script(Driver *d)
{
    wd_settle(d);
    static Uint32 start[WD_MAX_W * WD_MAX_H], selected[WD_MAX_W * WD_MAX_H], plain[WD_MAX_W * WD_MAX_H];
    wd_shot(d, start);
    K("Return"), K("Right"), K("Down");
    wd_shot(d, selected);
    if (wd_same(d, start, selected)) wd_fail(d, "Enter selected nothing (no frame drawn)");
    wd_type(d, "7.5");
    K("Return");
    wd_shot(d, shot_a);
    if (wd_same(d, selected, shot_a)) wd_fail(d, "typing 7.5 + Enter changed nothing");
    // Enter let the cell go (issue 22 item 8): no Esc needed, and a digit is a step again
    wd_shot(d, plain);
    // the switches: scale 1, then undo
    K("W");
    wd_shot(d, shot_a);
    if (wd_same(d, plain, shot_a)) wd_fail(d, "W opened nothing");
    K("Right"), K("Return"), K("Escape");
    wd_shot(d, shot_a);
    CTRL("Z");
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "Ctrl+Z after scale 1 changed nothing");
    if (!wd_same(d, plain, shot_b)) wd_fail(d, "Ctrl+Z did not bring back the frame before scale 1");
    // mask causal from the switches on the last stage (the edit adds the mask stage before
    // it: the frame stays on the output, S names it): Down Down to the mask row, Right to causal
    K("End");
    K("W"), K("Down"), K("Down"), K("Right"), K("Return"), K("Escape");
    const char *st = saved(d);
    if (strcmp(st, "output") != 0)
        wd_fail(d, "after mask=causal on the last stage, S saved '%s', expected the output stage", saved_path);
    CTRL("Z"), CTRL("Y"), CTRL("Z");
    K("Home");
    // step 5: the masked scores; Enter selects its first cell (it stands for mask[0,0,0]); Space toggles it
    K("5");
    K("Return"), K("Space");
    CTRL("S");
    K("Escape");
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "still running 5 frames after Ctrl+Q");
}

// ---- no surprise exits (issue 35, item 5) ---------------------------------------------

static bool fullscreen(Driver *d)
{
    return (SDL_GetWindowFlags(SDL_GetWindowFromID(d->window_id)) & SDL_WINDOW_FULLSCREEN) != 0;
}

// A what-if edit: the input's first cell set to 7.5 ("edited: 1 change").
static void edit_one(Driver *d)
{
    K("Return"), K("Right"), K("Down");
    wd_type(d, "7.5");
    K("Return");
}

// F then Esc leaves fullscreen and goes on; Esc again (and again) never quits, with an
// unsaved edit neither; Ctrl+Q with it asks, and Esc there stays; Ctrl+Q then S saves and quits.
static void quit_script(Driver *d)
{
    K("F");
    if (!fullscreen(d)) wd_fail(d, "F did not go fullscreen");
    K("Escape");
    if (d->exited) { wd_fail(d, "F then Esc quit"); return; }
    if (fullscreen(d)) wd_fail(d, "Esc did not leave fullscreen");
    K("Escape"), K("Escape");
    if (d->exited) { wd_fail(d, "Esc out of fullscreen quit"); return; }
    edit_one(d);
    K("Escape"), K("Escape"), K("Escape");
    if (d->exited) { wd_fail(d, "Esc with an unsaved edit quit (the edit lost)"); return; }
    static Uint32 before[WD_MAX_W * WD_MAX_H], asked[WD_MAX_W * WD_MAX_H];
    wd_shot(d, before);
    wd_key_mod(d, "Q", KMOD_CTRL);
    wd_frames(d, 5);
    if (d->exited) { wd_fail(d, "Ctrl+Q with an unsaved edit quit without asking"); return; }
    wd_shot(d, asked);
    if (wd_same(d, before, asked)) wd_fail(d, "Ctrl+Q with an unsaved edit showed no question");
    K("Right"); // (nothing else happens while it asks)
    if (d->exited) { wd_fail(d, "a key while asking quit"); return; }
    K("Escape"); // stay
    wd_frames(d, 5);
    if (d->exited) { wd_fail(d, "Esc at the question quit"); return; }
    K("Q");
    if (d->exited) { wd_fail(d, "Q after staying quit without asking again"); return; }
    K("S"); // save and quit
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "S at the question did not quit");
}

// The window closed (its close button) with an unsaved edit asks too; D discards and quits.
static void close_script(Driver *d)
{
    edit_one(d);
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_WINDOWEVENT;
    e.window.event = SDL_WINDOWEVENT_CLOSE;
    e.window.windowID = d->window_id;
    wd_push(d, &e);
    wd_frames(d, 5);
    if (d->exited) { wd_fail(d, "closing the window with an unsaved edit quit without asking"); return; }
    K("D");
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "D at the question did not quit");
}

static void test_quit(void **state)
{
    (void)state;
    char dir[160], cmd[400];
    snprintf(dir, sizeof dir, "%s/quit", save_dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    setenv("ATTNVIZ_SAVE_DIR", dir, 1);
    AppOptions o = options("lessons/arange-2x4x4.json");
    stdout_to_file();
    int fails = wd_run("quit", quit_script, &o);
    stdout_back();
    assert_int_equal(fails, 0);
    snprintf(cmd, sizeof cmd, "test -s %s/arange-2x4x4-edited-1.json", dir); // S saved the edit
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
    assert_int_equal(system(cmd), 0);
    stdout_to_file();
    fails = wd_run("close", close_script, &o);
    stdout_back();
    setenv("ATTNVIZ_SAVE_DIR", save_dir, 1);
    assert_int_equal(fails, 0);
    snprintf(cmd, sizeof cmd, "test -z \"$(ls %s)\"", dir); // D saved nothing
    assert_int_equal(system(cmd), 0);
}

static void test_lab(void **state)
{
    (void)state;
    const char *L = "lessons/arange-2x4x4.json";
    char saved_dir[128], lesson[256];
    snprintf(saved_dir, sizeof saved_dir, "%s/saved", save_dir);
    assert_int_equal(mkdir(saved_dir, 0755), 0);
    setenv("ATTNVIZ_SAVE_DIR", saved_dir, 1);
    assert_int_equal(run("cksum <%s >%s/sum-before", L, save_dir), 0);
    AppOptions o = options(L);
    stdout_to_file();
    int fails = wd_run("lab", lab_script, &o);
    stdout_back();
    setenv("ATTNVIZ_SAVE_DIR", save_dir, 1);
    assert_int_equal(fails, 0);
    snprintf(lesson, sizeof lesson, "%s/arange-2x4x4-edited-1.json", saved_dir);
    assert_int_equal(access(lesson, R_OK), 0); // Ctrl+S saved the lesson under that name
    assert_true(file_has(out_path, lesson));   // and printed its path
    assert_int_equal(run("%s --check %s >/dev/null", bin, lesson), 0);
    assert_int_equal(run("%s --dump %s >%s/saved.dump", bin, lesson, save_dir), 0);
    assert_int_equal(run("%s --dump %s --set 'input.query[0,1,1]=7.5' --set 'mask[0,0,0]=0' >%s/set.dump", bin, L, save_dir), 0);
    // the saved lesson is the original with --set input.query[0,1,1]=7.5 mask[0,0,0]=0
    assert_int_equal(run("cmp -s %s/saved.dump %s/set.dump", save_dir, save_dir), 0);
    assert_int_equal(run("cksum <%s | cmp -s - %s/sum-before", L, save_dir), 0); // the original is unchanged
}

// ---- study ------------------------------------------------------------------------

// The whole output of a command (NULL when it fails); the caller frees it.
static char *output_of(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    int rc = pclose(p);
    if (buf) buf[n] = 0;
    if (rc != 0) free(buf), buf = NULL;
    return buf;
}

typedef struct Answer {
    int stage;       // its stage's index in the trace
    char text[128];  // as typed
} Answer;
static Answer answers[64];
static int n_answers;

// One answer per question of --quiz: its stage's index (from --dump) and the answer as
// a student types it: a shape 2x4x4, a list "0 3", a whole number 3, else 4 decimals.
static void read_answers(const char *lesson)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --quiz %s", bin, lesson);
    char *quiz = output_of(cmd);
    snprintf(cmd, sizeof cmd, "%s --dump %s", bin, lesson);
    char *dump = output_of(cmd);
    assert_non_null(quiz);
    assert_non_null(dump);
    cJSON *qs = cJSON_Parse(quiz), *d = cJSON_Parse(dump);
    assert_non_null(qs);
    assert_non_null(d);
    cJSON *stages = cJSON_GetObjectItem(d, "stages"), *q;
    n_answers = 0;
    cJSON_ArrayForEach(q, qs)
    {
        assert_true(n_answers < 64);
        Answer *a = &answers[n_answers++];
        const char *stage = cJSON_GetStringValue(cJSON_GetObjectItem(q, "stage"));
        a->stage = -1;
        int i = 0;
        cJSON *st;
        cJSON_ArrayForEach(st, stages)
        {
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(st, "name")), stage) == 0) a->stage = i;
            i++;
        }
        assert_true(a->stage >= 0);
        cJSON *ans = cJSON_GetObjectItem(q, "answer"), *x;
        const bool shape = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(q, "kind")), "shape") == 0;
        a->text[0] = 0;
        if (cJSON_IsArray(ans)) {
            cJSON_ArrayForEach(x, ans)
            {
                size_t n = strlen(a->text);
                snprintf(a->text + n, sizeof a->text - n, "%s%d", n ? (shape ? "x" : " ") : "", (int)x->valuedouble);
            }
        } else if (ans->valuedouble == (double)(long)ans->valuedouble) {
            snprintf(a->text, sizeof a->text, "%ld", (long)ans->valuedouble);
        } else {
            snprintf(a->text, sizeof a->text, "%.4f", ans->valuedouble);
        }
    }
    cJSON_Delete(qs);
    cJSON_Delete(d);
    free(quiz);
    free(dump);
    assert_true(n_answers > 0);
}

// press KEY: then 10 frames (the study mode keeps drawing while a question waits)
static void press(Driver *d, const char *key)
{
    wd_key(d, key);
    wd_frames(d, 10);
}

static void quit(Driver *d)
{
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
    if (!d->exited) wd_fail(d, "still running 5 frames after Ctrl+Q");
}

static Uint32 shot_a[WD_MAX_W * WD_MAX_H], shot_b[WD_MAX_W * WD_MAX_H];

static void study_script(Driver *d)
{
    int stage = 0;
    bool first = true, reopened = false;
    for (int i = 0; i < n_answers; i++) {
        // no pause after →: the answer's first key may come in the same frame
        while (stage < answers[i].stage) wd_key(d, "Right"), stage++;
        // a Q typed into an answer does not quit (E and X are part of answers)
        if (first) wd_type(d, "qQ"), first = false;
        wd_type(d, answers[i].text);
        press(d, "Return");
        // its feedback shows at once; Enter goes on to the stage's next question
        if (i + 1 < n_answers && answers[i + 1].stage == answers[i].stage) press(d, "Return");
        else if (!reopened && i > 0 && answers[i - 1].stage == answers[i].stage) {
            // the last of a stage's questions answered: T off and on again reopens its feedback
            // (not the stage's first question's)
            reopened = true;
            wd_settle(d);
            wd_shot(d, shot_a);
            press(d, "T");
            wd_settle(d);
            press(d, "T");
            wd_settle(d);
            wd_shot(d, shot_b);
            if (!wd_same(d, shot_a, shot_b)) wd_fail(d, "T, T at %s did not reopen the feedback just read", d->stage);
        }
    }
    quit(d);
}

static void reopen_script(Driver *d)
{
    // N with every question answered, at a stage without a loop: its note in the study
    // box (the frame changes), no toast over the legend (issue 35)
    wd_settle(d);
    wd_shot(d, shot_a);
    press(d, "N");
    if (d->busy) wd_fail(d, "N at %s (no loop, nothing to show) put up a toast", d->stage);
    wd_shot(d, shot_b);
    if (wd_same(d, shot_a, shot_b)) wd_fail(d, "N at %s said nothing", d->stage);
    press(d, "O");
    press(d, "Escape");
    quit(d);
}

static void corrupt_script(Driver *d)
{
    wd_frames(d, 10);
    quit(d);
}

// progress.json: one lesson, with ANSWERED answers and RIGHT of them right
static void check_progress(const char *path, bool total)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *p = cJSON_Parse(buf);
    assert_non_null(p);
    cJSON *lessons = cJSON_GetObjectItem(p, "lessons");
    assert_int_equal(cJSON_GetArraySize(lessons), 1);
    cJSON *l = cJSON_GetArrayItem(lessons, 0);
    if (total) assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "total")), n_answers);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "answered")), n_answers);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "right")), n_answers);
    if (total) {
        cJSON *as = cJSON_GetObjectItem(l, "answers"), *a;
        assert_int_equal(cJSON_GetArraySize(as), n_answers);
        cJSON_ArrayForEach(a, as) assert_true(cJSON_IsTrue(cJSON_GetObjectItem(a, "right")));
    }
    cJSON_Delete(p);
}

static void test_study(void **state)
{
    (void)state;
    const char *L = "lessons/arange-2x4x4.json";
    read_answers(L);
    char progress[256];
    snprintf(progress, sizeof progress, "%s/attnviz/progress.json", getenv("XDG_DATA_HOME"));
    AppOptions o = options(L);
    o.study = true;
    assert_int_equal(wd_run("study", study_script, &o), 0);
    assert_int_equal(access(progress, R_OK), 0);
    check_progress(progress, true);
    // reopened: restored, nothing left to give up; the picker lists the lesson's score
    assert_int_equal(wd_run("study reopened", reopen_script, &o), 0);
    check_progress(progress, false);
    // a corrupt file: reported, set aside, its bytes kept
    const char *bad = "{\"attnviz_progress\": 1, \"lessons\": [";
    FILE *f = fopen(progress, "w");
    assert_non_null(f);
    fputs(bad, f);
    fclose(f);
    stdout_to_file();
    int fails = wd_run("study corrupt", corrupt_script, &o);
    stdout_back();
    assert_int_equal(fails, 0);
    assert_true(file_has(err_path, "progress.json: not valid JSON; set aside as"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cat %s.corrupt-* 2>/dev/null", progress);
    char *aside = output_of(cmd);
    assert_non_null(aside); // set aside
    assert_string_equal(aside, bad); // its bytes kept
    free(aside);
}

// ---- save -------------------------------------------------------------------------

static void save_script(Driver *d)
{
    wd_settle(d);
    for (int i = 0; i < 7; i++) wd_key(d, "Right"), wd_wait(d, 0.1);
    wd_settle(d);
    const char *st = saved(d);
    if (strcmp(st, "scores") != 0) wd_fail(d, "7 × → showed %s, expected scores", st);
    wd_key_mod(d, "Q", KMOD_CTRL); // (Esc never quits)
    wd_frames(d, 5);
}

static void test_save_matches_export(void **state)
{
    (void)state;
    if (system("command -v compare >/dev/null 2>&1") != 0) skip(); // ImageMagick
    AppOptions o = options("lessons/arange-2x4x4.json");
    assert_int_equal(wd_run("save", save_script, &o), 0);
    char cmd[2048], out[256] = "";
    snprintf(cmd, sizeof cmd, "env -u DISPLAY %s --export %s/cli --stage scores lessons/arange-2x4x4.json >/dev/null 2>&1",
             bin, save_dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "compare -metric AE -fuzz 2%% %s %s/cli/0000-scores.png null: 2>&1", saved_path, save_dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    if (!fgets(out, sizeof out, p)) out[0] = 0;
    pclose(p);
    print_message("window save vs export (scores): %s pixels differ by more than 2%%\n", out);
    char *end;
    double n = strtod(out, &end);
    assert_true(end != out);
    assert_true(n < 100);
}

// ---- set-up -----------------------------------------------------------------------

// everything in the save directory (saves, exports, the progress file) goes
static int remove_saves(void)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s/*", save_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    return remove_saves();
}

int main(int argc, char **argv)
{
    (void)argc;
    test_bin_path(bin, sizeof bin, argv[0]); // build/tests/test_window → build/attnviz
    // no X: SDL's offscreen driver (SDL_VIDEODRIVER as given wins, e.g. x11 to watch)
    setenv("SDL_VIDEODRIVER", "offscreen", 0);
    unsetenv("ATTNVIZ_TEST_CLOCK");
    snprintf(save_dir, sizeof save_dir, "/tmp/attnviz-window-XXXXXX");
    if (!mkdtemp(save_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("ATTNVIZ_SAVE_DIR", save_dir, 1);
    setenv("ATTNVIZ_ASSETS", "assets", 0); // the tests run from the top of the tree
    // the study mode's progress file: a directory of its own
    char data[128];
    snprintf(data, sizeof data, "%s/data", save_dir);
    setenv("XDG_DATA_HOME", data, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_keys, setup),
        cmocka_unit_test_setup(test_loop, setup),
        cmocka_unit_test_setup(test_compare, setup),
        cmocka_unit_test_setup(test_compare_menu, setup),
        cmocka_unit_test_setup(test_compare_text, setup),
        cmocka_unit_test_setup(test_layers, setup),
        cmocka_unit_test_setup(test_text, setup),
        cmocka_unit_test_setup(test_text_limits, setup),
        cmocka_unit_test_setup(test_generate, setup),
        cmocka_unit_test_setup(test_checkpoints, setup),
        cmocka_unit_test_setup(test_backward, setup),
        cmocka_unit_test_setup(test_backward_refused, setup),
        cmocka_unit_test_setup(test_projector_off, setup),
        cmocka_unit_test_setup(test_projector_parts, setup),
        cmocka_unit_test_setup(test_lab, setup),
        cmocka_unit_test_setup(test_quit, setup),
        cmocka_unit_test_setup(test_study, setup),
        cmocka_unit_test_setup(test_save_matches_export, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove_saves();
    rmdir(save_dir);
    return rc;
}
