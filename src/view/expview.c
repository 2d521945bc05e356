// expview.c — the experiments' numbers for their drawn views (see expview.h).
#include "expview.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    ViewKind kind;
} NAMES[] = {
    {"ablation", VIEW_ABLATION},         {"ablation-mean", VIEW_ABLATION},         {"logit-lens", VIEW_LENS},
    {"logit-attribution", VIEW_ATTRIBUTION}, {"patching", VIEW_PATCHING},
};

ViewKind expview_kind(const char *name)
{
    for (size_t i = 0; name && i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strcmp(NAMES[i].name, name) == 0) return NAMES[i].kind;
    return VIEW_PANELS;
}

const char *expview_row_label(const ExpView *e, int i)
{
    return e && i >= 0 && i < e->n_row_labels ? e->row_label[i] : "?";
}

// Row labels: the layers ("l0" …) when heads is false, else every head ("l1.h0", "h0" in a
// one-layer model) in the order of order (NULL: layer by layer).
static bool label_rows(ExpView *e, bool heads, const int *order, int count)
{
    e->row_label = calloc((size_t)(count > 0 ? count : 1), sizeof *e->row_label);
    if (!e->row_label) return false;
    e->n_row_labels = count;
    for (int i = 0; i < count; i++) {
        const int k = order ? order[i] : i, H = e->n_heads > 0 ? e->n_heads : 1;
        if (!heads)
            snprintf(e->row_label[i], EXPVIEW_LABEL, "l%d", k);
        else if (e->n_layers > 1)
            snprintf(e->row_label[i], EXPVIEW_LABEL, "l%d.h%d", k / H, k % H);
        else
            snprintf(e->row_label[i], EXPVIEW_LABEL, "h%d", k % H);
    }
    return true;
}

// Both ablation tables, the rows in the order of the zeroed one's ranks.
static bool open_ablation(ExpView *e, const Session *s, char *err, size_t n)
{
    HeadEffect *t[2] = {NULL, NULL};
    int count[2];
    float clean[2];
    bool ok = experiment_ablation_table(&s->lesson, ABLATE_ZERO, &t[0], &count[0], &clean[0], s->path, err, n) &&
              experiment_ablation_table(&s->lesson, ABLATE_MEAN, &t[1], &count[1], &clean[1], s->path, err, n);
    const int m = ok ? count[0] : 0;
    e->rank = malloc((size_t)(m > 0 ? m : 1) * sizeof *e->rank);
    for (int k = 0; k < 2; k++) {
        e->loss[k] = malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
        e->clean[k] = malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
        e->delta[k] = malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
        ok = ok && e->loss[k] && e->clean[k] && e->delta[k];
    }
    if (ok && e->rank) {
        e->n_rank = m, e->clean_loss = clean[0];
        const int H = e->n_heads;
        for (int i = 0; i < m; i++) {
            e->rank[i] = t[0][i].layer * H + t[0][i].head;
            e->loss[0][i] = t[0][i].loss, e->clean[0][i] = clean[0], e->delta[0][i] = t[0][i].delta;
            for (int j = 0; j < count[1]; j++) // (the same head's mean ablation)
                if (t[1][j].layer == t[0][i].layer && t[1][j].head == t[0][i].head)
                    e->loss[1][i] = t[1][j].loss, e->clean[1][i] = clean[1], e->delta[1][i] = t[1][j].delta;
        }
        ok = label_rows(e, true, e->rank, m);
    } else if (ok) {
        ok = false;
    }
    if (!ok && err[0] == '\0') snprintf(err, n, "%s: out of memory", s->path);
    free(t[0]), free(t[1]);
    return ok;
}

// x as a cell of d decimals shows it, read back.
static float as_shown(float x, int d)
{
    char b[64];
    snprintf(b, sizeof b, "%.*f", d, (double)x);
    return strtof(b, NULL);
}

