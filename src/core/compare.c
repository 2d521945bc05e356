// compare.c — B made from A by a spec, and Δ = B − A stage by stage (see compare.h).
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "experiment.h"

static const struct {
    const char *prefix;
    CompareKind kind;
} SPECS[] = {
    {"set:", COMPARE_SET}, {"lesson:", COMPARE_LESSON}, {"text:", COMPARE_TEXT},
    {"checkpoint:", COMPARE_CHECKPOINT}, {"ablate:", COMPARE_ABLATE}, {"ablate-mean:", COMPARE_ABLATE_MEAN},
};
#define SPEC_FORMS "set:KEY=VALUE, lesson:PATH, text:TEXT, checkpoint:N, ablate:lL.hH, ablate:lL or ablate-mean:lL.hH"

bool compare_parse_spec(const char *spec, CompareSpec *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof SPECS / sizeof SPECS[0]; i++) {
        const size_t len = strlen(SPECS[i].prefix);
        if (strncmp(spec, SPECS[i].prefix, len) != 0) continue;
        out->kind = SPECS[i].kind, out->arg = spec + len, out->text = spec;
        if (!out->arg[0]) {
            snprintf(err, n, "--compare: \"%s\": nothing after \"%s\" (expected " SPEC_FORMS ")", spec,
                     SPECS[i].prefix);
            return false;
        }
        if (out->kind == COMPARE_CHECKPOINT) {
            char *end;
            errno = 0;
            long v = strtol(out->arg, &end, 10);
            if (end == out->arg || *end || errno || v < 0 || v > 1000000) {
                snprintf(err, n, "--compare: \"%s\": expected checkpoint:N, a whole number from 0", spec);
                return false;
            }
            out->checkpoint = (int)v;
        }
        return true;
    }
    snprintf(err, n, "--compare: \"%s\": expected " SPEC_FORMS, spec);
    return false;
}

// B of a set:, ablate: or text: spec: a copy of A as it is, then the edit, the ablation or the
// text (as many tokens as A's: every stage of the same shape). NULL with one line in msg.
static Session *changed_copy(const Session *a, const CompareSpec *sp, char *msg, size_t n)
{
    Session *b = sp->kind == COMPARE_TEXT ? session_clone_text(a, sp->arg, msg, n) : session_clone(a, msg, n);
    if (!b) return NULL;
    bool ok = true;
    if (sp->kind == COMPARE_TEXT) {
        if ((ok = b->lesson.len_q == a->lesson.len_q)) return b;
        snprintf(msg, n, "attnviz: --compare %.600s: B's text is %d tokens and A's %d: a compare needs as many "
                 "tokens in both (every stage the same shape)", sp->text, b->lesson.len_q, a->lesson.len_q);
    } else if (sp->kind == COMPARE_SET) {
        Edit e;
        char why[EDIT_ERR_MAX + 200];
        ok = edit_parse(&b->lesson, sp->arg, &e, why, sizeof why) && session_edit(b, &e, false, NULL, why, sizeof why);
        if (!ok) snprintf(msg, n, "attnviz: --set %s", why); // (session_open's form)
    } else {
        AttnAblation ab = {sp->kind == COMPARE_ABLATE ? ABLATE_ZERO : ABLATE_MEAN, 0, 0};
        ok = experiment_can_ablate(&b->lesson, "attnviz: --compare", msg, n) &&
             experiment_parse_head(&b->lesson, sp->arg, &ab, "attnviz: --compare", msg, n) &&
             session_ablate(b, &ab, msg, n);
    }
    if (!ok) session_destroy(b);
    return ok ? b : NULL;
}

