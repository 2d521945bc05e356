// cli_compare.c — --compare SPEC with --dump and --describe (compare.h), and --experiment NAME
// (experiment.h): JSON on stdout, one line on stderr for what is wrong.
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "assets.h"
#include "compare.h"
#include "compare_text.h"
#include "experiment.h"
#include "i18n.h"
#include "json_out.h"
#include "session.h"
#include "utf8.h"

// The interface strings (the summary's words); false after one line on err.
static bool load_strings(FILE *err)
{
    char assets[1100], aerr[1200];
    if (assets_find(assets, sizeof assets, aerr, sizeof aerr) && i18n_load(assets, aerr, sizeof aerr)) return true;
    utf8_fputs_line(err, aerr);
    return false;
}

static void write_stage(FILE *out, bool first, const CompareStage *s, const Trace *a, const Trace *b, bool data,
                        Lang lang)
{
    const Stage *st = s->a >= 0 ? &a->stages[s->a] : &b->stages[s->b];
    fprintf(out, "%s\n  {\"name\": \"%s\", \"in\": \"%s\"", first ? "" : ",", st->name,
            s->a < 0 ? "b" : s->b < 0 ? "a" : "both");
    if (s->a >= 0 && s->b >= 0) {
        fprintf(out, ", \"identical\": %s, \"n_diff\": %zu, \"max_abs_delta\": ", s->n_diff ? "false" : "true",
                s->n_diff);
        json_write_float(out, s->max_abs);
    }
    char text[200];
    compare_text_stage(s, lang, text, sizeof text);
    fputs(", \"text\": ", out);
    json_write_string(out, text);
    if (data && s->a >= 0 && s->b >= 0) {
        fputs(", \"delta\": ", out);
        cli_dump_tensor(out, true, st->name, &s->delta);
    }
    fputs("}", out);
}

int cli_compare(const char *path, const struct SessionEdits *ed, const char *spec, bool data, int lang, FILE *out,
                FILE *err)
{
    char msg[LESSON_ERR_MAX + 400];
    CompareSpec sp;
    if (!compare_parse_spec(spec, &sp, msg, sizeof msg)) { // (args.c checked it)
        cli_error(err, "attnviz: %s", msg);
        return 2;
    }
    if (!load_strings(err)) return 1;
    Session *a = session_open(path, ed, msg, sizeof msg), *b = NULL;
    Compare c = {0};
    int code = 1;
    if (!a || !(b = compare_open_b(a, ed, &sp, msg, sizeof msg)) || !compare_traces(&a->trace, &b->trace, &c, msg, sizeof msg)) {
        utf8_fputs_line(err, msg);
        goto done;
    }
    static char summary[4096];
    char title[LESSON_MAX_TEXT + 64];
    compare_text_summary(&c, &a->trace, &b->trace, spec, true, (Lang)lang, summary, sizeof summary);
    fputs("{\"a\": ", out);
    json_write_string(out, session_title(a, LANG_EN, title, sizeof title));
    fputs(", \"b\": ", out);
    json_write_string(out, session_title(b, LANG_EN, title, sizeof title));
    fputs(", \"spec\": ", out);
    json_write_string(out, spec);
    fprintf(out, ", \"n_identical\": %d, \"n_differ\": %d, \"n_only\": %d, \"summary\": ", c.n_identical, c.n_differ,
            c.n_only);
    json_write_string(out, summary);
    fputs(", \"stages\": [", out);
    for (int i = 0; i < c.n && !ferror(out); i++) write_stage(out, i == 0, &c.st[i], &a->trace, &b->trace, data, (Lang)lang);
    fputs("\n]}\n", out);
    code = cli_output_ok(out, data ? "--compare --dump" : "--compare --describe", err) ? 0 : 1;
done:
    compare_free(&c);
    session_destroy(b);
    session_destroy(a);
    i18n_free();
    return code;
}

// --- experiments ---------------------------------------------------------------------------

