// describe.c — frames as JSON (see describe.h).
#include "describe.h"

#include "expview.h"

#include "assets.h"
#include "cli.h"
#include "utf8.h"
#include "i18n.h"
#include "json_out.h"
#include "layout.h"
#include "presenter.h"
#include "scene.h"
#include "session.h"
#include "text.h"
#include "viewkind.h"

// The derivation strip the frame shows (scene_strip): its title, each line's label then
// its values as written, the panel each line writes out; shown false: the one it writes where it has room (a
// larger frame, a printed page), null: none.
static void describe_strip(FILE *f, const Layout *L, const Trace *tr, const View *v)
{
    Derivation d;
    bool shown = scene_strip(L, tr, v, &d);
    fputs(", \"strip\": ", f);
    if (!shown && (v->hide_result || !scene_derivation(L, tr, v, scene_derivation_row(L, tr, v), 0, &d))) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"shown\": %s, \"title\": ", shown ? "true" : "false");
    json_write_string(f, d.title);
    fputs(", \"lines\": [", f);
    for (int i = 0; i < d.n_lines; i++) {
        fputs(i ? ", [" : "[", f);
        json_write_string(f, d.line[i].label);
        for (int j = 0; j < d.line[i].n; j++) {
            char num[48];
            scene_derivation_text(&d, i, j, num, sizeof num);
            fputs(", ", f);
            json_write_string(f, num);
        }
        fputs("]", f);
    }
    fputs("], \"panels\": [", f); // the panel each line writes out (its index in "panels"), or -1
    for (int i = 0; i < d.n_lines; i++) fprintf(f, i ? ", %d" : "%d", scene_strip_line_panel(L, &d, i));
    fputs("]}", f);
}

void describe_frame_fields(FILE *f, const Trace *tr, const View *v, int w, int h)
{
    Layout L;
    layout_compute(&L, tr, v, w, h);
    const Stage *st = &tr->stages[v->stage];
    int step = 0;
    for (int i = 0; i < L.n_steps; i++)
        if (L.step_id[i] == st->step) step = i + 1;
    char buf[600], alt[2048];
    fprintf(f, "\"stage\": \"%s\", \"step\": %d, \"head\": %d, ", st->name, step, v->head);
    if (L.split) fprintf(f, "\"part\": %d, \"parts\": %d, ", L.part, L.n_parts); // projector mode: one part shown
    if (v->loop >= 0) fprintf(f, "\"loop\": %d, \"loop_steps\": %d, ", v->loop, recipe_loop_steps(tr, v->stage));
    fputs("\"formula\": ", f);
    json_write_string(f, L.formula);
    fputs(", \"note\": ", f);
    json_write_string(f, L.formula_note);
    fputs(", \"narration\": ", f);
    json_write_string(f, scene_narration(tr, v, buf, sizeof buf));
    const ViewKindInfo *vk = viewkind_of(v->kind); // (a glance: its own alt text and fields)
    (vk->alt ? vk->alt : scene_alt)(&L, tr, v, alt, sizeof alt);
    fputs(", \"alt\": ", f);
    json_write_string(f, alt);
    if (vk->describe) vk->describe(f, &L, tr, v);
    fputs(", \"panels\": [", f);
    for (int p = 0; p < L.n_panels; p++) {
        const PanelSpec *ps = &L.spec[p];
        const ScaleGroup *g = &L.group[ps->group];
        fputs(p ? ", {\"title\": " : "{\"title\": ", f);
        json_write_string(f, ps->title);
        fputs(", \"source\": ", f);
        json_write_string(f, ps->source);
        fprintf(f, ", \"shape\": [%d, %d], \"range\": [", ps->rows, ps->cols);
        json_write_float(f, g->scale.lo);
        fputs(", ", f);
        json_write_float(f, g->scale.hi);
        fprintf(f, "], \"scale\": \"%s\", \"scale_group\": %d, \"result\": %s, \"op\": ", scene_scale_name(g),
                ps->group, ps->result ? "true" : "false");
        json_write_string(f, ps->op);
        // the numbers in its cells: their font size in px and decimals (0 and -1: none drawn)
        bool numbers = v->show_values && !L.image[p] && ps->decimals >= 0 && ps->px_cell > 0;
        fprintf(f, ", \"number_px\": %d, \"decimals\": %d", numbers ? ps->px_cell : 0, numbers ? ps->decimals : -1);
        fputs(numbers && ps->bare_point ? ", \"bare_point\": true}" : "}", f); // ("−.03": layout.c)
    }
    fputs("]", f);
    describe_strip(f, &L, tr, v);
}