Session *compare_open_b(const Session *a, const SessionEdits *ed, const CompareSpec *sp, char *err, size_t n)
{
    SessionEdits e = ed ? *ed : (SessionEdits){0};
    const char *path = a->path;
    switch (sp->kind) {
    case COMPARE_LESSON: path = sp->arg, e = (SessionEdits){0}; break;
    case COMPARE_CHECKPOINT: e.has_checkpoint = true, e.checkpoint = sp->checkpoint; break;
    default: break;
    }
    char msg[LESSON_ERR_MAX + 900];
    const bool copy = sp->kind == COMPARE_SET || sp->kind == COMPARE_ABLATE || sp->kind == COMPARE_ABLATE_MEAN ||
                      sp->kind == COMPARE_TEXT;
    Session *b = copy ? changed_copy(a, sp, msg, sizeof msg) : session_open(path, &e, msg, sizeof msg);
    if (!b && copy && strncmp(msg, "attnviz: --compare", strlen("attnviz: --compare")) == 0) {
        snprintf(err, n, "%s", msg); // (said of the spec already)
        return NULL;
    }
    if (!b) { // the message of the option the spec stands for, said of the spec
        static const char *const OPTION[] = {"attnviz: --set ", "attnviz: ", "--text: ", "--checkpoint: "};
        const char *m = msg;
        for (size_t i = 0; i < sizeof OPTION / sizeof OPTION[0]; i++)
            if (strncmp(m, OPTION[i], strlen(OPTION[i])) == 0) m += strlen(OPTION[i]);
        if (sp->kind == COMPARE_SET) m += strlen(sp->arg) + 2 * (strncmp(m, sp->arg, strlen(sp->arg)) == 0); // "K=V: "
        snprintf(err, n, "attnviz: --compare %s: %s", sp->text, m);
        return NULL;
    }
    return b;
}

static bool same_value(float x, float y) { return x == y || (isnan(x) && isnan(y)); }

// Δ of one stage present in both (the same shape).
static bool stage_delta(CompareStage *s, const Tensor *ta, const Tensor *tb)
{
    if (!tensor_init_raw(&s->delta, ta->rank, ta->shape)) return false;
    for (size_t k = 0; k < ta->size; k++) {
        const float x = ta->data[k], y = tb->data[k];
        if (same_value(x, y)) {
            s->delta.data[k] = 0.0f;
            continue;
        }
        const float d = y - x;
        s->delta.data[k] = d;
        s->n_diff++;
        const float m = isfinite(d) ? fabsf(d) : INFINITY;
        if (m > s->max_abs) s->max_abs = m;
    }
    return true;
}

bool compare_traces(const Trace *a, const Trace *b, Compare *c, char *err, size_t n)
{
    memset(c, 0, sizeof *c);
    if (!(c->st = calloc((size_t)(a->n + b->n), sizeof *c->st))) goto oom;
    for (int i = 0; i < a->n; i++) {
        CompareStage *s = &c->st[c->n++];
        const Tensor *ta = &a->stages[i].t;
        s->a = i, s->b = trace_find(b, a->stages[i].name);
        if (s->b < 0) {
            c->n_only++;
            continue;
        }
        const Tensor *tb = &b->stages[s->b].t;
        if (!tensor_same_shape(ta, tb)) {
            char sa[64], sb[64];
            tensor_shape_str(ta, sa, sizeof sa), tensor_shape_str(tb, sb, sizeof sb);
            snprintf(err, n, "attnviz: --compare: stage \"%s\" is %s in A and %s in B: A and B must have the same "
                     "shapes", a->stages[i].name, sa, sb);
            compare_free(c);
            return false;
        }
        if (!stage_delta(s, ta, tb)) goto oom;
        if (s->n_diff)
            c->n_differ++;
        else
            c->n_identical++;
    }
    if (c->n_only == a->n && a->n > 0 && b->n > 0) {
        snprintf(err, n, "attnviz: --compare: A and B have no stage in common (A begins with \"%s\", B with \"%s\"): "
                 "not the same model", a->stages[0].name, b->stages[0].name);
        compare_free(c);
        return false;
    }
    for (int j = 0; j < b->n; j++)
        if (trace_find(a, b->stages[j].name) < 0) {
            c->st[c->n++] = (CompareStage){.a = -1, .b = j};
            c->n_only++;
        }
    return true;
oom:
    snprintf(err, n, "attnviz: --compare: out of memory");
    compare_free(c);
    return false;
}

void compare_free(Compare *c)
{
    for (int i = 0; i < c->n; i++) tensor_free(&c->st[i].delta);
    free(c->st);
    memset(c, 0, sizeof *c);
}
