// cli.c — headless commands over the attention core.
#include "cli.h"

#include "assets.h"
#include "icon.h"
#include "paint_vec.h"
#include "png_write.h"
#include "temp_file.h"
#include "i18n.h"
#include "json_out.h"
#include "quiz.h"
#include "scene.h"
#include "session.h"

#include <SDL.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "utf8.h"

void cli_error(FILE *err, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    utf8_fputs_line(err, line);
}

bool cli_output_ok(FILE *out, const char *what, FILE *err)
{
    errno = 0;
    if (fflush(out) == 0 && !ferror(out)) return true;
    cli_error(err, "attnviz: %s: cannot write the output: %s", what,
              errno ? strerror(errno) : "write error");
    return false;
}

// Loads a lesson and runs the forward pass; on failure prints the error line to err.
static Session *load(const char *path, const SessionEdits *ed, FILE *err)
{
    char msg[LESSON_ERR_MAX + 200];
    Session *s = session_open(path, ed, msg, sizeof msg);
    if (!s) utf8_fputs_line(err, msg);
    return s;
}

int cli_check(int n, char **paths, FILE *out, FILE *err)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        Lesson ls;
        char msg[LESSON_ERR_MAX];
        if (lesson_load(&ls, paths[i], msg, sizeof msg)) {
            // the lesson's own questions name stages and cells of its trace: checked on it
            bool ok = true;
            if (ls.n_quiz > 0) {
                Trace tr;
                trace_init(&tr);
                if (!attn_forward(&ls.cfg, ls.w, &ls.in, &tr))
                    ok = false, snprintf(msg, sizeof msg, "%s: out of memory computing the forward pass", paths[i]);
                else
                    ok = lesson_check_quiz(&ls, &tr, msg, sizeof msg);
                trace_free(&tr);
            }
            lesson_free(&ls);
            if (ok) {
                fprintf(out, "ok: %s\n", paths[i]);
                continue;
            }
            utf8_fputs_line(err, msg);
            bad++;
        } else {
            utf8_fputs_line(err, msg);
            bad++;
        }
    }
    return bad ? 1 : 0;
}

int cli_dump(const char *path, const SessionEdits *ed, FILE *out, FILE *err)
{
    Session *ses = load(path, ed, err);
    if (!ses) return 1;
    cli_dump_session(ses, out);
    session_destroy(ses);
    return cli_output_ok(out, "--dump", err) ? 0 : 1;
}

void cli_dump_session(const Session *ses, FILE *out)
{
    const Trace *tr = &ses->trace;
    char title[LESSON_MAX_TEXT + 64];
    fputs("{\"title\": ", out);
    json_write_string(out, session_title(ses, LANG_EN, title, sizeof title));
    fputs(", \"stages\": [", out);
    for (int i = 0; i < tr->n && !ferror(out); i++) // a full disk: stop at the first failed write
        cli_dump_tensor(out, i == 0, tr->stages[i].name, &tr->stages[i].t);
    fputs("\n]}\n", out);
}

void cli_dump_tensor(FILE *out, bool first, const char *name, const Tensor *t)
{
    fprintf(out, "%s\n  {\"name\": \"%s\", \"shape\": [", first ? "" : ",", name);
    for (int d = 0; d < t->rank; d++) fprintf(out, d ? ", %d" : "%d", t->shape[d]);
    fputs("], \"data\": [", out);
    for (size_t k = 0; k < t->size; k++) {
        if (k) fputs(", ", out);
        json_write_float(out, t->data[k]);
    }
    fputs("]}", out);
}

// --- a PyTorch-like tensor print ---------------------------------------------

typedef struct PrintFmt {
    bool sci;
    int width;
} PrintFmt;

static int fmt_value(char *buf, size_t n, float v, const PrintFmt *f)
{
    if (isnan(v)) return snprintf(buf, n, "nan");
    if (isinf(v)) return snprintf(buf, n, v > 0 ? "inf" : "-inf");
    return snprintf(buf, n, f->sci ? "%.4e" : "%.4f", (double)v);
}

