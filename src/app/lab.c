// lab.c — the what-if lab in the window (see lab.h).
#include "lab.h"
#include "temp_file.h"
#include "user_dir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "i18n.h"
#include "scene.h"
#include "trace_ops.h"

#define SCRUB_THRESHOLD 3 // pixels of vertical movement before a press becomes a scrub

void lab_init(Lab *lab)
{
    memset(lab, 0, sizeof *lab);
}


static void stop_animation(Lab *lab)
{
    if (!lab->animating) return;
    trace_free(&lab->from);
    trace_free(&lab->mid);
    lab->animating = false;
    lab->gen++;
}

static void drop_delta(Lab *lab)
{
    if (!lab->have_delta) return;
    trace_free(&lab->dtrace);
    for (int l = 0; l < LESSON_MAX_LAYERS; l++) attn_weights_free(&lab->dweights[l]);
    lab->have_delta = false;
    lab->gen++;
}

void lab_deselect(Lab *lab)
{
    lab->sel = lab->typing = lab->press = lab->scrubbing = false;
}

void lab_forget(Lab *lab)
{
    stop_animation(lab);
    drop_delta(lab);
    lab_deselect(lab);
    lab->delta = false;
    lab->menu.open = false;
    lab->gen++;
}

void lab_free(Lab *lab)
{
    lab_forget(lab);
}

static void message(Lab *lab, Lang lang, bool error, const char *key, const char *arg)
{
    const char *args[] = {arg};
    i18n_fmt(lab->msg, sizeof lab->msg, lang, key, 1, args);
    lab->msg_error = error;
}

const char *lab_take_message(Lab *lab, bool *error)
{
    if (!lab->msg[0]) return NULL;
    static char out[LAB_MSG_MAX];
    snprintf(out, sizeof out, "%s", lab->msg);
    *error = lab->msg_error;
    lab->msg[0] = '\0';
    return out;
}

// ---- what is drawn ------------------------------------------------------------------

const Trace *lab_trace(const Lab *lab, const Session *s)
{
    if (lab->delta && lab->have_delta) return &lab->dtrace;
    if (lab->animating) return &lab->mid;
    return &s->trace;
}

void lab_view(const Lab *lab, const Session *s, View *v)
{
    v->edited = session_edited(s);
    v->n_edits = s->log.applied;
    v->delta = lab->delta && lab->have_delta;
    v->ref = v->edited && !v->delta ? session_original_trace(s) : NULL;
}

// Which tensor of its stage panel ps shows: 0 the stage's own, 1 its weight, 2 its bias.
static int panel_param(const PanelSpec *ps) { return ps->is_weight ? (ps->is_bias ? 2 : 1) : 0; }

// The panel of L (laid out from trace tr) showing the selection, or -1.
static int sel_panel(const Lab *lab, const Trace *tr, const Layout *L)
{
    if (!lab->sel) return -1;
    for (int p = 0; p < L->n_panels; p++) {
        const PanelSpec *ps = &L->spec[p];
        if (ps->stage >= 0 && ps->stage < tr->n && tr->stages[ps->stage].id == lab->sel_stage &&
            panel_param(ps) == lab->sel_param && ps->head == lab->sel_head && lab->sel_row < ps->rows &&
            lab->sel_col < ps->cols)
            return p;
    }
    return -1;
}

void lab_overlays(Lab *lab, const Session *s, const Layout *L, const View *v, Overlays *ov)
{
    int p = sel_panel(lab, lab_trace(lab, s), L);
    ov->sel = p >= 0;
    ov->sel_panel = p, ov->sel_row = lab->sel_row, ov->sel_col = lab->sel_col;
    ov->edit_label = lab->typing ? lab->label : NULL;
    ov->edit_text = lab->text;
    ov->edit_hint = lab->typing ? lab->hint : NULL;
    ov->edit_error = lab->hint_error;
    labmenu_fill(&lab->menu, &s->trace, lab->delta, s->has_original && s->log.applied > 0,
                 s->has_original && s->log.applied < s->log.n, v->lang);
    ov->lab = &lab->menu;
}

