// tip.c — the tooltip writer of tip.h.
#include "tip.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "utf8.h"

void tip_put(TipOut *o, const char *t)
{
    size_t k = strlen(t);
    if (o->len + 1 >= o->n) return;
    if (k > o->n - 1 - o->len) k = utf8_floor(t, o->n - 1 - o->len); // cut, never inside a character
    memcpy(o->s + o->len, t, k);
    o->len += k;
    o->s[o->len] = '\0';
}

void tip_num(TipOut *o, float x, bool paren_neg)
{
    char b[32];
    tip_number(x, b, sizeof b);
    if (paren_neg && x < 0.0f) {
        tip_put(o, "(");
        tip_put(o, b);
        tip_put(o, ")");
    } else {
        tip_put(o, b);
    }
}

void tip_equals(TipOut *o, float x)
{
    tip_put(o, "\n= ");
    tip_num(o, x, false);
}

void tip_key(TipOut *o, Lang lang, const char *key, int nargs, const char *const *args)
{
    char b[256];
    i18n_fmt(b, sizeof b, lang, key, nargs, args);
    tip_put(o, b);
}

// "a0×b0 + a1×b1 + … (n terms)" for n terms with strides.
void tip_terms(TipOut *o, Lang lang, const float *a, int as, const float *b, int bs, int n)
{
    for (int k = 0; k < n && k < TIP_MAX_TERMS; k++) {
        if (k) tip_put(o, " + ");
        tip_num(o, a[(size_t)k * (size_t)as], true);
        tip_put(o, "×");
        tip_num(o, b[(size_t)k * (size_t)bs], true);
    }
    if (n > TIP_MAX_TERMS) {
        char nb[16];
        snprintf(nb, sizeof nb, "%d", n);
        const char *args[] = {nb};
        tip_put(o, " + ");
        tip_key(o, lang, "tip.terms", 1, args);
    }
}

// Pointer to row r of the (b, h) slice of a stage tensor.
const float *tip_row(const Tensor *t, int b, int h, int r)
{
    if (t->rank == 4)
        return t->data + ((((size_t)b * (size_t)t->shape[1] + (size_t)h) * (size_t)t->shape[2]) +
                          (size_t)r) * (size_t)t->shape[3];
    if (t->rank == 3)
        return t->data + ((size_t)b * (size_t)t->shape[1] + (size_t)r) * (size_t)t->shape[2];
    if (t->rank == 2) return t->data + (size_t)r * (size_t)t->shape[1];
    return t->data;
}

int tip_last_dim(const Tensor *t) { return t->shape[t->rank - 1]; }


// A number for inside a formula: negative ones in parentheses ("x − (−0.01)").
void tip_paren_number(float x, char *buf, size_t n)
{
    char t[24];
    tip_number(x, t, sizeof t);
    if (x < 0.0f)
        snprintf(buf, n, "(%s)", t);
    else
        snprintf(buf, n, "%s", t);
}

// LayerNorm of one row, every term: mean, variance, the normalised value, ·γ + β.
void tip_norm(TipOut *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val)
{
    float mean, var;
    tensor_row_moments(row, n, &mean, &var);   // as the core (PyTorch) computes them
    float xhat = (row[col] - mean) / sqrtf(var + eps);
    float g = st->weight && tensor_present(st->weight) ? st->weight->data[col] : 1.0f;
    float be = st->bias && tensor_present(st->bias) ? st->bias->data[col] : 0.0f;
    char a[40], b[32], c[32], d[32], e[32], f[32], gg[32], h[32];
    tip_paren_number(mean, a, sizeof a), tip_number(var, b, sizeof b);
    tip_number(row[col], c, sizeof c), tip_number(xhat, d, sizeof d);
    tip_number(g, e, sizeof e), tip_number(be, f, sizeof f);
    snprintf(gg, sizeof gg, "%d", n), snprintf(h, sizeof h, "%d", col);
    const char *args1[] = {gg, a, b};
    tip_key(o, lang, "tip.norm_stats", 3, args1);
    tip_put(o, "\n");
    const char *args2[] = {c, a, b, d};
    tip_key(o, lang, "tip.norm_hat", 4, args2);
    tip_put(o, "\n");
    const char *args3[] = {d, e, f, h};
    tip_key(o, lang, "tip.norm_affine", 4, args3);
    tip_put(o, " = ");
    tip_num(o, val, false);
}

void tip_number(float x, char *buf, size_t n)
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
