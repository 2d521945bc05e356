// cli_compare.c — --compare SPEC with --dump and --describe (compare.h), and --experiment NAME
// (experiment.h): JSON on stdout, one line on stderr for what is wrong.
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void cli_compare_write(FILE *out, const Session *a, const Session *b, const Compare *c, const char *spec, bool data,
                       int lang)
{
    static char summary[4096];
    char title[LESSON_MAX_TEXT + 64];
    compare_text_summary(c, &a->trace, &b->trace, spec, true, (Lang)lang, summary, sizeof summary);
    fputs("{\"a\": ", out);
    json_write_string(out, session_title(a, LANG_EN, title, sizeof title));
    fputs(", \"b\": ", out);
    json_write_string(out, session_title(b, LANG_EN, title, sizeof title));
    fputs(", \"spec\": ", out);
    json_write_string(out, spec);
    fprintf(out, ", \"n_identical\": %d, \"n_differ\": %d, \"n_only\": %d, \"summary\": ", c->n_identical, c->n_differ,
            c->n_only);
    json_write_string(out, summary);
    fputs(", \"stages\": [", out);
    for (int i = 0; i < c->n && !ferror(out); i++) write_stage(out, i == 0, &c->st[i], &a->trace, &b->trace, data, (Lang)lang);
    fputs("\n]}\n", out);
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
    cli_compare_write(out, a, b, &c, spec, data, lang);
    code = cli_output_ok(out, data ? "--compare --dump" : "--compare --describe", err) ? 0 : 1;
done:
    compare_free(&c);
    session_destroy(b);
    session_destroy(a);
    i18n_free();
    return code;
}

// --- experiments ---------------------------------------------------------------------------

// ", \"summary\": " and the text of key with args in lang, as a JSON string.
static void write_summary(FILE *out, Lang lang, const char *key, int nargs, const char *const *args)
{
    char line[1200];
    i18n_fmt(line, sizeof line, lang, key, nargs, args);
    fputs(", \"summary\": ", out);
    json_write_string(out, line);
}

static void head_name(const Trace *tr, const HeadEffect *e, char *buf, size_t n)
{
    if (tr->n_layers > 1)
        snprintf(buf, n, "l%d.h%d", e->layer, e->head);
    else
        snprintf(buf, n, "h%d", e->head);
}

// The table said in words: the head that matters most, by how much, and the next one.
static void ablation_summary(FILE *out, const Trace *tr, AblateKind kind, const HeadEffect *e, int count, float clean,
                             Lang lang)
{
    char h1[32], h2[32] = "", l0[32], l1[32], d1[32], d2[32] = "";
    head_name(tr, &e[0], h1, sizeof h1);
    if (count > 1) head_name(tr, &e[1], h2, sizeof h2), snprintf(d2, sizeof d2, "%+.3g", (double)e[1].delta);
    snprintf(l0, sizeof l0, "%.4g", (double)clean), snprintf(l1, sizeof l1, "%.4g", (double)e[0].loss);
    snprintf(d1, sizeof d1, "%+.3g", (double)e[0].delta);
    const char *args[] = {h1, l0, l1, d1, h2, d2};
    write_summary(out, lang, kind == ABLATE_MEAN ? "exp.ablation_mean" : "exp.ablation_zero", 6, args);
}