bool lab_take_edit_start(Lab *lab)
{
    bool started = lab->edit_started;
    lab->edit_started = false;
    return started;
}

bool lab_update(Lab *lab, const Session *s, float p)
{
    if (!lab->animating) return false;
    if (p >= 1.0f) {
        stop_animation(lab);
        return false;
    }
    float e = p * p * (3.0f - 2.0f * p); // smoothstep
    trace_lerp(&lab->mid, &lab->from, &s->trace, e);
    lab->gen++;
    return true;
}

// ---- edits ----------------------------------------------------------------------------

// After the session's trace changed: the Δ trace anew, the animation from `before`
// (moved in; freed here) unless animate is false.
static void after_change(Lab *lab, const Session *s, Trace *before, bool animate)
{
    stop_animation(lab);
    if (animate && trace_clone(&lab->mid, &s->trace)) {
        lab->from = *before;
        lab->animating = true;
        lab->edit_started = true; // the window starts the playback's edit clock
        trace_lerp(&lab->mid, &lab->from, &s->trace, 0.0f);
    } else {
        trace_free(before);
    }
    drop_delta(lab);
    if (lab->delta) lab->have_delta = session_delta(s, &lab->dtrace, lab->dweights);
    lab->gen++;
}

static bool apply(Lab *lab, Session *s, const Edit *e, bool merge, bool animate, Lang lang)
{
    char err[EDIT_ERR_MAX + 200];
    Trace before;
    if (edit_is_noop(&s->lesson, e)) return true;
    if (lab->before_edit) lab->before_edit(lab->ctx);
    if (!session_edit(s, e, merge, &before, err, sizeof err)) {
        message(lab, lang, true, "app.edit_refused", err);
        return false;
    }
    after_change(lab, s, &before, animate); // the badge and the marks say what changed: no toast
    return true;
}

// The typed number as the target's new value, applied; a refusal stays in the hint line
// (and typing goes on).
static bool apply_typed(Lab *lab, Session *s, const char *text, Lang lang)
{
    char err[EDIT_ERR_MAX];
    Edit e = lab->target;
    if (!edit_value(&s->lesson, &e, text, err, sizeof err)) {
        snprintf(lab->hint, sizeof lab->hint, "%s", err);
        lab->hint_error = true;
        return false;
    }
    if (!apply(lab, s, &e, false, true, lang)) {
        snprintf(lab->hint, sizeof lab->hint, "%s", lab->msg);
        lab->msg[0] = '\0';
        lab->hint_error = true;
        return false;
    }
    return true;
}

static bool history(Lab *lab, Session *s, int which, Lang lang)
{
    char err[EDIT_ERR_MAX + 200];
    Trace before;
    const char *what = NULL;
    bool ok;
    bool can = s->has_original && (which > 0 ? s->log.applied < s->log.n : s->log.applied > 0);
    if (can && lab->before_edit) lab->before_edit(lab->ctx);
    if (which < 0) {
        what = s->log.applied > 0 ? s->log.items[s->log.applied - 1].text : NULL;
        ok = session_undo(s, &before, err, sizeof err);
    } else if (which > 0) {
        what = s->log.applied < s->log.n ? s->log.items[s->log.applied].text : NULL;
        ok = session_redo(s, &before, err, sizeof err);
    } else {
        ok = session_reset(s, &before, err, sizeof err);
    }
    if (!ok) {
        if (err[0]) message(lab, lang, true, "app.edit_refused", err);
        else message(lab, lang, false, which > 0 ? "app.nothing_to_redo" : "app.nothing_to_undo", NULL);
        return false;
    }
    char keep[EDIT_TEXT_MAX];
    snprintf(keep, sizeof keep, "%s", what ? what : "");
    after_change(lab, s, &before, true);
    if (which == 0) message(lab, lang, false, "app.reset", NULL);
    else message(lab, lang, false, which < 0 ? "app.undone" : "app.redone", keep);
    return true;
}

