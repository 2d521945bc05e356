// tip.c — the tooltip writer of tip.h.
#include "tip.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

TipOut tip_out(char *s, size_t n)
{
    if (n) s[0] = '\0';
    return (TipOut){s, n, 0, TIP_DECIMALS, false, false};
}

// An operand as o writes it (TipOut): exact whole numbers without decimals, or as the cells.
void tip_operand(const TipOut *o, float x, char *b, size_t n)
{
    if (o->cells && isfinite(x)) {
        snprintf(b, n, "%.*f", o->dec, (double)x);
        bool zero = true; // "-0.00" → "0.00", as the cells
        for (const char *p = b; *p; p++)
            if (*p >= '1' && *p <= '9') zero = false;
        if (zero && b[0] == '-') memmove(b, b + 1, strlen(b));
    } else if (isfinite(x) && x == rintf(x) && fabsf(x) < 1e5f) {
        snprintf(b, n, "%.0f", (double)(x == 0.0f ? 0.0f : x));
    } else if (isfinite(x) && fabsf(x) < 0.5f * 0.01f) { // tiny (scientific at TIP_DECIMALS): never fewer
        snprintf(b, n, "%.*e", o->dec > 4 ? o->dec - 2 : 2, (double)x); // significant digits than fixed point
    } else {
        tip_number_dec(x, o->dec, b, n);
    }
}

void tip_num(TipOut *o, float x, bool paren_neg)
{
    char b[40];
    tip_operand(o, x, b, sizeof b);
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
    char b[32];
    tip_number(x, b, sizeof b);
    tip_put(o, o->approx ? "\n≈ " : "\n= ");
    tip_put(o, b);
}

void tip_step(TipOut *o, float x)
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
    // the cell a tooltip explains is one of the tensor's (the caller's own indices)
    assert(t->rank < 2 || (r >= 0 && r < t->shape[t->rank - 2]));
    assert(t->rank < 3 || (b >= 0 && b < t->shape[0]));
    assert(t->rank < 4 || (h >= 0 && h < t->shape[1]));
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
    tip_operand(o, row[col], c, sizeof c), tip_operand(o, xhat, d, sizeof d);
    tip_operand(o, g, e, sizeof e), tip_operand(o, be, f, sizeof f);
    snprintf(gg, sizeof gg, "%d", n), snprintf(h, sizeof h, "%d", col);
    const char *args1[] = {gg, a, b};
    tip_key(o, lang, "tip.norm_stats", 3, args1);
    tip_put(o, "\n");
    const char *args2[] = {c, a, b, d};
    tip_key(o, lang, "tip.norm_hat", 4, args2);
    tip_put(o, "\n");
    const char *args3[] = {d, e, f, h};
    tip_key(o, lang, "tip.norm_affine", 4, args3);
    char v[32];
    tip_number(val, v, sizeof v);
    tip_put(o, o->approx ? " ≈ " : " = ");
    tip_put(o, v);
}

void tip_rms_norm(TipOut *o, Lang lang, const float *row, int n, int col, const Stage *st, float eps, float val)
{
    float ms = tensor_row_mean_square(row, n);   // as the core computes it
    float xhat = row[col] / sqrtf(ms + eps);
    float g = st->weight && tensor_present(st->weight) ? st->weight->data[col] : 1.0f;
    char a[32], c[40], d[32], e[32], gg[32], h[32];
    tip_number(ms, a, sizeof a);
    tip_paren_number(row[col], c, sizeof c), tip_operand(o, xhat, d, sizeof d);
    tip_operand(o, g, e, sizeof e);
    snprintf(gg, sizeof gg, "%d", n), snprintf(h, sizeof h, "%d", col);
    const char *args1[] = {gg, a};
    tip_key(o, lang, "tip.rms_stats", 2, args1);
    tip_put(o, "\n");
    const char *args2[] = {c, a, d};
    tip_key(o, lang, "tip.rms_hat", 3, args2);
    tip_put(o, "\n");
    const char *args3[] = {d, e, h};
    tip_key(o, lang, "tip.rms_affine", 3, args3);
    char v[32];
    tip_number(val, v, sizeof v);
    tip_put(o, o->approx ? " ≈ " : " = ");
    tip_put(o, v);
}

