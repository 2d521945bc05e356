// explain.c — how each cell was computed, with the numbers (see explain.h).
#include "explain.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"

void explain_number(float x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "NaN");
    else if (isinf(x))
        snprintf(buf, n, x > 0 ? "∞" : "−∞");
    else if (x != 0.0f && (fabsf(x) < 0.005f || fabsf(x) >= 1e5f))
        snprintf(buf, n, "%.2e", (double)x);
    else
        snprintf(buf, n, "%.2f", (double)(x == 0.0f ? 0.0f : x));
}

// Appends to a bounded buffer.
typedef struct Out {
    char *s;
    size_t n, len;
} Out;

static void put(Out *o, const char *t)
{
    size_t k = strlen(t);
    if (o->len + 1 >= o->n) return;
    if (k > o->n - 1 - o->len) k = o->n - 1 - o->len;
    memcpy(o->s + o->len, t, k);
    o->len += k;
    o->s[o->len] = '\0';
}

static void put_num(Out *o, float x, bool paren_neg)
{
    char b[32];
    explain_number(x, b, sizeof b);
    if (paren_neg && x < 0.0f) {
        put(o, "(");
        put(o, b);
        put(o, ")");
    } else {
        put(o, b);
    }
}

static void put_key(Out *o, Lang lang, const char *key, int nargs, const char *const *args)
{
    char b[256];
    i18n_fmt(b, sizeof b, lang, key, nargs, args);
    put(o, b);
}

// "a0×b0 + a1×b1 + … (n terms)" for n terms with strides.
static void put_terms(Out *o, Lang lang, const float *a, int as, const float *b, int bs, int n)
{
    for (int k = 0; k < n && k < EXPLAIN_MAX_TERMS; k++) {
        if (k) put(o, " + ");
        put_num(o, a[(size_t)k * (size_t)as], true);
        put(o, "×");
        put_num(o, b[(size_t)k * (size_t)bs], true);
    }
    if (n > EXPLAIN_MAX_TERMS) {
        char nb[16];
        snprintf(nb, sizeof nb, "%d", n);
        const char *args[] = {nb};
        put(o, " + ");
        put_key(o, lang, "tip.terms", 1, args);
    }
}

// Pointer to row r of the (b, h) slice of a stage tensor.
static const float *row_of(const Tensor *t, int b, int h, int r)
{
    if (t->rank == 4)
        return t->data + ((((size_t)b * (size_t)t->shape[1] + (size_t)h) * (size_t)t->shape[2]) +
                          (size_t)r) * (size_t)t->shape[3];
    if (t->rank == 3)
        return t->data + ((size_t)b * (size_t)t->shape[1] + (size_t)r) * (size_t)t->shape[2];
    if (t->rank == 2) return t->data + (size_t)r * (size_t)t->shape[1];
    return t->data;
}

static int last_dim(const Tensor *t) { return t->shape[t->rank - 1]; }

static void index_str(const PanelSpec *ps, const Stage *st, int b, int r, int c, char *buf,
                      size_t n)
{
    if (ps->is_weight)
        snprintf(buf, n, "%d,%d", c, r); // shown transposed: W[out, in]
    else if (st->t.rank == 4)
        snprintf(buf, n, "%d,%d,%d,%d", b, ps->head, ps->transposed ? c : r, ps->transposed ? r : c);
    else if (st->t.rank == 3)
        snprintf(buf, n, "%d,%d,%d", b, r, c);
    else
        snprintf(buf, n, "%d,%d", r, c);
}

// x·Wᵀ + b for output feature c of row r; returns the pre-activation sum.
static float put_linear(Out *o, Lang lang, const Tensor *x, const Stage *st, int b, int r, int c)
{
    const Tensor *W = st->weight;
    int in = W->shape[1];
    const float *xr = row_of(x, b, 0, r), *wr = W->data + (size_t)c * (size_t)in;
    char rb[16], cb[16];
    snprintf(rb, sizeof rb, "%d", r), snprintf(cb, sizeof cb, "%d", c);
    const char *args[] = {rb, cb};
    bool bias = st->bias && tensor_present(st->bias);
    put_key(o, lang, bias ? "tip.linear" : "tip.linear_nobias", 2, args);
    put(o, "\n= ");
    put_terms(o, lang, xr, 1, wr, 1, in);
    float sum = 0.0f;
    for (int k = 0; k < in; k++) sum += xr[k] * wr[k];
    if (bias) {
        put(o, " + ");
        put_num(o, st->bias->data[c], true);
        sum += st->bias->data[c];
    }
    put(o, "\n= ");
    put_num(o, sum, false);
    return sum;
}

