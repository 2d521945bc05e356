// explain.c — how each cell was computed, with the numbers (see explain.h).
#include "explain.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"
#include "scene.h"

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
static int imin_(int a, int b) { return a < b ? a : b; }

static void index_str(const PanelSpec *ps, const Stage *st, int b, int r, int c, char *buf,
                      size_t n)
{
    if (ps->is_weight && ps->vector)
        snprintf(buf, n, "%d", c);
    else if (ps->is_weight)
        snprintf(buf, n, "%d,%d", r, c); // as shown: Wᵀ[in, out]
    else if (st->t.rank == 4)
        snprintf(buf, n, "%d,%d,%d,%d", st->t.shape[0] == 1 ? 0 : b, ps->head, ps->transposed ? c : r, ps->transposed ? r : c);
    else if (st->t.rank == 3)
        snprintf(buf, n, "%d,%d,%d", b, r, c);
    else
        snprintf(buf, n, "%d,%d", r, c);
}

// x·Wᵀ + b for output feature c of row r; returns the pre-activation sum.
// Σₖ x[r,k]·W[c,k] + b[c] term by term, and a residual term z[r,c] when z is given
// (its symbol zsym); returns the sum.
static float put_linear(Out *o, Lang lang, const Trace *tr, const Tensor *x, const Stage *st, int b, int r, int c,
                        const char *zsym, const float *z)
{
    const Tensor *W = st->weight;
    int in = W->shape[1];
    const float *xr = row_of(x, b, 0, r), *wr = W->data + (size_t)c * (size_t)in;
    char rb[16], cb[16];
    snprintf(rb, sizeof rb, "%d", r), snprintf(cb, sizeof cb, "%d", c);
    int s = (int)(st - tr->stages);
    const char *args[] = {rb, cb, scene_symbol(tr, st->operands[0], lang), scene_weight_plain(tr, s),
                          scene_param_symbol(tr, s, true)};
    bool bias = st->bias && tensor_present(st->bias);
    put_key(o, lang, bias ? "tip.linear" : "tip.linear_nobias", 5, args);
    if (z) {
        char e[64];
        snprintf(e, sizeof e, " + %s[%d,%d]", zsym, r, c);
        put(o, e);
    }
    put(o, "\n= ");
    put_terms(o, lang, xr, 1, wr, 1, in);
    float sum = 0.0f;
    for (int k = 0; k < in; k++) sum += xr[k] * wr[k];
    if (bias) {
        put(o, " + ");
        put_num(o, st->bias->data[c], true);
        sum += st->bias->data[c];
    }
    if (z) {
        put(o, " + ");
        put_num(o, *z, true);
        sum += *z;
    }
    put(o, "\n= ");
    put_num(o, sum, false);
    return sum;
}

// A number for inside a formula: negative ones in parentheses ("x − (−0.01)").
static void paren_number(float x, char *buf, size_t n)
{
    char t[24];
    explain_number(x, t, sizeof t);
    if (x < 0.0f)
        snprintf(buf, n, "(%s)", t);
    else
        snprintf(buf, n, "%s", t);
}