void tip_number(float x, char *buf, size_t n) { tip_number_dec(x, TIP_DECIMALS, buf, n); }

void tip_number_dec(float x, int d, char *buf, size_t n)
{
    if (d < 0) d = 0;
    if (isnan(x))
        snprintf(buf, n, "NaN");
    else if (isinf(x))
        snprintf(buf, n, x > 0 ? "∞" : "−∞");
    else if (x != 0.0f && (fabs((double)x) < 0.5 * pow(10.0, -d) || fabsf(x) >= 1e5f))
        snprintf(buf, n, "%.*e", d < 2 ? 2 : d, (double)x);
    else
        snprintf(buf, n, "%.*f", d, (double)(x == 0.0f ? 0.0f : x));
}

// ---- evaluating what a tooltip writes ------------------------------------------------------

typedef struct Ev {
    const char *p;
    int numbers, ops;
    bool bad;
} Ev;

typedef struct Iv {
    double v, lo, hi;
} Iv;

static void ev_space(Ev *e)
{
    while (*e->p == ' ') e->p++;
}

static bool ev_lit(Ev *e, const char *t)
{
    ev_space(e);
    size_t k = strlen(t);
    if (strncmp(e->p, t, k)) return false;
    e->p += k;
    return true;
}

static bool ev_minus(Ev *e) { return ev_lit(e, "-") || ev_lit(e, "−"); }

static double dmin4(double a, double b, double c, double d) { return fmin(fmin(a, b), fmin(c, d)); }
static double dmax4(double a, double b, double c, double d) { return fmax(fmax(a, b), fmax(c, d)); }

static Iv ev_expr(Ev *e);