static int ablation_json(const Session *s, AblateKind kind, FILE *out, char *msg, size_t n)
{
    HeadEffect *e;
    int count;
    float clean;
    if (!experiment_ablation_table(&s->lesson, kind, &e, &count, &clean, s->path, msg, n)) return 1;
    fprintf(out, ", \"ablation\": \"%s\", \"clean_loss\": ", kind == ABLATE_MEAN ? "mean" : "zero");
    json_write_float(out, clean);
    fputs(", \"heads\": [", out);
    for (int k = 0; k < count; k++) {
        fprintf(out, "%s\n  {\"rank\": %d, \"layer\": %d, \"head\": %d, \"loss\": ", k ? "," : "", k + 1, e[k].layer,
                e[k].head);
        json_write_float(out, e[k].loss);
        fputs(", \"delta\": ", out);
        json_write_float(out, e[k].delta);
        fputs("}", out);
    }
    fputs("\n]", out);
    free(e);
    return 0;
}

static void int_grid(FILE *out, const char *key, const int *v, int rows, int cols)
{
    fprintf(out, ", \"%s\": [", key);
    for (int r = 0; r < rows; r++) {
        fputs(r ? ", [" : "[", out);
        for (int k = 0; k < cols; k++) fprintf(out, k ? ", %d" : "%d", v[(size_t)r * cols + k]);
        fputs("]", out);
    }
    fputs("]", out);
}

static void float_grid(FILE *out, const char *key, const float *v, int rows, int cols)
{
    fprintf(out, ", \"%s\": [", key);
    for (int r = 0; r < rows; r++) {
        fputs(r ? ", [" : "[", out);
        for (int k = 0; k < cols; k++) {
            if (k) fputs(", ", out);
            json_write_float(out, v[(size_t)r * cols + k]);
        }
        fputs("]", out);
    }
    fputs("]", out);
}

static int lens_json(const Session *s, FILE *out, char *msg, size_t n)
{
    LogitLens l;
    if (!experiment_logit_lens(&s->lesson, &s->trace, &l, s->path, msg, n)) return 1;
    const int rows = l.n_layers * l.batch, cols = l.len;
    fprintf(out, ", \"n_layers\": %d, \"batch\": %d, \"len\": %d", l.n_layers, l.batch, l.len);
    int_grid(out, "targets", l.target, l.batch, cols);
    fputs(", \"layers\": \"rows: layer 0 batch 0, layer 0 batch 1, …, layer 1 batch 0, …\"", out);
    int_grid(out, "top", l.top, rows, cols);
    float_grid(out, "top_prob", l.top_prob, rows, cols);
    float_grid(out, "next_prob", l.next_prob, rows, cols);
    logit_lens_free(&l);
    return 0;
}

int cli_experiment(const char *path, const struct SessionEdits *ed, const char *name, FILE *out, FILE *err)
{
    char msg[LESSON_ERR_MAX + 400];
    Session *s = session_open(path, ed, msg, sizeof msg);
    if (!s) {
        utf8_fputs_line(err, msg);
        return 1;
    }
    const bool lens = name[0] == 'l';
    char title[LESSON_MAX_TEXT + 64];
    // the numbers first (nothing is written when the experiment does not apply)
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int code = 1;
    if (mem) {
        code = lens ? lens_json(s, mem, msg, sizeof msg)
                    : ablation_json(s, name[8] == '-' ? ABLATE_MEAN : ABLATE_ZERO, mem, msg, sizeof msg);
        fclose(mem);
    } else {
        snprintf(msg, sizeof msg, "%s: out of memory", path);
    }
    if (code == 0) {
        fputs("{\"title\": ", out);
        json_write_string(out, session_title(s, LANG_EN, title, sizeof title));
        fprintf(out, ", \"experiment\": \"%s\"", name);
        fwrite(buf, 1, len, out);
        fputs("}\n", out);
        code = cli_output_ok(out, "--experiment", err) ? 0 : 1;
    } else {
        utf8_fputs_line(err, msg);
    }
    free(buf);
    session_destroy(s);
    return code;
}