// LayerNorm of one row, every term: mean, variance, the normalised value, ·γ + β.
static void put_norm(Out *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val)
{
    float mean, var;
    tensor_row_moments(row, n, &mean, &var);   // as the core (PyTorch) computes them
    float xhat = (row[col] - mean) / sqrtf(var + eps);
    float g = st->weight && tensor_present(st->weight) ? st->weight->data[col] : 1.0f;
    float be = st->bias && tensor_present(st->bias) ? st->bias->data[col] : 0.0f;
    char a[40], b[32], c[32], d[32], e[32], f[32], gg[32], h[32];
    paren_number(mean, a, sizeof a), explain_number(var, b, sizeof b);
    explain_number(row[col], c, sizeof c), explain_number(xhat, d, sizeof d);
    explain_number(g, e, sizeof e), explain_number(be, f, sizeof f);
    snprintf(gg, sizeof gg, "%d", n), snprintf(h, sizeof h, "%d", col);
    const char *args1[] = {gg, a, b};
    put_key(o, lang, "tip.norm_stats", 3, args1);
    put(o, "\n");
    const char *args2[] = {c, a, b, d};
    put_key(o, lang, "tip.norm_hat", 4, args2);
    put(o, "\n");
    const char *args3[] = {d, e, f, h};
    put_key(o, lang, "tip.norm_affine", 4, args3);
    put(o, " = ");
    put_num(o, val, false);
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
    char idx[48], num[32];
    index_str(ps, st, b, row, col, idx, sizeof idx);
    explain_number(val, num, sizeof num);
    bool masked = ps->mask && ps->mask[(size_t)row * (size_t)ps->cols + (size_t)col] == 0.0f;
    // the symbol, not the caption ("s", not "s = output + x"; Q[b,h,i,j], the head in the index)
    char sym[80];
    snprintf(sym, sizeof sym, "%s%s", v->delta ? "Δ" : "", ps->is_weight ? ps->title : scene_symbol(tr, ps->stage, lang));
    const char *hdr[] = {sym, idx, num};
    put_key(&o, lang, "tip.cell", 3, hdr);
    if (v->delta) { // a difference: no derivation of its own
        put(&o, "\n");
        put_key(&o, lang, "tip.delta", 0, NULL);
        return;
    }
    if (scene_cell_changed(ps, row, col)) { // the what-if lab: what it was
        char was[32];
        explain_number(ps->ref_one ? 1.0f : ps->ref[(size_t)row * (size_t)ps->rs + (size_t)col * (size_t)ps->cs],
                       was, sizeof was);
        const char *args[] = {was};
        put(&o, "\n");
        put_key(&o, lang, "tip.was", 1, args);
    }
    if (masked && !ps->result) {
        put(&o, "\n");
        put_key(&o, lang, "tip.masked_cell", 0, NULL);
    }
    if (ps->row_axis == AXIS_KEY || ps->col_axis == AXIS_KEY) {
        int j = ps->row_axis == AXIS_KEY ? row : col;
        if (scene_key_is_padding(tr, b, j)) {
            char jb[16];
            snprintf(jb, sizeof jb, "%d", j);
            const char *args[] = {jb};
            put(&o, "\n");
            put_key(&o, lang, "tip.padding", 1, args);
        }
    }
    if (!ps->result) return; // operands: their own stage explains them
    put(&o, "\n");

    const int *op = st->operands;
    const Tensor *t0 = op[0] >= 0 ? &tr->stages[op[0]].t : NULL;
    const Tensor *t1 = op[1] >= 0 ? &tr->stages[op[1]].t : NULL;
    char a0[32], a1[32], a2[32];
    switch (scene_recipe(st->kind)->tip) {
    case TIP_LINEAR:
        if (t0 && st->weight) put_linear(&o, lang, tr, t0, st, b, row, col, NULL, NULL);
        break;
    case TIP_LINEAR_RELU:
        if (t0 && st->weight) {
            float s = put_linear(&o, lang, tr, t0, st, b, row, col, NULL, NULL);
            explain_number(s, a0, sizeof a0), explain_number(val, a1, sizeof a1);
            const char *args[] = {a0, a1};
            put(&o, "\n");
            put_key(&o, lang, "tip.relu", 2, args);
        }
        break;
    case TIP_LINEAR_RESIDUAL:
        if (t0 && t1 && st->weight) {
            put_linear(&o, lang, tr, t0, st, b, row, col, NULL, NULL); // h·W₂ᵀ + b₂
            const float *zr = row_of(t1, b, 0, row);
            put(&o, " + ");
            put(&o, scene_symbol(tr, op[1], lang));
            put(&o, " ");
            put_num(&o, zr[col], true);
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case TIP_DOT:
        if (t0 && t1) {
            int dk = last_dim(t0);
            const float *q = row_of(t0, b, h, row), *k = row_of(t1, b, trace_kv_head(tr, t1, h), col);
            snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
            explain_number(tr->scale, a2, sizeof a2);
            const char *args[] = {a0, a1, a2};
            bool scaled = tr->scale != 1.0f;
            put_key(&o, lang, scaled ? "tip.scores" : "tip.scores_noscale", 3, args);
            put(&o, scaled ? "\n= (" : "\n= ");
            put_terms(&o, lang, q, 1, k, 1, dk);
            if (scaled) {
                put(&o, ") / ");
                put(&o, a2);
            }
            if (op[2] >= 0) { // ALiBi: the position bias of this cell, added after the scale
                const Tensor *pb = &tr->stages[op[2]].t;
                put(&o, " + ");
                put_num(&o, row_of(pb, 0, h, row)[col], true);
                put(&o, "\n");
                put_key(&o, lang, "tip.scores_bias", 0, NULL);
            }
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case TIP_ROPE:
        if (t0 && ps->head >= 0) {
            // position row, dimension col: which pair, turned by which angle
            int d = last_dim(t0), half = d / 2;
            bool halves = tr->rope == ROPE_HALF;
            int pair = halves ? col % half : col / 2;
            bool first = halves ? col < half : col % 2 == 0;
            int partner = halves ? (first ? col + half : col - half) : (first ? col + 1 : col - 1);
            float inv = attn_rope_inv_freq(pair, d, tr->rope_theta);
            float ang = (float)row * inv, c = cosf(ang), sn = sinf(ang);
            const float *x = row_of(t0, b, h, row);
            char ab[32], cb[32], sb[32], pb[16], rb[16], ib[32];
            explain_number(ang, ab, sizeof ab), explain_number(c, cb, sizeof cb), explain_number(sn, sb, sizeof sb);
            explain_number(inv, ib, sizeof ib);
            snprintf(pb, sizeof pb, "%d", pair), snprintf(rb, sizeof rb, "%d", row);
            const char *args[] = {rb, pb, ib, ab, cb, sb};
            put_key(&o, lang, "tip.rope", 6, args);
            snprintf(a0, sizeof a0, "%d", col), snprintf(a1, sizeof a1, "%d", partner);
            const char *args2[] = {scene_symbol(tr, op[0], lang), a0, a1};
            put(&o, "\n");
            put_key(&o, lang, first ? "tip.rope_first" : "tip.rope_second", 3, args2);
            put(&o, "\n= ");
            put_num(&o, x[col], false);
            put(&o, " · ");
            put_num(&o, c, true);
            put(&o, first ? " − " : " + ");
            put_num(&o, x[partner], true);
            put(&o, " · ");
            put_num(&o, sn, true);
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case TIP_FLASH: {
        // the running value after key block col, from the one before and the tile's scores
        int ms = trace_find(tr, "masked_scores"), fm = trace_find(tr, "flash_max"), fl = trace_find(tr, "flash_sum");
        if (ms < 0 || fm < 0 || fl < 0 || tr->flash_block_k < 1) break;
        const Tensor *S = &tr->stages[ms].t, *M = &tr->stages[fm].t, *Ls = &tr->stages[fl].t;
        int bk = tr->flash_block_k, j0 = col * bk, j1 = imin_(j0 + bk, tr->len_k) - 1;
        const float *srow = row_of(S, b, h, row), *mrow = row_of(M, b, h, row), *lrow = row_of(Ls, b, h, row);
        float rmax = -INFINITY, m = mrow[col], mold = col > 0 ? mrow[col - 1] : -INFINITY;
        for (int j = j0; j <= j1; j++) rmax = srow[j] > rmax ? srow[j] : rmax;
        char k0[16], k1[16], x0[32], x1[32], x2[32];
        snprintf(k0, sizeof k0, "%d", j0), snprintf(k1, sizeof k1, "%d", j1);
        if (!strcmp(st->name, "flash_max")) {
            explain_number(mold, x0, sizeof x0), explain_number(rmax, x1, sizeof x1);
            const char *args[] = {k0, k1, x0, x1};
            put_key(&o, lang, "tip.flash_max", 4, args);
        } else {
            float ref = isinf(m) && m < 0 ? 0.0f : m, sum = 0.0f;
            for (int j = j0; j <= j1; j++) sum += expf(srow[j] - ref);
            explain_number(col > 0 ? lrow[col - 1] : 0.0f, x0, sizeof x0), explain_number(expf(mold - ref), x1, sizeof x1);
            explain_number(sum, x2, sizeof x2);
            const char *args[] = {k0, k1, x0, x1, x2};
            put_key(&o, lang, "tip.flash_sum", 5, args);
        }
        put(&o, "\n= ");
        put_num(&o, val, false);
        break;
    }
    case TIP_EQUAL: {
        // flash_out: head_out (operand 0); decode_output: output (operand 2)
        int other = st->kind == STAGE_KIND_FLASH_OUT ? op[0] : op[2];
        if (other < 0) break;
        const Tensor *t = &tr->stages[other].t;
        float x = row_of(t, b, h, row)[col];
        char tb[16], xb[32];
        snprintf(tb, sizeof tb, "%d", row), explain_number(x, xb, sizeof xb);
        const char *args[] = {tb, scene_symbol(tr, other, lang), xb};
        put_key(&o, lang, st->kind == STAGE_KIND_FLASH_OUT ? "tip.flash_out" : "tip.decode", 3, args);
        break;
    }
    case TIP_CACHE: {
        char tb[16], lb[16];
        snprintf(tb, sizeof tb, "%d", row), snprintf(lb, sizeof lb, "%d", tr->len_q - 1);
        const char *args[] = {tb, lb};
        put_key(&o, lang, "tip.cache", 2, args);
        break;
    }
    case TIP_POS_BIAS: {
        double m = attn_alibi_slope(h, tr->n_heads);
        char mb[32];
        explain_number((float)m, mb, sizeof mb);
        snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
        snprintf(a2, sizeof a2, "%d", h);
        const char *args[] = {a2, mb, a0, a1};
        put_key(&o, lang, "tip.alibi", 4, args);
        put(&o, "\n= ");
        put_num(&o, val, false);
        break;
    }
    case TIP_MASK_FILL:
        if (!ps->mask) {
            put_key(&o, lang, "tip.nomask", 0, NULL);
        } else {
            snprintf(a0, sizeof a0, "%d,%d,%d", b, row, col);
            if (masked)
                scene_fill_text(tr->mask_fill, a1, sizeof a1);
            else
                explain_number(val, a1, sizeof a1);
            const char *args[] = {a0, a1};
            put_key(&o, lang, masked ? "tip.masked_yes" : "tip.masked_no", 2, args);
        }
        break;
    case TIP_SOFTMAX:
        if (t0) {
            int lk = last_dim(t0);
            const float *x = row_of(t0, b, h, row);
            float mx = -INFINITY;
            for (int j = 0; j < lk; j++) // as tensor_softmax_rows: a NaN score makes the max NaN
                if (x[j] > mx || isnan(x[j])) mx = x[j];
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
    case TIP_WEIGHTED_SUM:
        if (t0 && t1) {
            int lk = last_dim(t0), dv = last_dim(t1);
            const float *a = row_of(t0, b, h, row), *vv = row_of(t1, b, trace_kv_head(tr, t1, h), 0) + col;
            snprintf(a0, sizeof a0, "%d", row), snprintf(a1, sizeof a1, "%d", col);
            const char *args[] = {a0, a1};
            put_key(&o, lang, "tip.wsum", 2, args);
            put(&o, "\n= ");
            put_terms(&o, lang, a, 1, vv, dv, lk);
            put(&o, "\n= ");
            put_num(&o, val, false);
        }
        break;
    case TIP_COPY_SPLIT:
        if (t0) {
            int d = last_dim(&st->t);
            snprintf(a1, sizeof a1, "%d,%d,%d", b, row, h * d + col);
            const char *args[] = {scene_symbol(tr, op[0], lang), a1};
            put_key(&o, lang, "tip.copy", 2, args);
        }
        break;
    case TIP_COPY_CONCAT:
        if (t0) {
            int d = last_dim(t0);
            snprintf(a1, sizeof a1, "%d,%d,%d,%d", b, col / d, row, col % d);
            const char *args[] = {scene_symbol(tr, op[0], lang), a1};
            put_key(&o, lang, "tip.copy", 2, args);
        }
        break;
    case TIP_ADD:
        if (t0 && t1) {
            put(&o, "= ");
            put_num(&o, row_of(t0, b, 0, row)[col], false);
            put(&o, " + ");
            put_num(&o, row_of(t1, b, 0, row)[col], true);
        }
        break;
    case TIP_NORM:
        if (t0) put_norm(&o, lang, row_of(t0, b, 0, row), last_dim(t0), col, st, tr->norm_eps, val);
        break;
    default:
        break;
    }
}

void explain_row_sum(const Trace *tr, const View *v, const Layout *L, int p, int row, char *out, size_t n)
{
    Out o = {out, n, 0};
    if (n) out[0] = '\0';
    if (p < 0 || p >= L->n_panels) return;
    const PanelSpec *ps = &L->spec[p];
    (void)tr;
    char rb[16];
    snprintf(rb, sizeof rb, "%d", row);
    const char *args[] = {rb};
    put_key(&o, v->lang, "tip.rowsum", 1, args);
    put(&o, "\n= ");
    float sum = 0.0f;
    for (int j = 0; j < ps->cols; j++) {
        float x = panel_value(ps, row, j);
        sum += x;
        if (j < EXPLAIN_MAX_TERMS) {
            if (j) put(&o, " + ");
            put_num(&o, x, false);
        }
    }
    if (ps->cols > EXPLAIN_MAX_TERMS) {
        char nb[16];
        snprintf(nb, sizeof nb, "%d", ps->cols);
        const char *a2[] = {nb};
        put(&o, " + ");
        put_key(&o, v->lang, "tip.terms", 1, a2);
    }
    put(&o, "\n= ");
    put_num(&o, sum, false);
}