static Iv ev_number(Ev *e)
{
    const char *p = e->p, *start = p;
    int dec = 0, ex = 0;
    bool point = false, digits = false;
    while ((*p >= '0' && *p <= '9') || (*p == '.' && !point)) {
        if (*p == '.') point = true;
        else if (point) dec++;
        digits |= *p != '.';
        p++;
    }
    if (!digits) {
        e->bad = true;
        return (Iv){0, 0, 0};
    }
    if ((*p == 'e' || *p == 'E') && (p[1] == '+' || p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) {
        char *end;
        ex = (int)strtol(p + 1, &end, 10);
        p = end;
    }
    char buf[64];
    size_t k = (size_t)(p - start) < sizeof buf - 1 ? (size_t)(p - start) : sizeof buf - 1;
    memcpy(buf, start, k);
    buf[k] = '\0';
    double v = strtod(buf, NULL);
    double half = point || ex ? 0.5 * pow(10.0, ex - dec) : 0.0; // a whole number without a point: exact
    e->p = p;
    e->numbers++;
    return (Iv){v, v - half, v + half};
}

static Iv ev_factor(Ev *e)
{
    ev_space(e);
    if (ev_minus(e)) {
        Iv a = ev_factor(e); // (a sign: "-0.46" is a number, not a sum)
        return (Iv){-a.v, -a.hi, -a.lo};
    }
    if (ev_lit(e, "exp(")) {
        Iv a = ev_expr(e);
        if (!ev_lit(e, ")")) e->bad = true;
        e->ops++;
        return (Iv){exp(a.v), exp(a.lo), exp(a.hi)};
    }
    if (ev_lit(e, "(")) {
        Iv a = ev_expr(e);
        if (!ev_lit(e, ")")) e->bad = true;
        return a;
    }
    return ev_number(e);
}

static Iv ev_term(Ev *e)
{
    Iv a = ev_factor(e);
    for (;;) {
        bool mul = ev_lit(e, "×") || ev_lit(e, "·");
        bool div = !mul && ev_lit(e, "/");
        if (!mul && !div) return a;
        Iv b = ev_factor(e);
        e->ops++;
        if (mul) {
            double p1 = a.lo * b.lo, p2 = a.lo * b.hi, p3 = a.hi * b.lo, p4 = a.hi * b.hi;
            a = (Iv){a.v * b.v, dmin4(p1, p2, p3, p4), dmax4(p1, p2, p3, p4)};
        } else {
            if (b.lo <= 0.0 && b.hi >= 0.0) e->bad = true; // an interval around 0: no bound
            double p1 = a.lo / b.lo, p2 = a.lo / b.hi, p3 = a.hi / b.lo, p4 = a.hi / b.hi;
            a = (Iv){a.v / b.v, dmin4(p1, p2, p3, p4), dmax4(p1, p2, p3, p4)};
        }
    }
}

static Iv ev_expr(Ev *e)
{
    Iv a = ev_term(e);
    for (;;) {
        bool add = ev_lit(e, "+");
        bool sub = !add && ev_minus(e);
        if (!add && !sub) return a;
        Iv b = ev_term(e);
        e->ops++;
        a = add ? (Iv){a.v + b.v, a.lo + b.lo, a.hi + b.hi} : (Iv){a.v - b.v, a.lo - b.hi, a.hi - b.lo};
    }
}

// Evaluates piece; *numbers and *ops: how many it has. False: not arithmetic.
static bool eval_piece(const char *piece, Iv *r, int *numbers, int *ops)
{
    Ev e = {piece, 0, 0, false};
    *r = ev_expr(&e);
    ev_space(&e);
    *numbers = e.numbers, *ops = e.ops;
    return !e.bad && !*e.p && isfinite(r->v) && isfinite(r->lo) && isfinite(r->hi);
}

bool tip_eval(const char *piece, double *val, double *lo, double *hi)
{
    Iv r;
    int nn, no;
    if (!eval_piece(piece, &r, &nn, &no)) return false;
    *val = r.v, *lo = r.lo, *hi = r.hi;
    return true;
}

// The pieces of text's chains, one at a time: a chain is a line and the lines after it
// that start with "= "; its pieces are split at " = ". Lines starting "≈ " end a chain
// that says it is approximate (approx).
typedef struct Piece {
    char s[320];      // (a longer piece is cut: not evaluated)
    bool chain_start; // the first piece of a chain
    bool approx;      // the chain ends in "≈ …"
} Piece;

static int split_pieces(const char *text, Piece *out, int max)
{
    int n = 0, chain0 = 0;
    const char *line = text;
    while (*line && n < max) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        bool cont = len >= 2 && !strncmp(line, "= ", 2), approx = !strncmp(line, "≈ ", strlen("≈ "));
        const char *inl = strstr(line, " ≈ ");
        bool inline_approx = inl && inl < line + len; // "… ≈ 2.58e-43": this chain says it is approximate
        if ((approx || inline_approx) && n > chain0 && (cont || approx)) {
            for (int i = chain0; i < n; i++) out[i].approx = true;
        }
        if (!cont && !approx) chain0 = n;
        const char *p = line + (cont ? 2 : approx ? strlen("≈ ") : 0), *stop = line + len;
        bool first = !cont && !approx;
        while (p <= stop && n < max) {
            const char *eq = strstr(p, " = ");
            if (!eq || eq > stop) eq = stop;
            size_t k = (size_t)(eq - p) < sizeof out[n].s - 1 ? (size_t)(eq - p) : sizeof out[n].s - 1;
            memcpy(out[n].s, p, k);
            out[n].s[k] = '\0';
            if (k < (size_t)(eq - p)) snprintf(out[n].s, sizeof out[n].s, "…"); // cut: not arithmetic
            out[n].chain_start = first;
            out[n].approx = approx || inline_approx;
            first = false;
            n++;
            p = eq + 3;
            if (eq == stop) break;
        }
        line = end ? end + 1 : line + len;
    }
    return n;
}