static bool open_attribution(ExpView *e, const Session *s, char *err, size_t n)
{
    if (!experiment_logit_attribution(&s->lesson, &s->trace, &e->dla, s->path, err, n)) return false;
    const LogitAttribution *a = &e->dla;
    const size_t per = (size_t)a->batch * (size_t)a->len;
    for (int d = 0; d <= EXPVIEW_DECIMALS; d++) {
        float *o = e->dla_shown[d] = malloc((per > 0 ? per : 1) * 3 * sizeof(float));
        if (!o) {
            snprintf(err, n, "%s: out of memory", s->path);
            return false;
        }
        for (size_t r = 0; r < per; r++) {
            const bool exact = d == EXPVIEW_DECIMALS;
            double sum = 0.0;
            for (int k = 0; k < a->n_layers * a->n_heads; k++) {
                const float c = a->contrib[(size_t)k * per + r];
                sum += exact ? (double)c : (double)as_shown(c, d);
            }
            const float logit = a->token[r] >= 0 ? a->logit[r] : NAN;
            o[r] = a->token[r] >= 0 ? (exact ? (float)sum : as_shown((float)sum, d)) : NAN;
            o[per + r] = exact ? logit - o[r] : as_shown(as_shown(logit, d) - o[r], d);
            o[2 * per + r] = logit;
        }
    }
    return label_rows(e, true, NULL, a->n_layers * a->n_heads);
}

static bool open_patching(ExpView *e, const Session *s, const char *corrupt, char *err, size_t n)
{
    if (!corrupt) {
        snprintf(err, n, "--experiment patching needs --corrupt TEXT (the corrupted text)");
        return false;
    }
    char m2[LESSON_ERR_MAX + 200];
    Session *x = session_retext(s, corrupt, m2, sizeof m2);
    if (!x) {
        snprintf(err, n, "--corrupt: %s", strncmp(m2, "--text: ", 8) == 0 ? m2 + 8 : m2);
        return false;
    }
    bool ok = false;
    if (x->lesson.len_q != s->lesson.len_q || x->lesson.batch != s->lesson.batch)
        snprintf(err, n, "--corrupt: \"%.80s\" is %d tokens, the lesson's text %d: patching needs texts of one length",
                 corrupt, x->lesson.len_q, s->lesson.len_q);
    else
        ok = experiment_patching(&s->lesson, &x->lesson, &e->patch, "--experiment patching", err, n);
    session_destroy(x);
    if (!ok) return false;
    snprintf(e->corrupt, sizeof e->corrupt, "%s", corrupt);
    e->corrupt_token_text = s->lesson.vocab ? s->lesson.vocab[e->patch.token] : "?";
    // rows: the layers (the residual panel), then every head (the heads' panel)
    const int L = e->patch.n_layers, H = e->patch.n_heads;
    e->row_label = calloc((size_t)(L + L * H), sizeof *e->row_label);
    if (!e->row_label) return snprintf(err, n, "%s: out of memory", s->path), false;
    e->n_row_labels = L + L * H, e->row2 = L;
    for (int i = 0; i < L; i++) snprintf(e->row_label[i], EXPVIEW_LABEL, "l%d", i);
    for (int k = 0; k < L * H; k++)
        if (L > 1) snprintf(e->row_label[L + k], EXPVIEW_LABEL, "l%d.h%d", k / H, k % H);
        else snprintf(e->row_label[L + k], EXPVIEW_LABEL, "h%d", k % H);
    return true;
}

bool expview_open(ExpView *e, const char *name, const Session *s, const char *corrupt, char *err, size_t n)
{
    memset(e, 0, sizeof *e);
    err[0] = '\0';
    e->kind = expview_kind(name);
    snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    e->n_layers = s->trace.n_layers > 1 ? s->trace.n_layers : 1, e->n_heads = s->trace.n_heads;
    bool ok = false;
    switch (e->kind) {
    case VIEW_ABLATION: ok = open_ablation(e, s, err, n); break;
    case VIEW_LENS:
        ok = experiment_logit_lens(&s->lesson, &s->trace, &e->lens, s->path, err, n) && label_rows(e, false, NULL, e->lens.n_layers);
        break;
    case VIEW_ATTRIBUTION: ok = open_attribution(e, s, err, n); break;
    case VIEW_PATCHING: ok = open_patching(e, s, corrupt, err, n); break;
    default: snprintf(err, n, "--experiment: no drawn view of \"%s\"", e->name); break;
    }
    if (!ok) expview_free(e);
    return ok;
}

void expview_free(ExpView *e)
{
    free(e->rank);
    for (int k = 0; k < 2; k++) free(e->loss[k]), free(e->clean[k]), free(e->delta[k]);
    if (e->lens.top) logit_lens_free(&e->lens);
    if (e->dla.contrib) logit_attribution_free(&e->dla);
    if (e->patch.residual || e->patch.heads) patching_free(&e->patch);
    for (int d = 0; d <= EXPVIEW_DECIMALS; d++) free(e->dla_shown[d]);
    free(e->row_label);
    memset(e, 0, sizeof *e);
}