static void set_delta(Lab *lab, const Session *s, bool on, Lang lang)
{
    lab->delta = on;
    drop_delta(lab);
    if (on) lab->have_delta = session_delta(s, &lab->dtrace, lab->dweights);
    lab_deselect(lab);
    message(lab, lang, false, on ? "app.delta_on" : "app.delta_off", NULL);
    lab->gen++;
}

// ---- the selection ------------------------------------------------------------------

static bool target_of(const Lab *lab, const Session *s, const Layout *L, const View *v, int *t, size_t *idx)
{
    int p = sel_panel(lab, lab_trace(lab, s), L);
    return p >= 0 && scene_edit_target(L, lab_trace(lab, s), v, p, lab->sel_row, lab->sel_col, t, idx);
}

// The hint under a selected cell: how to change it.
static void select_cell(Lab *lab, const Session *s, const Layout *L, const View *v, int p, int row, int col)
{
    const PanelSpec *ps = &L->spec[p];
    StageId id = lab_trace(lab, s)->stages[ps->stage].id;
    bool moved = lab->sel && lab->sel_stage == id && lab->sel_param == panel_param(ps);
    lab->sel = true;
    lab->typing = false;
    lab->sel_stage = id, lab->sel_param = panel_param(ps);
    lab->sel_head = ps->head, lab->sel_row = row, lab->sel_col = col;
    int t;
    size_t idx;
    bool mask = target_of(lab, s, L, v, &t, &idx) && t == LT_MASK;
    snprintf(lab->hint, sizeof lab->hint, "%s", i18n_get(v->lang, mask ? "lab.mask_hint" : "lab.cell_hint"));
    lab->hint_error = false;
    if (!moved) message(lab, v->lang, false, "app.edited", lab->hint); // how to change it, once per panel
}

static float current_value(Session *s, int t, size_t idx)
{
    if (t == LT_MASK && s->lesson.in.mask_kind == MASK_NONE) return 1.0f; // no mask: every key attended
    const Tensor *tt = lesson_tensor(&s->lesson, t);
    return tensor_present(tt) && idx < tt->size ? tt->data[idx] : 0.0f;
}

static void toggle_mask(Lab *lab, Session *s, size_t idx, Lang lang)
{
    Edit e;
    edit_element(&s->lesson, LT_MASK, idx, current_value(s, LT_MASK, idx) == 0.0f ? 1.0f : 0.0f, &e);
    apply(lab, s, &e, false, true, lang);
}

static void start_typing(Lab *lab, Session *s, const Edit *target, const char *first, Lang lang, float now)
{
    lab->typing = true;
    lab->target = *target;
    char key[EDIT_TEXT_MAX];
    edit_key(target, key, sizeof key);
    snprintf(lab->label, sizeof lab->label, "%s =", key);
    snprintf(lab->text, sizeof lab->text, "%s", first ? first : "");
    lab->too_long = false;
    char num[40];
    snprintf(num, sizeof num, "%.6g", (double)now);
    snprintf(lab->hint, sizeof lab->hint, "%s   (%s)", i18n_get(lang, "lab.typing_hint"), num);
    lab->hint_error = false;
    (void)s;
}

// Starts typing into the selected cell.
static bool type_into_selection(Lab *lab, Session *s, const Layout *L, const View *v, const char *first)
{
    int t;
    size_t idx;
    if (!target_of(lab, s, L, v, &t, &idx)) {
        message(lab, v->lang, false, "app.not_editable", NULL);
        return false;
    }
    if (t == LT_MASK) { // a mask cell is 0 or 1: toggled, not typed
        toggle_mask(lab, s, idx, v->lang);
        return true;
    }
    Edit e;
    edit_element(&s->lesson, t, idx, 0.0f, &e);
    start_typing(lab, s, &e, first, v->lang, current_value(s, t, idx));
    return true;
}

