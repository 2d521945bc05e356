// test_lab.c — the lab's input field, in-process (issue 27 item 6): a number longer
// than the field is never cut and applied as a different number: the field says it
// is too long and Enter refuses until Backspace makes what is shown what is applied.
// The study mode's answer box the same way.
#define _DEFAULT_SOURCE // mkdtemp, setenv
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/assets.h"
#include "app/lab.h"
#include "app/study_ui.h"
#include "i18n.h"

static SDL_KeyboardEvent key(SDL_Keycode sym)
{
    SDL_KeyboardEvent k;
    memset(&k, 0, sizeof k);
    k.type = SDL_KEYDOWN;
    k.keysym.sym = sym;
    return k;
}

// The strings loaded and the classic lesson open (session_destroy and i18n_free after).
static Session *open_classic(void)
{
    char assets[1100], err[1200];
    assert_true(assets_find(assets, sizeof assets, err, sizeof err));
    assert_true(i18n_load(assets, err, sizeof err));
    Session *s = session_open("lessons/arange-2x4x4.json", NULL, err, sizeof err);
    assert_non_null(s);
    return s;
}

static void test_long_number(void **state)
{
    (void)state;
    Session *s = open_classic();
    float scale = s->lesson.cfg.scale;
    static Lab lab;
    lab_init(&lab);
    View v;
    memset(&v, 0, sizeof v);
    v.lang = LANG_EN;
    Layout L;
    memset(&L, 0, sizeof L);
    lab.typing = true; // what choosing "model.scale → custom" starts
    edit_scale(&s->lesson, scale, &lab.target);
    const char *typed = "3.14159265358979323846264338327950288419716939937510e-3";
    assert_true(strlen(typed) >= sizeof lab.text);
    for (const char *c = typed; *c; c++) {
        char one[2] = {*c, 0};
        assert_true(lab_text(&lab, s, &L, &v, one));
    }
    assert_true(lab.too_long);
    assert_true(lab.hint_error);
    assert_non_null(strstr(lab.hint, "too long"));
    SDL_KeyboardEvent enter = key(SDLK_RETURN), back = key(SDLK_BACKSPACE);
    assert_true(lab_key(&lab, s, &L, &v, &enter));
    assert_true(s->lesson.cfg.scale == scale); // nothing applied (was 3.14159274: the e-3 cut off)
    assert_true(lab.typing);
    // Backspace: the field is what Enter applies again
    assert_true(lab_key(&lab, s, &L, &v, &back));
    assert_false(lab.too_long);
    snprintf(lab.text, sizeof lab.text, "0.5");
    assert_true(lab_key(&lab, s, &L, &v, &enter));
    assert_true(s->lesson.cfg.scale == 0.5f);
    assert_false(lab.typing);
    lab_free(&lab);
    session_destroy(s);
    i18n_free();
}

// After Enter applies a typed value the cell is let go: digits choose steps again
// (issue 22 item 8: 4, 6, 9 typed "469" into the field, and Esc twice was needed).
static void test_enter_lets_go(void **state)
{
    (void)state;
    Session *s = open_classic();
    static Lab lab;
    lab_init(&lab);
    View v;
    view_init(&v, &s->lesson, LANG_EN); // the input stage: x is editable
    static Layout L;
    layout_compute(&L, &s->trace, &v, 1280, 720);
    SDL_KeyboardEvent enter = key(SDLK_RETURN), five = key(SDLK_5), four = key(SDLK_4);
    assert_true(lab_key(&lab, s, &L, &v, &enter)); // selects the first editable cell
    assert_true(lab.sel && !lab.typing);
    assert_true(lab_key(&lab, s, &L, &v, &five)); // a digit types into it
    assert_true(lab_text(&lab, s, &L, &v, "5"));
    assert_true(lab.typing);
    assert_true(lab_key(&lab, s, &L, &v, &enter)); // applied
    assert_int_equal(s->log.applied, 1);
    assert_false(lab.typing);
    assert_false(lab.sel);
    // the next digit is the window's (a step), not the field's
    assert_false(lab_key(&lab, s, &L, &v, &four));
    assert_false(lab_text(&lab, s, &L, &v, "4"));
    assert_false(lab.typing);
    lab_free(&lab);
    session_destroy(s);
    i18n_free();
}

// The study mode's answer box likewise: an answer longer than the box is never cut
// and checked as another answer.
static void test_long_answer(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-lab-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("XDG_DATA_HOME", dir, 1); // (progress.json there, not in the real home)
    Session *s = open_classic();
    StudyUI *u = study_ui_create();
    assert_non_null(u);
    int stage = study_ui_begin(u, s, LANG_EN, 0);
    stage = study_frontier(&u->st, s->trace.n);
    study_enter(&u->st, stage);
    assert_true(study_asking(&u->st));
    int focus = u->st.focus;
    View v;
    memset(&v, 0, sizeof v);
    v.lang = LANG_EN;
    char answer[STUDY_TEXT_MAX + 20];
    memset(answer, '1', sizeof answer - 1);
    answer[sizeof answer - 1] = '\0';
    assert_true(study_ui_text(u, answer));
    assert_true(u->too_long);
    assert_non_null(strstr(u->st.note, "too long"));
    SDL_KeyboardEvent enter = key(SDLK_RETURN), back = key(SDLK_BACKSPACE);
    assert_true(study_ui_key(u, s, &enter, stage, &v));
    assert_false(u->st.a[focus].answered); // not checked as a cut answer
    assert_true(study_ui_key(u, s, &back, stage, &v));
    assert_false(u->too_long);
    study_ui_destroy(u);
    session_destroy(s);
    i18n_free();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_number),
        cmocka_unit_test(test_long_answer),
        cmocka_unit_test(test_enter_lets_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