static int ablation_json(const Session *s, AblateKind kind, Lang lang, FILE *out, char *msg, size_t n)
{
    HeadEffect *e;
    int count;
    float clean;
    if (!experiment_ablation_table(&s->lesson, kind, &e, &count, &clean, s->path, msg, n)) return 1;
    ablation_summary(out, &s->trace, kind, e, count, clean, lang);
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

// The lens said in words: after each layer, at how many positions the next token is the top one.
static void lens_summary(FILE *out, const LogitLens *l, Lang lang)
{
    char layers[800] = "";
    for (int k = 0; k < l->n_layers; k++) {
        int right = 0, counted = 0;
        for (int r = 0; r < l->batch * l->len; r++) {
            const size_t i = (size_t)k * l->batch * l->len + (size_t)r;
            counted += l->target[r] >= 0, right += l->target[r] >= 0 && l->top[i] == l->target[r];
        }
        char lb[12], rb[12], cb[12], item[120];
        snprintf(lb, sizeof lb, "%d", k), snprintf(rb, sizeof rb, "%d", right), snprintf(cb, sizeof cb, "%d", counted);
        const char *args[] = {lb, rb, cb};
        i18n_fmt(item, sizeof item, lang, k ? "exp.lens_next" : "exp.lens_layer", 3, args);
        size_t used = strlen(layers);
        snprintf(layers + used, sizeof layers - used, "%s", item);
    }
    const char *args[] = {layers};
    write_summary(out, lang, "exp.lens", 1, args);
}

static int lens_json(const Session *s, Lang lang, FILE *out, char *msg, size_t n)
{
    LogitLens l;
    if (!experiment_logit_lens(&s->lesson, &s->trace, &l, s->path, msg, n)) return 1;
    lens_summary(out, &l, lang);
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

// The attribution said in words: the head adding most to the next token's logit on average.
static void dla_summary(FILE *out, const Trace *tr, const LogitAttribution *a, Lang lang)
{
    int best = 0;
    double mean[TRACE_MAX_LAYERS * 64] = {0};
    const size_t per = (size_t)a->batch * a->len;
    for (int k = 0; k < a->n_layers * a->n_heads && k < TRACE_MAX_LAYERS * 64; k++) {
        int counted = 0;
        for (size_t r = 0; r < per; r++)
            if (a->token[r] >= 0) mean[k] += (double)a->contrib[(size_t)k * per + r], counted++;
        mean[k] /= counted > 0 ? counted : 1;
        if (mean[k] > mean[best]) best = k;
    }
    HeadEffect e = {best / a->n_heads, best % a->n_heads, 0, 0};
    char hb[32], mb[32];
    head_name(tr, &e, hb, sizeof hb);
    snprintf(mb, sizeof mb, "%+.3g", mean[best]);
    const char *args[] = {hb, mb};
    write_summary(out, lang, "exp.dla", 2, args);
}

static int dla_json(const Session *s, Lang lang, FILE *out, char *msg, size_t n)
{
    LogitAttribution a;
    if (!experiment_logit_attribution(&s->lesson, &s->trace, &a, s->path, msg, n)) return 1;
    dla_summary(out, &s->trace, &a, lang);
    const size_t per = (size_t)a.batch * a.len;
    fprintf(out, ", \"n_layers\": %d, \"n_heads\": %d, \"batch\": %d, \"len\": %d", a.n_layers, a.n_heads, a.batch, a.len);
    int_grid(out, "token", a.token, a.batch, a.len);
    float_grid(out, "logit", a.logit, a.batch, a.len);
    fputs(", \"heads\": [", out);
    for (int k = 0; k < a.n_layers * a.n_heads; k++) {
        fprintf(out, "%s\n  {\"layer\": %d, \"head\": %d", k ? "," : "", k / a.n_heads, k % a.n_heads);
        float_grid(out, "contrib", a.contrib + (size_t)k * per, a.batch, a.len);
        fputs("}", out);
    }
    fputs("\n]", out);
    logit_attribution_free(&a);
    return 0;
}

// Activation patching said in words: the clean prediction, and where patching brings back most of it.
static void patching_summary(FILE *out, const Session *s, const Patching *p, Lang lang)
{
    int br = 0, bh = 0;
    for (int k = 1; k < p->n_layers * p->len; k++) br = p->residual[k] > p->residual[br] ? k : br;
    for (int k = 1; k < p->n_layers * p->n_heads * p->len; k++) bh = p->heads[k] > p->heads[bh] ? k : bh;
    char tok[64], pc[32], px[32], l1[16], i1[16], r1[32], h2[32], i2[16], r2[32];
    snprintf(tok, sizeof tok, "%s", s->lesson.vocab[p->token]);
    snprintf(pc, sizeof pc, "%.3f", (double)p->p_clean), snprintf(px, sizeof px, "%.3f", (double)p->p_corrupt);
    snprintf(l1, sizeof l1, "%d", br / p->len), snprintf(i1, sizeof i1, "%d", br % p->len);
    snprintf(r1, sizeof r1, "%.2f", (double)p->residual[br]);
    HeadEffect e = {bh / p->len / p->n_heads, bh / p->len % p->n_heads, 0, 0};
    head_name(&s->trace, &e, h2, sizeof h2);
    snprintf(i2, sizeof i2, "%d", bh % p->len), snprintf(r2, sizeof r2, "%.2f", (double)p->heads[bh]);
    const char *args[] = {tok, pc, px, l1, i1, r1, h2, i2, r2};
    write_summary(out, lang, "exp.patching", 9, args);
}

static int patching_json(const Session *s, const struct SessionEdits *ed, const char *corrupt, Lang lang, FILE *out,
                         char *msg, size_t n)
{
    struct SessionEdits ec = *ed;
    ec.text = corrupt;
    char m2[LESSON_ERR_MAX + 200];
    Session *x = session_open(s->path, &ec, m2, sizeof m2);
    if (!x) {
        snprintf(msg, n, "--corrupt: %s", strncmp(m2, "--text: ", 8) == 0 ? m2 + 8 : m2);
        return 1;
    }
    if (x->lesson.len_q != s->lesson.len_q || x->lesson.batch != s->lesson.batch) { // (said of the option)
        snprintf(msg, n, "--corrupt: \"%.80s\" is %d tokens, the lesson's text %d: patching needs texts of one length",
                 corrupt, x->lesson.len_q, s->lesson.len_q);
        session_destroy(x);
        return 1;
    }
    Patching p;
    const bool ok = experiment_patching(&s->lesson, &x->lesson, &p, "--experiment patching", msg, n);
    if (ok) {
        patching_summary(out, s, &p, lang);
        fputs(", \"corrupt\": ", out);
        json_write_string(out, corrupt);
        fprintf(out, ", \"n_layers\": %d, \"n_heads\": %d, \"len\": %d, \"position\": %d, \"token\": %d, \"token_text\": ",
                p.n_layers, p.n_heads, p.len, p.len - 1, p.token);
        json_write_string(out, s->lesson.vocab[p.token]);
        fputs(", \"p_clean\": ", out);
        json_write_float(out, p.p_clean);
        fputs(", \"p_corrupt\": ", out);
        json_write_float(out, p.p_corrupt);
        fputs(", \"recovered\": \"(p_patched - p_corrupt) / (p_clean - p_corrupt) of the token at the last position\"",
              out);
        float_grid(out, "residual", p.residual, p.n_layers, p.len);
        fputs(", \"heads_rows\": \"layer 0 head 0, layer 0 head 1, ...\"", out);
        float_grid(out, "heads", p.heads, p.n_layers * p.n_heads, p.len);
        patching_free(&p);
    }
    session_destroy(x);
    return ok ? 0 : 1;
}

int cli_experiment(const char *path, const struct SessionEdits *ed, const char *name, const char *corrupt, int lang,
                   FILE *out, FILE *err)
{
    char msg[LESSON_ERR_MAX + 400];
    if (!load_strings(err)) return 1;
    Session *s = session_open(path, ed, msg, sizeof msg);
    if (!s) {
        utf8_fputs_line(err, msg);
        i18n_free();
        return 1;
    }
    const bool lens = strcmp(name, "logit-lens") == 0, dla = strcmp(name, "logit-attribution") == 0;
    char title[LESSON_MAX_TEXT + 64];
    // the numbers first (nothing is written when the experiment does not apply)
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int code = 1;
    if (mem) {
        code = corrupt ? patching_json(s, ed, corrupt, (Lang)lang, mem, msg, sizeof msg)
             : lens ? lens_json(s, (Lang)lang, mem, msg, sizeof msg)
             : dla  ? dla_json(s, (Lang)lang, mem, msg, sizeof msg)
                    : ablation_json(s, name[8] == '-' ? ABLATE_MEAN : ABLATE_ZERO, (Lang)lang, mem, msg, sizeof msg);
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
    i18n_free();
    return code;
}
