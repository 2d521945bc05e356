// frame.c — what the view hands draw for one frame (see frame.h).
#include "frame.h"

#include <stdio.h>

#include "cursor.h"
#include "i18n.h"
#include "scene.h"
#include "viewkind.h"

// The strip under the panels: the hovered result cell's (or the cell cursor's; once computed), else the one
// being computed (its lines appear as it is), else the settled frame's (scene_strip, the
// one every output writes).
static void prepare_derivation(Frame *F, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    F->has_deriv = false;
    if (v->kind != VIEW_PANELS || L->deriv.w <= 0 || L->result_panel < 0 || v->hide_result) return;
    const PanelSpec *res = &L->spec[L->result_panel];
    const AnimKind k = F->anim.kind;
    const float e = F->anim.e;
    const int row0 = scene_derivation_row(L, tr, v);
    int row = row0, col = 0, hp, hr, hc;
    float shown = 1.0f;
    if (cursor_pointed_cell(L, ov, &hp, &hr, &hc) && L->spec[hp].result &&
        anim_cell_shown(L, tr, v, hp, hr, hc)) { // (a row still to come is not written out ahead of time)
        row = hr, col = hc;
    } else if (e < 1.0f && anim_computing_cell(k, e, res, &row, &col)) {
        shown = anim_cell_progress(k, e, row, col < 0 ? 0 : col, res->rows, k == ANIM_CELLS ? res->cols : 1);
    } else if (e < 1.0f) {
        shown = e;
    }
    bool settled = e >= 1.0f && row == row0 && col == 0;
    F->has_deriv = settled ? scene_strip(L, tr, v, &F->deriv) : scene_derivation(L, tr, v, row, col, &F->deriv);
    F->deriv_shown = shown;
    for (int i = 0; F->has_deriv && i < F->deriv.n_lines; i++)
        for (int j = 0; j < F->deriv.line[i].n; j++)
            scene_derivation_text(&F->deriv, i, j, F->deriv_text[i][j], sizeof F->deriv_text[i][j]);
}

static void prepare_header(Frame *F, const Trace *tr, const View *v)
{
    const Stage *st = &tr->stages[v->stage];
    snprintf(F->title, sizeof F->title, "%d/%d  %s", v->stage + 1, tr->n,
             recipe_stage_text(tr, v->stage, "title", true, v->lang));
    snprintf(F->name, sizeof F->name, "%s", recipe_stage_text(tr, v->stage, "name", true, v->lang));
    const int o = st->operands[0];
    F->from_name[0] = '\0', F->from_stage = -1;
    if (o >= 0 && (F->anim.kind == ANIM_SPLIT || F->anim.kind == ANIM_CONCAT)) {
        F->from_stage = o;
        snprintf(F->from_name, sizeof F->from_name, "%s", recipe_stage_text(tr, o, "name", true, v->lang));
    }
}

static unsigned long long text_hash(unsigned long long hash, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) hash = (hash ^ *c) * 1099511628211ULL;
    return hash;
}

// The narration shown and the hash of every stage's (of the shown one's alone while training
// runs: every stage's text again, each frame, cost a frame of the model view ~5 %).
static void prepare_narration(Frame *F, const Trace *tr, const View *v, bool live)
{
    char buf[sizeof F->narration_buf];
    View each = *v;
    unsigned long long hash = 1469598103934665603ULL;
    int from, to;
    scene_narration_stages(tr, v, &from, &to);
    for (int st = from; st < to && !v->print && !live; st++) { // (printed: the page has no narration box)
        each.stage = st;
        hash = text_hash(hash, scene_narration(tr, &each, buf, sizeof buf));
    }
    F->narration = scene_narration(tr, v, F->narration_buf, sizeof F->narration_buf);
    F->narration_hash = live ? text_hash(hash, F->narration) : hash;
    F->narration_live = live;
    F->narration_from = from, F->narration_to = to;
}

void frame_prepare(Frame *F, const Layout *L, const Trace *tr, const View *v, const Overlays *ov)
{
    F->anim = anim_frame(tr, v);
    recipe_fill_text(recipe_masked_value(tr, v->stage), F->mask_text, sizeof F->mask_text);
    for (int i = 0; i < L->n_steps && i < STEP_COUNT; i++)
        scene_step_key(tr, L->step_id[i], F->step_key[i], sizeof F->step_key[i]);
    F->key_pad = recipe_key_padding_row(tr, v->batch, &F->n_keys);
    F->title[0] = F->name[0] = F->from_name[0] = F->narration_buf[0] = '\0';
    F->view_row[0] = F->view_back[0] = '\0';
    const char *row = viewkind_of(v->kind)->row_key;
    if (row) { // (an experiment: "Experiment: head ablation", "Esc or A: back to the stages")
        const char *args[] = {i18n_get(v->lang, row)};
        i18n_fmt(F->view_row, sizeof F->view_row, v->lang, "ui.exp_row", 1, args);
        snprintf(F->view_back, sizeof F->view_back, "%s", i18n_get(v->lang, "ui.exp_back"));
    }
    F->narration = F->narration_buf;
    F->narration_hash = 0, F->from_stage = -1, F->narration_live = false, F->narration_from = F->narration_to = 0;
    F->has_deriv = false;
    if (v->stage < 0 || v->stage >= tr->n) return;
    prepare_header(F, tr, v);
    prepare_narration(F, tr, v, ov && ov->live);
    prepare_derivation(F, L, tr, v, ov);
}