// The number a piece begins with ("1.00 rad, cos θ" → 1.00), as an interval; false: none.
static bool leading_number(const char *s, Iv *r)
{
    Ev e = {s, 0, 0, false};
    ev_space(&e);
    bool neg = ev_minus(&e);
    if (!(*e.p >= '0' && *e.p <= '9')) return false;
    *r = ev_number(&e);
    if (e.bad) return false;
    if (neg) *r = (Iv){-r->v, -r->hi, -r->lo};
    return !*e.p || *e.p == ' ' || *e.p == ',';
}

#define TIP_MAX_PIECES 40

bool tip_adds_up(const char *text, char *why, size_t n)
{
    Piece pc[TIP_MAX_PIECES]; // (13 KB on the stack)
    int np = split_pieces(text, pc, TIP_MAX_PIECES);
    for (int i = 0; i < np; i++) {
        Iv a;
        int nn, no;
        if (pc[i].approx || !eval_piece(pc[i].s, &a, &nn, &no) || no == 0) continue;
        // the nearest following piece of the chain that is not itself arithmetic: its number
        for (int j = i + 1; j < np && !pc[j].chain_start; j++) {
            Iv b;
            int nb, ob;
            if (eval_piece(pc[j].s, &b, &nb, &ob) && ob > 0) continue;
            if (!leading_number(pc[j].s, &b)) break;
            double half = (b.hi - b.lo) / 2.0;
            if (fabs(a.v - b.v) > half * (1.0 + 1e-9) + 1e-9 * fabs(b.v)) {
                if (why) snprintf(why, n, "\"%s\" is %.6g, not \"%s\" (±%.3g)", pc[i].s, a.v, pc[j].s, half);
                return false;
            }
            break;
        }
    }
    return true;
}

bool tip_bounds(const char *text, double *val, double *lo, double *hi)
{
    Piece pc[TIP_MAX_PIECES]; // (13 KB on the stack)
    int np = split_pieces(text, pc, TIP_MAX_PIECES), found = -1;
    for (int i = 0; i < np; i++) {
        Iv a;
        int nn, no;
        if (!eval_piece(pc[i].s, &a, &nn, &no) || nn < 2 || no == 0) continue;
        // the first such piece of its chain
        int c0 = i;
        while (c0 > 0 && !pc[c0].chain_start) c0--;
        bool first = true;
        for (int k = c0; k < i; k++) {
            Iv t;
            int n2, o2;
            if (eval_piece(pc[k].s, &t, &n2, &o2) && n2 >= 2 && o2 > 0) first = false;
        }
        if (first) {
            found = i;
            *val = a.v, *lo = a.lo, *hi = a.hi;
        }
    }
    return found >= 0;
}

// ---- where the box goes ------------------------------------------------------------------

static long overlap_area(Rect a, Rect b)
{
    int x0 = a.x > b.x ? a.x : b.x, x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w;
    int y0 = a.y > b.y ? a.y : b.y, y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    return x1 > x0 && y1 > y0 ? (long)(x1 - x0) * (y1 - y0) : 0;
}

TipCover tip_cover(const Layout *L, Rect box, const Rect *avoid, int n_avoid)
{
    TipCover c = {0, 0};
    for (int k = 0; k < n_avoid; k++) c.hard += overlap_area(box, avoid[k]);
    for (int p = 0; p < L->n_panels; p++) c.hard += overlap_area(box, L->caption[p]); // the titles
    if (L->result_panel >= 0 && L->result_panel < L->n_panels) {
        Rect r = L->panel[L->result_panel];
        long on = overlap_area(box, r), all = (long)r.w * r.h;
        if (3 * on > all) c.hard += on; // a third of the result, or more
    }
    // what else it covers, by what a reader loses: the numbers most, then the formula and the
    // controls, then the narration
    for (int p = 0; p < L->n_panels; p++) c.soft += overlap_area(box, L->panel[p]) * (p == L->result_panel ? 4 : 3);
    c.soft += 2 * (overlap_area(box, L->header) + overlap_area(box, L->timeline) + overlap_area(box, L->tabs));
    c.soft += overlap_area(box, L->narration) + overlap_area(box, L->legend);
    return c;
}