static void print_rec(FILE *out, const Tensor *t, int dim, size_t off, int indent, const PrintFmt *f)
{
    size_t stride = 1;
    for (int d = dim + 1; d < t->rank; d++) stride *= (size_t)t->shape[d];
    fputc('[', out);
    for (int i = 0; i < t->shape[dim]; i++) {
        if (dim == t->rank - 1) {
            char buf[32];
            fmt_value(buf, sizeof buf, t->data[off + (size_t)i], f);
            fprintf(out, "%s%*s", i ? ", " : "", f->width, buf);
        } else {
            if (i) {
                fputc(',', out);
                for (int nl = 0; nl < t->rank - 1 - dim; nl++) fputc('\n', out);
                fprintf(out, "%*s", indent + 1, "");
            }
            print_rec(out, t, dim + 1, off + (size_t)i * stride, indent + 1, f);
        }
    }
    fputc(']', out);
}

static void print_tensor(FILE *out, const char *name, const Tensor *t)
{
    PrintFmt f = {false, 0};
    float amax = 0.0f, amin = INFINITY;
    for (size_t k = 0; k < t->size; k++) {
        float a = fabsf(t->data[k]);
        if (!isfinite(a)) continue;
        if (a > amax) amax = a;
        if (a > 0.0f && a < amin) amin = a;
    }
    f.sci = amax >= 1e5f || (amin < 1e-4f && amax > 0.0f);
    for (size_t k = 0; k < t->size; k++) {
        char buf[32];
        int w = fmt_value(buf, sizeof buf, t->data[k], &f);
        if (w > f.width) f.width = w;
    }
    char shape[64];
    tensor_shape_str(t, shape, sizeof shape);
    fprintf(out, "%s %s\ntensor(", name, shape);
    print_rec(out, t, 0, 0, 7, &f);
    fputs(")\n", out);
}

int cli_print(const char *stage, const char *path, const SessionEdits *ed, FILE *out, FILE *err)
{
    Session *ses = load(path, ed, err);
    if (!ses) return 1;
    const Trace *tr = &ses->trace;
    int code = 0;
    const Stage *s = trace_get(tr, stage);
    if (!s) {
        char names[1024] = "";
        for (int i = 0, used = 0; i < tr->n && used < (int)sizeof names; i++)
            used += snprintf(names + used, sizeof names - (size_t)used, " %s", tr->stages[i].name);
        cli_error(err, "attnviz: --print: no stage \"%s\" in %s; stages are:%s", stage, path, names);
        code = 2;
    } else {
        print_tensor(out, s->name, &s->t);
        char fx[320];
        scene_formula(tr, (int)(s - tr->stages), LANG_EN, fx, sizeof fx);
        if (fx[0]) fprintf(out, "# %s\n", fx);
        if (s->kind == STAGE_KIND_SCORES)
            fprintf(out, "# scale = %.9g%s\n", (double)tr->scale,
                    fabsf(tr->scale - sqrtf((float)tr->d_k)) < 1e-6f ? " (√d_k)" : " (not √d_k: set by the lesson or --set)");
    }
    session_destroy(ses);
    if (code == 0 && !cli_output_ok(out, "--print", err)) code = 1;
    return code;
}

// --- the study mode's questions ------------------------------------------------

static void write_int_or_null(FILE *out, int v)
{
    if (v < 0)
        fputs("null", out);
    else
        fprintf(out, "%d", v);
}

