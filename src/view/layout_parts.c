// layout_parts.c — projector mode's parts: a stage too large for the projector's numbers
// shown in parts (its operands, then its result), and the operators sized with the numbers.
// (layout.c places the panels; these choose which of them a frame shows.)
#include "layout.h"
#include "layout_inner.h"
#include "scene.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }
static int even(float px) { return imax(8, 2 * (int)lrintf(px * 0.5f)); }

// Projector mode: the operators between the panels (· + = →) as large as the numbers
// beside them (a quarter larger), as far as their columns allow (the widest symbol is
// about 0.9 em); words ("/1.41 =") stay at body size.
void layout_scale_operators(Layout *L)
{
    int num = 0, room = INT32_MAX;
    for (int i = 0; i < L->n_panels; i++) {
        num = imax(num, L->spec[i].px_cell);
        if (i > 0 && L->spec[i].op[0] && strlen(L->spec[i].op) <= 3 && !L->spec[i].stacked) room = imin(room, L->op[i].w);
    }
    int want = even(1.25f * (float)num);
    if (room != INT32_MAX) want = imin(want, even((float)room / 0.9f - 1.0f));
    L->px_op = imax(L->px_op, want);
}

// Projector mode: whether every panel with numbers keeps them (not drawn as an image,
// numbers not dropped) at the projector's minimum size.
static bool numbers_fit(const Layout *L)
{
    for (int i = 0; i < L->n_panels; i++) {
        const PanelSpec *p = &L->spec[i];
        if (L->image[i] || p->decimals < 0) return false;
        if (p->px_cell < layout_number_floor(L)) return false; // (the fallback size)
        // and with the digits they have at the usual size: fewer decimals would shrink
        // what the numbers say (layout_fit_numbers drops them to make room)
        float m = p->mask ? fmaxf(p->num_max, 9.9f) : p->num_max;
        int want = p->mask == p->data ? 0 : m >= 1000.0f ? 0 : m >= 100.0f ? 1 : 2;
        if (p->decimals < want) return false;
    }
    return true;
}

// The operand columns of L (a panel and the vectors stacked under it), not the result.
static int operand_columns(const Layout *L)
{
    int n = 0;
    for (int i = 0; i < L->n_panels; i++)
        if (i != L->result_panel && !(L->spec[i].stacked && i > 0)) n++;
    return n;
}

// Keeps one part of L's panels, in their order: with `each`, part k < the number of
// operand columns is operand column k alone; without, part 0 is every operand. The
// last part is the result alone.
void layout_keep_part(Layout *L, int part, bool each)
{
    int n_ops = each ? operand_columns(L) : 1, n = 0, col = -1;
    bool result_part = part >= n_ops;
    for (int i = 0; i < L->n_panels; i++) {
        bool result = i == L->result_panel;
        if (!result && !(L->spec[i].stacked && i > 0)) col++;
        bool keep = result_part ? result : !result && (!each || col == part);
        if (keep) L->spec[n++] = L->spec[i];
    }
    L->n_panels = n;
    L->result_panel = result_part && n > 0 ? 0 : -1;
}

// Whether part `part` of L (keep_part) keeps its numbers at the projector's size.
static bool part_fits(const Layout *L, const Trace *tr, const View *v, Layout *trial, int part, bool each)
{
    *trial = *L;
    layout_keep_part(trial, part, each);
    layout_place_panels(trial, tr, v);
    return numbers_fit(trial);
}

// Projector mode, laid out with every panel: when their numbers do not all fit at the
// projector's size but the result's alone do, the stage is shown in parts rather than
// shrunk: the operands, then the result; or, when the operands do not fit together
// either, each operand, then the result. True when L now holds part View.part of them
// (L->n_parts; to be placed again).
bool layout_projector_split(Layout *L, const Trace *tr, const View *v)
{
    if (!v->show_values || numbers_fit(L) || L->result_panel < 0 || L->n_panels < 2) return false;
    Layout *trial = malloc(sizeof *trial);
    if (!trial) return false;
    int n_ops = operand_columns(L);
    bool fits = part_fits(L, tr, v, trial, 1, false); // the result alone
    bool each = fits && n_ops > 1 && !part_fits(L, tr, v, trial, 0, false);
    // one by one only where each operand keeps its numbers alone (a 16×16 weight at
    // 1024×768 does not: its part would be a numberless image between two with numbers)
    for (int k = 0; each && fits && k < n_ops; k++) fits = part_fits(L, tr, v, trial, k, true);
    if (fits && n_ops == 1) fits = part_fits(L, tr, v, trial, 0, false); // (every part: the operand too)
    free(trial);
    if (!fits) return false; // too large even alone: as without projector mode (images, zoom)
    L->n_parts = each ? n_ops + 1 : 2;
    L->part = v->part < 0 ? 0 : v->part >= L->n_parts ? L->n_parts - 1 : v->part;
    layout_keep_part(L, L->part, each);
    L->split = true;
    return true;
}

int layout_projector_parts(const Trace *tr, const View *v, int w, int h)
{
    if (!v->projector) return 1;
    Layout *L = malloc(sizeof *L);
    if (!L) return 1;
    layout_compute(L, tr, v, w, h);
    int n = L->split ? L->n_parts : 1;
    free(L);
    return n;
}

// ---- the strip's decimals on the panels it writes out ----------------------------

static void mark_strip_decimals(Layout *L, const Derivation *d)
{
    for (int i = 0; i < d->n_lines; i++) {
        int p = scene_strip_line_panel(L, d, i);
        if (p >= 0 && L->spec[p].strip_dec < d->line[i].dec) L->spec[p].strip_dec = d->line[i].dec;
    }
}

void layout_mark_strip_decimals(Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    if (!v->hide_result && scene_derivation(L, tr, v, scene_derivation_row(L, tr, v), 0, &d)) mark_strip_decimals(L, &d);
}

void layout_match_strip_decimals(Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    if (scene_strip(L, tr, v, &d)) mark_strip_decimals(L, &d);
    float ns = L->num_s;
    for (int p = 0; p < L->n_panels; p++) {
        PanelSpec *ps = &L->spec[p];
        if (L->image[p] || ps->decimals < 0 || ps->decimals >= ps->strip_dec) continue;
        int w = L->cell_wq[p] / LAYOUT_Q, h = L->cell_hq[p] / LAYOUT_Q;
        float m = ps->mask ? fmaxf(ps->num_max, 9.9f) : ps->num_max;
        int px = layout_number_px_at_least(m, ps->strip_dec, w, h, ns, L->num_fill, layout_number_floor(L));
        if (px > 0) ps->decimals = ps->strip_dec, ps->px_cell = ps->px_cell < px ? ps->px_cell : px;
    }
}