// Inside the output (the box as large as it is: its top-left corner first).
static Rect clamp_box(const Layout *L, int x, int y, int bw, int bh)
{
    x = x + bw > L->w ? L->w - bw : x, y = y + bh > L->h ? L->h - bh : y;
    return (Rect){x < 0 ? 0 : x, y < 0 ? 0 : y, bw, bh};
}

// The cost of a box: what it must not cover first, then what it covers, then how far from the cell.
static bool better(TipCover c, long dist, TipCover best, long best_dist)
{
    if (c.hard != best.hard) return c.hard < best.hard;
    return c.soft + dist < best.soft + best_dist;
}

void tip_place(const Layout *L, Rect cell, int bw, int bh, const Rect *avoid, int n_avoid, int *bx, int *by)
{
    int g = (int)lrintf(18 * L->s), cx = cell.x + cell.w / 2, cy = cell.y + cell.h / 2;
    TipCover best = {-1, 0};
    long best_dist = 0;
    // beside the cell (right, left), then below and above it, slid along it (the box always
    // across the cell's middle line) to where it covers least; only when each of those covers
    // what it must not, under or over the heatmaps, then anywhere
    enum { SLIDE = 9 };
    for (int side = 0; side < 4 + 2 && (side < 4 || best.hard > 0); side++)
        for (int k = 0; k < SLIDE; k++) {
            int x, y;
            if (side < 2) { // right, left: y from the box's top at the cell's middle to its bottom there
                x = side == 0 ? cell.x + cell.w + g : cell.x - g - bw;
                y = cy - bh + (bh * k) / (SLIDE - 1);
                if (k == 0) y = cell.y; // (first: level with the cell)
            } else if (side < 4) { // below, above: x likewise
                y = side == 2 ? cell.y + cell.h + g : cell.y - g - bh;
                x = cx - bw + (bw * k) / (SLIDE - 1);
                if (k == 0) x = cell.x;
            } else { // under, over the heatmaps
                y = side == 4 ? L->area.y + L->area.h + g / 2 : L->area.y - bh - g / 2;
                x = cx - bw + (bw * k) / (SLIDE - 1);
            }
            Rect b = clamp_box(L, x, y, bw, bh);
            TipCover c = tip_cover(L, b, avoid, n_avoid);
            long dist = labs((long)(b.x + bw / 2 - cx)) + labs((long)(b.y + bh / 2 - cy));
            if (best.hard < 0 || better(c, dist, best, best_dist)) best = c, best_dist = dist, *bx = b.x, *by = b.y;
        }
    if (best.hard == 0) return;
    // none keeps clear of what it must: the nearest place anywhere that does (or covers least
    // of it), on a grid of 1/64 of the output
    int sx = L->w / 64 > 1 ? L->w / 64 : 1, sy = L->h / 64 > 1 ? L->h / 64 : 1;
    for (int y = 0; y <= L->h - bh + sy - 1; y += sy)
        for (int x = 0; x <= L->w - bw + sx - 1; x += sx) {
            Rect b = clamp_box(L, x, y, bw, bh);
            TipCover c = tip_cover(L, b, avoid, n_avoid);
            long dist = labs((long)(b.x + bw / 2 - cx)) + labs((long)(b.y + bh / 2 - cy));
            if (better(c, dist, best, best_dist)) best = c, best_dist = dist, *bx = b.x, *by = b.y;
        }
}