int cli_quiz(const char *path, const SessionEdits *ed, int lang, unsigned long long seed, FILE *out, FILE *err)
{
    char assets[1100], aerr[1200];
    if (!assets_find(assets, sizeof assets, aerr, sizeof aerr) || !i18n_load(assets, aerr, sizeof aerr)) {
        utf8_fputs_line(err, aerr);
        return 1;
    }
    Session *ses = load(path, ed, err);
    if (!ses) {
        i18n_free();
        return 1;
    }
    static QuizQuestion qs[QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ];
    int n = quiz_all(&ses->trace, &ses->lesson, (Lang)lang, seed, !session_edited(ses), qs,
                     QUIZ_MAX_QUESTIONS + LESSON_MAX_QUIZ);
    fputs("[", out);
    for (int i = 0; i < n; i++) {
        const QuizQuestion *q = &qs[i];
        fputs(i ? ",\n {\"id\": " : "\n {\"id\": ", out);
        json_write_string(out, q->id);
        fprintf(out, ", \"stage\": \"%s\", \"batch\": ", ses->trace.stages[q->stage].name);
        write_int_or_null(out, q->batch);
        fputs(", \"head\": ", out);
        write_int_or_null(out, q->head);
        fprintf(out, ", \"kind\": \"%s\", \"cell\": [", quiz_kind_name(q->kind));
        for (int k = 0; k < q->n_cell; k++) fprintf(out, k ? ", %d" : "%d", q->cell[k]);
        fputs("], \"question\": ", out);
        json_write_string(out, q->question);
        fputs(", \"answer\": ", out);
        if (q->list) fputs("[", out);
        for (int k = 0; k < q->n_answer; k++) {
            if (k) fputs(", ", out);
            json_write_float(out, q->answer[k]);
        }
        if (q->list) fputs("]", out);
        fputs(", \"tolerance\": ", out);
        json_write_float(out, q->tolerance);
        fprintf(out, ", \"unordered\": %s, \"explanation\": ", q->unordered ? "true" : "false");
        json_write_string(out, q->explanation);
        fputs("}", out);
    }
    fputs("\n]\n", out);
    session_destroy(ses);
    i18n_free();
    return cli_output_ok(out, "--quiz", err) ? 0 : 1;
}

// --- the application icon -------------------------------------------------------

int cli_icon(const char *path, int size, FILE *err)
{
    size_t n = strlen(path);
    bool svg = n > 4 && strcmp(path + n - 4, ".svg") == 0;
    char msg[600] = "";
    bool ok = false;
    if (svg) {
        char tmp[4200];
        FILE *f = temp_file_open_target(path, tmp, sizeof tmp);
        if (!f) {
            cli_error(err, "attnviz: %s: cannot write: %s", path, temp_file_strerror(errno));
            return 1;
        }
        PaintVec *v = paint_vec_create(PAINT_VEC_SVG, NULL, size, size, msg, sizeof msg);
        if (v && paint_vec_begin_page(v, f)) {
            DrawList dl;
            draw_list_init(&dl);
            Canvas cv = {NULL, NULL, NULL, v, &dl};
            icon_draw(&cv);
            ok = paint_flush(&cv);
            draw_list_free(&dl);
            ok = paint_vec_end_page(v) && ok;
        }
        paint_vec_destroy(v);
        int e = errno;
        if (ok) e = temp_file_finish(f, tmp, path), ok = e == 0; // fsync, rename
        else fclose(f), unlink(tmp);
        if (!ok) {
            if (!msg[0]) snprintf(msg, sizeof msg, "attnviz: %s: cannot write: %s", path, temp_file_strerror(e ? e : EIO));
        }
    } else {
        SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, size, size, 32, SDL_PIXELFORMAT_RGBA32);
        SDL_Renderer *r = s ? SDL_CreateSoftwareRenderer(s) : NULL;
        if (r) {
            DrawList dl;
            draw_list_init(&dl);
            Canvas cv = {r, NULL, NULL, NULL, &dl};
            icon_draw(&cv);
            bool drawn = paint_flush(&cv);
            draw_list_free(&dl);
            SDL_RenderPresent(r);
            ok = drawn && png_write_rgba(path, s->pixels, size, size, s->pitch, 9, true, msg, sizeof msg);
        } else {
            snprintf(msg, sizeof msg, "attnviz: cannot create a %dx%d surface: %s", size, size, SDL_GetError());
        }
        if (r) SDL_DestroyRenderer(r);
        if (s) SDL_FreeSurface(s);
    }
    if (!ok) cli_error(err, "%s", msg);
    return ok ? 0 : 1;
}
