// layout_chrome.c — the chrome's geometry at the top of a frame: the timeline (a slot per step,
// or on an experiment's frame one row that names the experiment) and the tabs (batch, head,
// layer) with the status right of them. (layout.c places the rest of the frame.)
#include "layout.h"
#include "layout_inner.h"

#include "i18n.h"
#include "scene.h"
#include "viewkind.h"

#include <math.h>
#include <stdio.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

// A step's "N Name" wider than its slot at the small size goes on two lines
// (chrome_draw_timeline; smaller, down to 12 px, until they fit above the dots): the
// timeline is then tall enough for both at 12 px and the dots under them.
static void timeline_fit_labels(Layout *L, const Trace *tr, const View *v, float s)
{
    int slot_w = L->timeline.w / imax(1, L->n_steps) - 2 - (int)lrintf(8 * s);
    for (int i = 0; i < L->n_steps; i++) {
        char key[40], label[120];
        snprintf(label, sizeof label, "%d %s", i + 1, i18n_get(v->lang, scene_step_key(tr, L->step_id[i], key, sizeof key)));
        if (layout_text_w(v, label, L->px_small) > slot_w)
            L->timeline.h = imax(L->timeline.h, 2 * (LAYOUT_MIN_TEXT_PX * 6 / 5) + (int)lrintf(12 * s) + 2);
    }
}

void layout_place_chrome(Layout *L, const Trace *tr, const View *v, int m, int gap)
{
    const float s = L->s;
    const int w = L->w;
    // An experiment's frame is no stage's: no step slots (its row names it: chrome_draw_timeline),
    // no head or layer tabs (it shows every head and layer), the batch tabs only where it reads one
    const bool experiment = viewkind_of(v->kind)->one_frame;
    const bool batch_tabs = !experiment || v->kind == VIEW_LENS || v->kind == VIEW_ATTRIBUTION;

    // timeline: one slot per step present in the trace
    L->timeline = (Rect){m, m, w - 2 * m, (int)(48 * s)};
    for (int st = 0; st < STEP_COUNT && !experiment; st++)
        if (trace_step_count(tr, trace_layer_at(tr, v->stage), (StepId)st) > 0) L->step_id[L->n_steps++] = (StepId)st;
    timeline_fit_labels(L, tr, v, s);
    for (int i = 0; i < L->n_steps; i++) {
        int x0 = L->timeline.x + L->timeline.w * i / L->n_steps;
        int x1 = L->timeline.x + L->timeline.w * (i + 1) / L->n_steps;
        L->step_rect[i] = (Rect){x0 + 1, L->timeline.y, x1 - x0 - 2, L->timeline.h};
    }

    // tabs: batch and head selectors, status on the right
    int ty = L->timeline.y + L->timeline.h + gap, th = (int)(36 * s);
    L->tabs = (Rect){m, ty, w - 2 * m, th};
    int tw = (int)(40 * s), lw = (int)(86 * s), x = m;
    L->batch_label = L->head_label = L->layer_label = (Rect){x, ty, 0, th};
    L->n_batch_tabs = batch_tabs ? imin(tr->batch > 0 ? tr->batch : 1, LAYOUT_MAX_TABS) : 0;
    if (L->n_batch_tabs) {
        L->batch_label = (Rect){x, ty, lw, th};
        x += lw;
        for (int i = 0; i < L->n_batch_tabs; i++, x += tw + 2) L->batch_tab[i] = (Rect){x, ty, tw, th};
        x += (int)(24 * s);
    }
    L->n_head_tabs = experiment ? 0 : imin(tr->n_heads > 0 ? tr->n_heads : 1, LAYOUT_MAX_TABS);
    if (L->n_head_tabs) {
        L->head_label = (Rect){x, ty, lw, th};
        x += lw;
        for (int i = 0; i < L->n_head_tabs; i++, x += tw + 2) L->head_tab[i] = (Rect){x, ty, tw, th};
    }
    // a model of several layers: a tab per layer, the one on screen lit
    L->n_layer_tabs = tr->n_layers > 1 && !experiment ? imin(tr->n_layers, LAYOUT_MAX_TABS) : 0;
    if (L->n_layer_tabs) {
        x += (int)(24 * s);
        L->layer_label = (Rect){x, ty, lw, th};
        x += lw;
        for (int i = 0; i < L->n_layer_tabs; i++, x += tw + 2) L->layer_tab[i] = (Rect){x, ty, tw, th};
    }
    x += (int)(16 * s);
    L->status = (Rect){x, ty, imax(0, w - m - x), th};
}