// mean and biased variance of a row, for the LayerNorm explanations.
static void put_norm(Out *o, Lang lang, const float *row, int n, float x)
{
    float mean = 0.0f, var = 0.0f;
    for (int k = 0; k < n; k++) mean += row[k];
    mean /= (float)n;
    for (int k = 0; k < n; k++) var += (row[k] - mean) * (row[k] - mean);
    var /= (float)n;
    char a[32], bb[32], c[32];
    explain_number(mean, a, sizeof a), explain_number(var, bb, sizeof bb);
    explain_number(x, c, sizeof c);
    const char *args[] = {a, bb, c};
    put(o, "\n");
    put_key(o, lang, "tip.norm", 3, args);
}

void explain_cell(const Trace *tr, const View *v, const Layout *L, int p, int row, int col,
                  char *out, size_t n)
{
    Out o = {out, n, 0};
    if (n) out[0] = '\0';
    if (p < 0 || p >= L->n_panels) return;
    const PanelSpec *ps = &L->spec[p];
    const Stage *st = &tr->stages[ps->stage];
    Lang lang = v->lang;
    int b = v->batch < tr->batch ? v->batch : 0, h = ps->head < 0 ? 0 : ps->head;
    float val = panel_value(ps, row, col);

    // header line: name[index] = value
    char key[48], idx[48], num[32];
    snprintf(key, sizeof key, "%s.%s", ps->is_weight ? "wname" : "name", st->name);
    index_str(ps, st, b, row, col, idx, sizeof idx);
    explain_number(val, num, sizeof num);
    bool masked = ps->mask && ps->mask[(size_t)row * (size_t)ps->cols + (size_t)col] == 0.0f;
    const char *hdr[] = {ps->is_weight ? "W" : i18n_get(lang, key), idx, num};
    put_key(&o, lang, "tip.cell", 3, hdr);
    if (!ps->result) return; // operands: their own stage explains them
    put(&o, "\n");

    const int *op = st->operands;
    const Tensor *t0 = op[0] >= 0 ? &tr->stages[op[0]].t : NULL;
    const Tensor *t1 = op[1] >= 0 ? &tr->stages[op[1]].t : NULL;
    char a0[32], a1[32], a2[32];
    switch (st->kind) {
    case STAGE_KIND_PROJECTION:
    case STAGE_KIND_OUT_PROJ:
        if (t0 && st->weight) put_linear(&o, lang, t0, st, b, row, col);
        break;
    case STAGE_KIND_FFN_HIDDEN:
        if (t0 && st->weight) {
            float s = put_linear(&o, lang, t0, st, b, row, col);
            explain_number(s, a0, sizeof a0), explain_number(val, a1, sizeof a1);
            const char *args[] = {a0, a1};
            put(&o, "\n");
            put_key(&o, lang, "tip.relu", 2, args);
        }
        break;
    case STAGE_KIND_FFN_OUT:
        if (t0 && t1 && st->weight) {
            put_linear(&o, lang, t0, st, b, row, col);
            // pre-norm row: h·W₂ᵀ + b₂ + x
            const Tensor *W = st->weight;
            int C = W->shape[0], F = W->shape[1];
            const float *hr = row_of(t0, b, 0, row), *xr = row_of(t1, b, 0, row);
            float pre[LESSON_MAX_D_MODEL];
            int m = C < LESSON_MAX_D_MODEL ? C : LESSON_MAX_D_MODEL;
            for (int j = 0; j < m; j++) {
                float s = st->bias && tensor_present(st->bias) ? st->bias->data[j] : 0.0f;
                for (int k = 0; k < F; k++) s += hr[k] * W->data[(size_t)j * (size_t)F + (size_t)k];
                pre[j] = s + xr[j];
            }
            put(&o, " + x ");
            put_num(&o, xr[col], true);
            if (m == C) put_norm(&o, lang, pre, C, pre[col]);
        }
        break;
    case STAGE_KIND_SCORES:
        if (t0 && t1) {
            int dk = last_dim(t0);
            const float *q = row_of(t0, b, h, row), *k = row_of(t1, b, h, col);
            snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
            explain_number(tr->scale, a2, sizeof a2);
            const char *args[] = {a0, a1, a2};
            put_key(&o, lang, "tip.scores", 3, args);
            put(&o, "\n= (");
            put_terms(&o, lang, q, 1, k, 1, dk);
            put(&o, ") / ");
            put(&o, a2);
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case STAGE_KIND_MASKED:
        if (!ps->mask) {
            put_key(&o, lang, "tip.nomask", 0, NULL);
        } else {
            snprintf(a0, sizeof a0, "%d,%d,%d", b, row, col);
            explain_number(masked ? tr->mask_fill : val, a1, sizeof a1);
            const char *args[] = {a0, a1};
            put_key(&o, lang, masked ? "tip.masked_yes" : "tip.masked_no", 2, args);
        }
        break;
    case STAGE_KIND_SOFTMAX:
        if (t0) {
            int lk = last_dim(t0);
            const float *x = row_of(t0, b, h, row);
            float mx = -INFINITY;
            for (int j = 0; j < lk; j++) mx = x[j] > mx ? x[j] : mx;
            put_key(&o, lang, "tip.softmax", 0, NULL);
            if (isinf(mx) && mx < 0) {
                put(&o, "\n");
                put_key(&o, lang, "tip.softmax_nan", 0, NULL);
                break;
            }
            float sum = 0.0f;
            for (int j = 0; j < lk; j++) sum += expf(x[j] - mx);
            put(&o, "\n= exp(");
            put_num(&o, x[col], false);
            put(&o, " − ");
            put_num(&o, mx, true);
            put(&o, ") / ");
            put_num(&o, sum, false);
            put(&o, "\n= ");
            put_num(&o, expf(x[col] - mx), false);
            put(&o, " / ");
            put_num(&o, sum, false);
            put(&o, " = ");
            put_num(&o, val, false);
        }
        break;
    case STAGE_KIND_WEIGHTED_SUM:
        if (t0 && t1) {
            int lk = last_dim(t0), dv = last_dim(t1);
            const float *a = row_of(t0, b, h, row), *vv = row_of(t1, b, h, 0) + col;
            snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
            const char *args[] = {a0, a1};
            put_key(&o, lang, "tip.wsum", 2, args);
            put(&o, "\n= ");
            put_terms(&o, lang, a, 1, vv, dv, lk);
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case STAGE_KIND_SPLIT:
        if (t0) {
            int d = last_dim(&st->t);
            snprintf(a1, sizeof a1, "%d,%d,%d", b, row, h * d + col);
            const char *args[] = {i18n_get(lang, op[0] >= 0 && !strcmp(tr->stages[op[0]].name, "k_proj")
                                                      ? "name.k_proj"
                                                  : !strcmp(tr->stages[op[0]].name, "v_proj") ? "name.v_proj"
                                                                                               : "name.q_proj"),
                                  a1};
            put_key(&o, lang, "tip.copy", 2, args);
        }
        break;
    case STAGE_KIND_CONCAT:
        if (t0) {
            int d = last_dim(t0);
            snprintf(a1, sizeof a1, "%d,%d,%d,%d", b, col / d, row, col % d);
            const char *args[] = {i18n_get(lang, "name.head_out"), a1};
            put_key(&o, lang, "tip.copy", 2, args);
        }
        break;
    case STAGE_KIND_ADD_NORM:
        if (t0 && t1) {
            int C = last_dim(&st->t);
            const float *orow = row_of(t0, b, 0, row), *xrow = row_of(t1, b, 0, row);
            float pre[LESSON_MAX_D_MODEL];
            int m = C < LESSON_MAX_D_MODEL ? C : LESSON_MAX_D_MODEL;
            for (int j = 0; j < m; j++) pre[j] = orow[j] + xrow[j];
            put_num(&o, orow[col], false);
            put(&o, " + ");
            put_num(&o, xrow[col], true);
            put(&o, " = ");
            put_num(&o, pre[col < m ? col : 0], false);
            if (m == C) put_norm(&o, lang, pre, C, pre[col]);
        }
        break;
    default:
        break;
    }
}