// The presenter window's frame of each stage at w×h (audience 1280×720): what it shows.
static int describe_presenter(const Session *ses, View *v, const char *font_path, int w, int h, FILE *out, FILE *err)
{
    const Trace *tr = &ses->trace;
    char msg[400], title[LESSON_MAX_TEXT + 64];
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    Presenter *p = r ? presenter_create_offscreen(r, font_path, v->lang, msg, sizeof msg) : NULL;
    if (!p) {
        cli_error(err, "attnviz: --describe --presenter: %s", r ? msg : SDL_GetError());
        if (r) SDL_DestroyRenderer(r);
        if (surf) SDL_FreeSurface(surf);
        return 1;
    }
    session_title(ses, v->lang, title, sizeof title);
    for (int s = 0; s < tr->n; s++) {
        v->stage = s, v->part = 0;
        PresenterFrame f = {tr, v, NULL, PRESENTER_DESCRIBE_AUDIENCE_W, PRESENTER_DESCRIBE_AUDIENCE_H, false,
                            v->edited, 0, title};
        fprintf(out, "%s\n  {\"stage\": \"%s\", ", s ? "," : "", tr->stages[s].name);
        presenter_describe(p, &f, out);
        fputs("}", out);
    }
    presenter_destroy(p);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    return 0;
}

static int describe_any(const char *path, const char *font_path, const SessionEdits *ed, Lang lang, int batch, int head,
                        int loop, int w, int h, bool projector, int glance, const char *const exp[2], FILE *out, FILE *err);

int describe_run(const char *path, const char *font_path, const SessionEdits *ed, Lang lang, int batch, int head, int loop, int w,
                 int h, bool projector, int glance, FILE *out, FILE *err)
{
    return describe_any(path, font_path, ed, lang, batch, head, loop, w, h, projector, glance, NULL, out, err);
}

int describe_run_experiment(const char *path, const char *font_path, const SessionEdits *ed, Lang lang, int batch, int w,
                            int h, bool projector, const char *experiment, const char *corrupt, FILE *out, FILE *err)
{
    const char *const exp[2] = {experiment, corrupt};
    return describe_any(path, font_path, ed, lang, batch, 0, -1, w, h, projector, (int)expview_kind(experiment), exp, out,
                        err);
}