// The first editable cell of the frame (Enter with nothing selected: from = -1), or
// of the next editable panel after panel `from` in direction dir (Tab, Shift+Tab).
static bool select_editable(Lab *lab, const Session *s, const Layout *L, const View *v, int from, int dir)
{
    for (int k = 1; k <= L->n_panels; k++) {
        int p = from < 0 ? k - 1 : ((from + dir * k) % L->n_panels + L->n_panels) % L->n_panels;
        int t;
        size_t idx;
        if (scene_edit_target(L, lab_trace(lab, s), v, p, 0, 0, &t, &idx)) {
            select_cell(lab, s, L, v, p, 0, 0);
            return true;
        }
    }
    return false;
}

static bool is_digit_key(SDL_Keycode k, char *c)
{
    if (k >= SDLK_0 && k <= SDLK_9) return *c = (char)('0' + (k - SDLK_0)), true;
    if (k >= SDLK_KP_1 && k <= SDLK_KP_9) return *c = (char)('1' + (k - SDLK_KP_1)), true;
    if (k == SDLK_KP_0) return *c = '0', true;
    if (k == SDLK_PERIOD || k == SDLK_KP_PERIOD) return *c = '.', true;
    if (k == SDLK_MINUS || k == SDLK_KP_MINUS) return *c = '-', true;
    return false;
}

// Keys while a value is typed: characters of a number, Backspace, Enter, Esc.
static bool typing_key(Lab *lab, Session *s, const View *v, const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    size_t n = strlen(lab->text);
    char c;
    // the characters of a number arrive as text (lab_text: any keyboard layout); the
    // keys that type them are taken here so that they do nothing else
    if (is_digit_key(sym, &c) || sym == SDLK_e || sym == SDLK_PLUS || sym == SDLK_KP_PLUS || sym == SDLK_EQUALS)
        return true;
    switch (sym) {
    case SDLK_BACKSPACE:
        if (n > 0) lab->text[n - 1] = '\0';
        if (lab->too_long) { // the field shows again what Enter applies
            lab->too_long = false;
            snprintf(lab->hint, sizeof lab->hint, "%s", i18n_get(v->lang, "lab.typing_hint"));
            lab->hint_error = false;
        }
        return true;
    case SDLK_RETURN:
    case SDLK_KP_ENTER:
        if (lab->too_long) return true; // the hint says why: a cut number is never applied
        if (apply_typed(lab, s, lab->text, v->lang)) {
            // applied: the field closes and the cell is let go, so digits choose steps
            // again (4, 6, 9 typed "469" into the field); Enter or a click selects again
            lab_deselect(lab);
            snprintf(lab->hint, sizeof lab->hint, "%s", i18n_get(v->lang, "lab.cell_hint"));
        }
        return true;
    case SDLK_ESCAPE:
        lab->typing = false;
        snprintf(lab->hint, sizeof lab->hint, "%s", i18n_get(v->lang, "lab.cell_hint"));
        lab->hint_error = false;
        return true;
    case SDLK_LSHIFT:
    case SDLK_RSHIFT:
    case SDLK_LCTRL:
    case SDLK_RCTRL: return true;
    default: // any other key leaves the field unapplied and does what it always does
        lab->typing = false;
        lab->hint_error = false;
        return false;
    }
}

