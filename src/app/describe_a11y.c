// describe_a11y.c — the frame on screen for assistive technology (describe_a11y.h):
// what the page's accessible layer beside its canvas is generated from. The texts are --describe's (describe.c: the formula, narration and alt text of the same
// Layout), the cells are written as the screen writes them (render.c's rules: the
// panel's decimals, the masked cells' text, nothing of a result the study mode hides)
// and the pointed cell's text is its tooltip's (explain_cell).
#include "describe_a11y.h"

#include <stdio.h>

#include "cellmark.h"
#include "cursor.h"
#include "explain.h"
#include "frame.h"
#include "json_out.h"
#include "render.h"
#include "scene.h"
#include "study.h"
#include "viewkind.h"

#define A11Y_MAX_CELLS 64 // rows and columns written of a panel (its caption says how many it has)

// Cell (r, c) of panel p as the screen writes it; a hidden result "?", a cell with no
// number drawn (numbers off, too small): the tooltip's number.
static const char *cell_text(const Layout *L, const Frame *F, const View *v, int p, int r, int c, char *buf, size_t n)
{
    const PanelSpec *ps = &L->spec[p];
    if (cellmark_hidden(v, ps)) return "?";
    if (render_cell_look(ps, r, c) == CELL_MASKED && ps->mask != ps->data) return F->mask_text;
    const float x = panel_value(ps, r, c);
    if (ps->tokens) { // (the logit lens: the cell writes its token, its number is the colour)
        const char *t = lesson_vocab_label(v->lesson, ps->tokens[(size_t)r * (size_t)ps->rs + (size_t)c * (size_t)ps->cs]);
        char p2[32];
        tip_number(x, p2, sizeof p2);
        snprintf(buf, n, "%s (%s)", t ? t : "?", p2);
        return buf;
    }
    if (v->show_values && ps->decimals >= 0 && !L->image[p]) panel_format_cell(ps, x, buf, n);
    else tip_number(x, buf, n);
    return buf;
}

static void write_labels(FILE *f, const View *v, AxisKind a, int n)
{
    char buf[32];
    fputc('[', f);
    for (int i = 0; i < n && i < A11Y_MAX_CELLS; i++) {
        if (i) fputs(", ", f);
        json_write_string(f, panel_axis_label(v, a, i, buf, sizeof buf));
    }
    fputc(']', f);
}

static void write_panel(FILE *f, const Layout *L, const Frame *F, const View *v, int p)
{
    const PanelSpec *ps = &L->spec[p];
    char num[48];
    fputs("{\"title\": ", f);
    json_write_string(f, ps->title);
    fprintf(f, ", \"shape\": [%d, %d], \"result\": %s, \"hidden\": %s, \"rows\": ", ps->rows, ps->cols,
            ps->result ? "true" : "false", cellmark_hidden(v, ps) ? "true" : "false");
    write_labels(f, v, ps->row_axis, ps->rows);
    fputs(", \"cols\": ", f);
    write_labels(f, v, ps->col_axis, ps->cols);
    fputs(", \"cells\": [", f);
    for (int r = 0; r < ps->rows && r < A11Y_MAX_CELLS; r++) {
        fputs(r ? ", [" : "[", f);
        for (int c = 0; c < ps->cols && c < A11Y_MAX_CELLS; c++) {
            if (c) fputs(", ", f);
            json_write_string(f, cell_text(L, F, v, p, r, c, num, sizeof num));
        }
        fputc(']', f);
    }
    fputs("]}", f);
}

// The pointed cell: where it is, its labels, its value as shown and its tooltip's text.
static void write_pointed(FILE *f, const Layout *L, const Frame *F, const Trace *tr, const View *v,
                          const AppStatus *st)
{
    Overlays ov = {0};
    ov.hover = st->hover, ov.mouse_x = st->mouse_x, ov.mouse_y = st->mouse_y;
    ov.cursor = st->cursor, ov.cursor_panel = st->cursor_panel, ov.cursor_row = st->cursor_row;
    ov.cursor_col = st->cursor_col;
    int p, r, c;
    fputs(", \"pointed\": ", f);
    if (st->help || !cursor_pointed_cell(L, &ov, &p, &r, &c)) {
        fputs("null", f);
        return;
    }
    const PanelSpec *ps = &L->spec[p];
    char num[48], rl[32], cl[32], tip[1024];
    fprintf(f, "{\"cursor\": %s, \"panel\": %d, \"row\": %d, \"col\": %d, \"title\": ", st->cursor ? "true" : "false",
            p, r, c);
    json_write_string(f, ps->title);
    fputs(", \"row_label\": ", f);
    json_write_string(f, panel_axis_label(v, ps->row_axis, r, rl, sizeof rl));
    fputs(", \"col_label\": ", f);
    json_write_string(f, panel_axis_label(v, ps->col_axis, c, cl, sizeof cl));
    fputs(", \"value\": ", f);
    json_write_string(f, cell_text(L, F, v, p, r, c, num, sizeof num));
    tip[0] = '\0'; // (a hidden result: nothing of it, as the window shows no tooltip)
    if (!cellmark_hidden(v, ps)) explain_cell(tr, v, L, p, r, c, tip, sizeof tip);
    fputs(", \"derivation\": ", f);
    json_write_string(f, tip);
    fputc('}', f);
}

void describe_a11y_write(App *a, FILE *f)
{
    const AppStatus st = app_status(a);
    const Trace *tr = st.shown;
    const View *v = st.view;
    const Layout *L = st.layout;
    static Frame F; // (large: the derivation strip's lines)
    frame_prepare(&F, L, tr, v, NULL);
    char alt[2048];
    const ViewKindInfo *vk = viewkind_of(v->kind);
    (vk->alt ? vk->alt : scene_alt)(L, tr, v, alt, sizeof alt);
    fprintf(f, "{\"lang\": \"%s\", \"stage\": \"%s\", \"index\": %d, \"stages\": %d, \"title\": ",
            v->lang == LANG_ZH ? "zh" : "en", tr->stages[v->stage].name, v->stage, tr->n);
    json_write_string(f, vk->panels ? F.title : L->title);
    fputs(", \"formula\": ", f);
    json_write_string(f, L->formula);
    fputs(", \"note\": ", f);
    json_write_string(f, L->formula_note);
    fputs(", \"narration\": ", f);
    json_write_string(f, F.narration);
    fputs(", \"alt\": ", f);
    json_write_string(f, alt);
    const Study *sd = st.study;
    fputs(", \"question\": ", f);
    if (sd->on && study_asking(sd)) json_write_string(f, sd->q[sd->focus].question);
    else fputs("null", f);
    fprintf(f, ", \"toast\": ");
    json_write_string(f, st.toast ? st.toast : "");
    fputs(", \"panels\": [", f);
    for (int p = 0; p < L->n_panels; p++) {
        if (p) fputs(", ", f);
        write_panel(f, L, &F, v, p);
    }
    fputc(']', f);
    write_pointed(f, L, &F, tr, v, &st);
    fputs("}\n", f);
}