// describe_run; exp: the experiment's name and corrupted text (NULL: none).
static int describe_any(const char *path, const char *font_path, const SessionEdits *ed, Lang lang, int batch, int head,
                        int loop, int w, int h, bool projector, int glance, const char *const exp[2], FILE *out, FILE *err)
{
    const bool presenter = glance == DESCRIBE_PRESENTER;
    char msg[LESSON_ERR_MAX + 200], assets[1100], aerr[1200];
    if (!assets_find(assets, sizeof assets, aerr, sizeof aerr) || !i18n_load(assets, aerr, sizeof aerr)) {
        utf8_fputs_line(err, aerr);
        return 1;
    }
    Session *ses = session_open(path, ed, msg, sizeof msg);
    if (!ses) {
        utf8_fputs_line(err, msg);
        return 1;
    }
    const Trace *tr = &ses->trace;
    if (batch < 0 || batch >= tr->batch || head < -1 || head >= tr->n_heads) {
        cli_error(err, "attnviz: --batch/--head: %s has batches 0..%d and heads 0..%d", path, tr->batch - 1,
                  tr->n_heads - 1);
        session_destroy(ses);
        return 2;
    }
    int most = 0; // --loop: the stages inside a loop are described at that step
    for (int s = 0; s < tr->n; s++) most = recipe_loop_steps(tr, s) > most ? recipe_loop_steps(tr, s) : most;
    if (loop >= most) {
        if (most) cli_error(err, "attnviz: --loop: %s has loop steps 0..%d (decoding, FlashAttention's tiles)", path, most - 1);
        else cli_error(err, "attnviz: --loop: %s has no loop (a lesson with model.decode or model.flash has one)", path);
        session_destroy(ses);
        return 2;
    }
    ExpView xv = {0}; // --experiment: its numbers, drawn
    if (exp && !expview_open(&xv, exp[0], ses, exp[1], msg, sizeof msg)) {
        utf8_fputs_line(err, msg);
        session_destroy(ses);
        return 1;
    }
    Session *before = session_checkpoint_before(ses); // (a checkpoint: "since step …")
    View v;
    view_init(&v, &ses->lesson, lang);
    // text measured with the fonts the frames are drawn with (as the export and the window
    // do), so number_px and the layout are theirs; without fonts, the layout's estimate
    char ferr[400];
    Fonts *fonts = fonts_create(font_path, lang, ferr, sizeof ferr);
    TextMeasure measure = {text_measure, fonts};
    if (fonts) v.measure = &measure;
    const int chosen = head; // -1: each stage on its narration's head (scene_stage_head), else 0
    if (head < 0) head = 0;
    v.batch = batch, v.head = head;
    v.ckpt_prev = before ? &before->trace : NULL;
    if (projector) v.projector = true, v.palette = PALETTE_HIGH_CONTRAST; // as M turns it on
    v.edited = session_edited(ses), v.n_edits = ses->log.applied;
    v.ref = v.edited ? session_original_trace(ses) : NULL;
    if (exp) v.exp = &xv;
    char title[LESSON_MAX_TEXT + 64];
    fputs("{\"title\": ", out);
    json_write_string(out, session_title(ses, lang, title, sizeof title));
    fprintf(out, ", \"lang\": \"%s\", \"batch\": %d, \"head\": %d, \"width\": %d, \"height\": %d, \"projector\": %s, "
                 "\"frames\": [",
            lang == LANG_ZH ? "zh" : "en", batch, head, w, h, projector ? "true" : "false");
    bool first = true;
    int rc = presenter ? describe_presenter(ses, &v, font_path, w, h, out, err) : 0;
    if (presenter) glance = 0;
    const bool glance_frame = glance != VIEW_PANELS;
    if (glance) { // one frame: every layer's and head's map, or one head's lines
        v.kind = (ViewKind)glance;
        for (int s = 0; s < tr->n && v.stage == 0; s++)
            if (tr->stages[s].id == STAGE_ATTN) v.stage = s;
        fputs("\n  {", out);
        describe_frame_fields(out, tr, &v, w, h);
        fputs("}", out);
    }
    for (int s = 0; s < tr->n && !glance_frame && !presenter; s++) {
        v.stage = s, v.part = 0, v.head = head;
        v.head = scene_stage_head(tr, &v, chosen);
        v.loop = loop >= 0 && loop < recipe_loop_steps(tr, s) ? loop : -1;
        int parts = layout_projector_parts(tr, &v, w, h); // projector mode: a frame a part
        for (v.part = 0; v.part < parts; v.part++) {
            fputs(first ? "\n  {" : ",\n  {", out);
            describe_frame_fields(out, tr, &v, w, h);
            fputs("}", out);
            first = false;
        }
    }
    fputs("\n]}\n", out);
    fonts_destroy(fonts);
    if (exp) expview_free(&xv);
    session_destroy(before);
    session_destroy(ses);
    i18n_free();
    return cli_output_ok(out, "--describe", err) && rc == 0 ? 0 : 1;
}