bool lab_text(Lab *lab, Session *s, const Layout *L, const View *v, const char *text)
{
    if (lab->menu.open) return true;
    bool number = text[0] && !text[1] && strchr("0123456789.-+eE", text[0]);
    if (lab->typing) {
        size_t n = strlen(lab->text);
        if (number && n + 1 < sizeof lab->text) {
            lab->text[n] = text[0], lab->text[n + 1] = '\0';
        } else if (number) { // no room: said, and Enter refuses until Backspace
            lab->too_long = true;
            char most[16];
            snprintf(most, sizeof most, "%zu", sizeof lab->text - 1);
            const char *args[] = {most};
            i18n_fmt(lab->hint, sizeof lab->hint, v->lang, "lab.too_long", 1, args);
            lab->hint_error = true;
            return true;
        }
        if (!lab->too_long) lab->hint_error = false;
        return true;
    }
    if (!number || text[0] == 'e' || text[0] == 'E' || sel_panel(lab, lab_trace(lab, s), L) < 0) return false;
    return type_into_selection(lab, s, L, v, text) || true;
}

// The switches: (row, col) chosen with Enter or a click.
static void menu_choose(Lab *lab, Session *s, const View *v, int row, int col)
{
    const LabMenu *m = &lab->menu;
    // (row, col): the menu's cursor, kept from a lesson whose rows had more options, or a
    // switch this lesson greys out
    if (row < 0 || row >= LAB_ROWS || col < 0 || col >= m->n_opts[row] || !m->enabled[row][col]) return;
    Lang lang = v->lang;
    const char *arg = NULL;
    switch (row) {
    case LAB_ROW_SCALE:
        if (col == LAB_SCALE_CUSTOM) {
            lab->menu.open = false;
            lab->sel = false;
            Edit e;
            edit_scale(&s->lesson, s->lesson.cfg.scale, &e);
            start_typing(lab, s, &e, NULL, lang, s->lesson.cfg.scale);
            return;
        }
        arg = col == LAB_SCALE_SQRT ? "model.scale=sqrt_dk" : "model.scale=1";
        break;
    case LAB_ROW_FILL:
        arg = col == LAB_FILL_1E9 ? "model.mask_fill=-1e9" : col == LAB_FILL_1E10 ? "model.mask_fill=-1e10"
                                                                               : "model.mask_fill=-inf";
        break;
    case LAB_ROW_MASK:
        arg = col == LAB_MASK_NONE ? "mask=none" : col == LAB_MASK_CAUSAL ? "mask=causal" : "mask=key_padding";
        break;
    case LAB_ROW_SHOW: set_delta(lab, s, col == LAB_SHOW_DELTA, lang); return;
    case LAB_ROW_ACTIONS:
        if (col == LAB_ACT_SAVE) {
            lab->menu.open = false;
            lab->save_requested = true; // the window saves (it knows where)
            return;
        }
        history(lab, s, col == LAB_ACT_UNDO ? -1 : col == LAB_ACT_REDO ? 1 : 0, lang);
        return;
    default: return;
    }
    lab_apply_text(lab, s, arg, lang);
}

bool lab_apply_text(Lab *lab, Session *s, const char *arg, Lang lang)
{
    Edit e;
    char err[EDIT_ERR_MAX];
    if (!edit_parse(&s->lesson, arg, &e, err, sizeof err)) {
        message(lab, lang, true, "app.edit_refused", err);
        return false;
    }
    if (edit_is_noop(&s->lesson, &e)) return true;
    return apply(lab, s, &e, false, true, lang);
}

bool lab_key(Lab *lab, Session *s, const Layout *L, const View *v, const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    bool ctrl = (k->keysym.mod & KMOD_CTRL) != 0, shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    if (lab->typing && typing_key(lab, s, v, k)) return true;
    if (ctrl) {
        switch (sym) {
        case SDLK_z: history(lab, s, shift ? 1 : -1, v->lang); return true;
        case SDLK_y: history(lab, s, 1, v->lang); return true;
        case SDLK_r: history(lab, s, 0, v->lang); return true;
        case SDLK_s: lab->save_requested = true; return true;
        default: return false;
        }
    }
    if (lab->menu.open) {
        switch (sym) {
        case SDLK_ESCAPE:
        case SDLK_w: lab->menu.open = false; return true;
        case SDLK_UP: labmenu_move(&lab->menu, 0, -1); return true;
        case SDLK_DOWN: labmenu_move(&lab->menu, 0, 1); return true;
        case SDLK_LEFT: labmenu_move(&lab->menu, -1, 0); return true;
        case SDLK_RIGHT:
        case SDLK_TAB: labmenu_move(&lab->menu, 1, 0); return true;
        case SDLK_RETURN:
        case SDLK_KP_ENTER:
        case SDLK_SPACE: menu_choose(lab, s, v, lab->menu.row, lab->menu.col); return true;
        default: return true; // the switches have the keyboard while open
        }
    }
    if (sym == SDLK_w) {
        lab->menu.open = true;
        lab_deselect(lab);
        return true;
    }
    if (sym == SDLK_d && !shift) { // (Shift+D: the compare menu)
        set_delta(lab, s, !lab->delta, v->lang);
        return true;
    }
    int p = sel_panel(lab, lab_trace(lab, s), L);
    if (p < 0) {
        lab->sel = false;
        if ((sym == SDLK_RETURN || sym == SDLK_KP_ENTER) && !v->delta) {
            if (!select_editable(lab, s, L, v, -1, 1)) message(lab, v->lang, false, "app.not_editable", NULL);
            return true;
        }
        return false;
    }
    const PanelSpec *ps = &L->spec[p];
    char c;
    switch (sym) {
    case SDLK_ESCAPE: lab_deselect(lab); return true;
    case SDLK_UP: lab->sel_row = lab->sel_row > 0 ? lab->sel_row - 1 : 0; break;
    case SDLK_DOWN: lab->sel_row = lab->sel_row + 1 < ps->rows ? lab->sel_row + 1 : ps->rows - 1; break;
    case SDLK_LEFT: lab->sel_col = lab->sel_col > 0 ? lab->sel_col - 1 : 0; break;
    case SDLK_RIGHT: lab->sel_col = lab->sel_col + 1 < ps->cols ? lab->sel_col + 1 : ps->cols - 1; break;
    case SDLK_TAB: select_editable(lab, s, L, v, p, shift ? -1 : 1); return true;
    case SDLK_RETURN:
    case SDLK_KP_ENTER: type_into_selection(lab, s, L, v, NULL); return true;
    case SDLK_SPACE: {
        int t;
        size_t idx;
        if (target_of(lab, s, L, v, &t, &idx) && t == LT_MASK) {
            toggle_mask(lab, s, idx, v->lang);
            return true;
        }
        return false; // Space on other cells: the next stage, as always
    }
    default:
        // a digit starts typing into the cell: its character comes as text (lab_text)
        return is_digit_key(sym, &c) || sym == SDLK_PLUS || sym == SDLK_KP_PLUS;
    }
    select_cell(lab, s, L, v, p, lab->sel_row, lab->sel_col); // the hint for the new cell
    return true;
}

bool lab_press(Lab *lab, Session *s, const Layout *L, const View *v, int x, int y, bool shift)
{
    Rect b;
    if (lab->menu.open) {
        LabMenuLayout ml;
        labmenu_layout(&lab->menu, L, &ml);
        int row, col;
        if (labmenu_hit(&lab->menu, &ml, x, y, &row, &col)) {
            lab->menu.row = row, lab->menu.col = col;
            menu_choose(lab, s, v, row, col);
        } else if (!rect_contains(ml.box, x, y)) {
            lab->menu.open = false;
        }
        return true;
    }
    if (lab_button_rect(L, &b) && rect_contains(b, x, y)) {
        lab->menu.open = true;
        lab_deselect(lab);
        return true;
    }
    int p, row, col;
    if (!layout_hit_cell(L, x, y, &p, &row, &col)) {
        lab_deselect(lab); // a click elsewhere leaves typing and the selection
        return false;
    }
    int t;
    size_t idx;
    if (!scene_edit_target(L, lab_trace(lab, s), v, p, row, col, &t, &idx)) {
        lab_deselect(lab);
        return false;
    }
    select_cell(lab, s, L, v, p, row, col);
    if (t == LT_MASK) {
        toggle_mask(lab, s, idx, v->lang);
        return true;
    }
    if (v->zoom > 1.0f) return false; // zoomed: a drag pans (the window's), typing still edits
    // a press that may become a scrub: a hundredth of the panel's colour range per pixel
    lab->press = true;
    lab->scrubbing = false;
    lab->press_y = y;
    lab->tensor = t, lab->index = idx;
    lab->press_value = current_value(s, t, idx);
    float range = fmaxf(fabsf(L->spec[p].scale.hi), fabsf(L->spec[p].scale.lo));
    lab->step = fmaxf(range, 1e-3f) / 100.0f;
    (void)shift;
    return true;
}

void lab_drag(Lab *lab, Session *s, int y, bool shift, Lang lang)
{
    if (!lab->press) return;
    int dy = lab->press_y - y; // up: larger
    if (!lab->scrubbing && abs(dy) < SCRUB_THRESHOLD) return;
    float value = lab->press_value + (float)dy * lab->step * (shift ? 0.1f : 1.0f);
    // a few significant digits: what a student reads is what the lesson holds
    char num[32];
    snprintf(num, sizeof num, "%.4g", (double)value);
    value = strtof(num, NULL);
    Edit e;
    edit_element(&s->lesson, lab->tensor, lab->index, value, &e);
    if (edit_is_noop(&s->lesson, &e)) return;
    // one undo step for the whole drag, no animation; a refusal is said (the toast)
    if (apply(lab, s, &e, lab->scrubbing, false, lang)) lab->scrubbing = true;
}

void lab_release(Lab *lab)
{
    lab->press = lab->scrubbing = false;
}

// ---- saving ---------------------------------------------------------------------------

void lab_save_dir(char *out, size_t n)
{
    const char *d = getenv("ATTNVIZ_SAVE_DIR");
    if (d && *d) {
        snprintf(out, n, "%s", d);
        return;
    }
    user_data_path("lessons", out, n); // (none: out empty, lab_save says so)
}

bool lab_save(Lab *lab, Session *s, const char *dir, char *out, size_t n)
{
    (void)lab;
    char name[80];
    session_file_stem(s, name, sizeof name);
    // "x-edited-2.json" saved again is "x-edited-3.json", not "x-edited-2-edited-1.json"
    char *ed = strstr(name, "-edited-");
    while (ed && strstr(ed + 1, "-edited-")) ed = strstr(ed + 1, "-edited-");
    if (ed && ed[8] && strspn(ed + 8, "0123456789") == strlen(ed + 8)) *ed = '\0';
    if (!name[0]) snprintf(name, sizeof name, "lesson");
    char err[LESSON_ERR_MAX + 200];
    if (!dir[0]) {
        snprintf(out, n, "no folder to save in: set XDG_DATA_HOME or HOME to an absolute path (or ATTNVIZ_SAVE_DIR)");
        return false;
    }
    if (!temp_file_make_dirs(dir)) {
        snprintf(out, n, "%s: cannot create the folder: %s", dir, strerror(errno));
        return false;
    }
    if (strlen(dir) > 900) {
        snprintf(out, n, "%.200s...: the folder's name is too long", dir);
        return false;
    }
    for (int i = 1; i < 10000; i++) {
        snprintf(out, n, "%s/%s-edited-%d.json", dir, name, i);
        if (access(out, F_OK) == 0) continue;
        if (session_save(s, out, false, err, sizeof err)) return true; // never over a file
        if (errno == EEXIST) continue;                                  // taken meanwhile
        snprintf(out, n, "%s", err);
        return false;
    }
    snprintf(out, n, "%s: no free name for %s-edited-N.json", dir, name);
    return false;
}
