// optim.c — SGD and AdamW as torch.optim defines them, and the training loop (optim.h).
#include "optim.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *optim_kind_name(OptimKind k) { return k == OPTIM_SGD ? "sgd" : "adamw"; }

// ---- the option ---------------------------------------------------------------------------

// One key=value of spec into o; false with the error in err.
static bool parse_pair(OptimConfig *o, const char *pair, size_t n, const char *arg, char *err, size_t err_len)
{
    const char *eq = memchr(pair, '=', n);
    const int klen = eq ? (int)(eq - pair) : (int)n;
    static const struct { const char *key; size_t off; int kind; } KEYS[] = {
        // kind: 0 both, 1 SGD, 2 AdamW; the checks below by key
        {"lr", offsetof(OptimConfig, lr), 0},         {"weight_decay", offsetof(OptimConfig, weight_decay), 0},
        {"momentum", offsetof(OptimConfig, momentum), 1}, {"beta1", offsetof(OptimConfig, beta1), 2},
        {"beta2", offsetof(OptimConfig, beta2), 2},   {"eps", offsetof(OptimConfig, eps), 2},
        {"steps", 0, 0},                              {"cosine", 0, 0},
    };
    int k = 0, nk = (int)(sizeof KEYS / sizeof KEYS[0]);
    while (k < nk && !((int)strlen(KEYS[k].key) == klen && !strncmp(KEYS[k].key, pair, (size_t)klen))) k++;
    const int want = o->kind == OPTIM_SGD ? 1 : 2;
    if (k == nk || (KEYS[k].kind && KEYS[k].kind != want) || !eq) {
        snprintf(err, err_len, "%s: %.*s: %s; expected key=value with a key of %s: %s", arg, (int)n, pair,
                 k == nk || (KEYS[k].kind && KEYS[k].kind != want) ? "unknown key" : "no value", optim_kind_name(o->kind),
                 o->kind == OPTIM_SGD ? "lr, momentum, weight_decay, steps, cosine"
                                      : "lr, beta1, beta2, eps, weight_decay, steps, cosine");
        return false;
    }
    char val[64];
    const int vlen = (int)(n - (size_t)klen - 1);
    snprintf(val, sizeof val, "%.*s", vlen < 63 ? vlen : 63, eq + 1);
    char *end = NULL;
    errno = 0;
    if (KEYS[k].key[0] == 's' || KEYS[k].key[0] == 'c') { // steps, cosine: a count of steps
        const bool steps = KEYS[k].key[0] == 's';
        const long max = steps ? OPTIM_MAX_STEPS : OPTIM_MAX_TRAIN, s = strtol(val, &end, 10);
        if (vlen == 0 || vlen > 63 || *end || errno || s < 1 || s > max) {
            snprintf(err, err_len, "%s: %s=%s: expected a whole number of steps from 1 to %ld", arg, KEYS[k].key, val,
                     max);
            return false;
        }
        *(steps ? &o->steps : &o->cosine) = (int)s;
        o->steps_given |= steps;
        return true;
    }
    const double d = strtod(val, &end);
    const char *key = KEYS[k].key;
    const bool positive = !strcmp(key, "lr") || !strcmp(key, "eps"), fraction = key[0] == 'b' || key[0] == 'm';
    const bool ok = vlen > 0 && vlen <= 63 && !*end && isfinite(d) &&
                    (positive ? d > 0.0 : fraction ? d >= 0.0 && d < 1.0 : d >= 0.0);
    if (!ok) {
        snprintf(err, err_len, "%s: %s=%s: expected a finite number %s", arg, key, val,
                 positive ? "> 0" : fraction ? "from 0 to below 1" : "≥ 0");
        return false;
    }
    *(double *)((char *)o + KEYS[k].off) = d;
    return true;
}

bool optim_parse(OptimConfig *o, const char *spec, const char *arg, char *err, size_t err_len)
{
    const char *colon = strchr(spec, ':');
    const size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    memset(o, 0, sizeof *o);
    if (nlen == 3 && !strncmp(spec, "sgd", 3)) {
        *o = (OptimConfig){OPTIM_SGD, 1e-3, 0.0, 0.0, 0.9, 0.999, 1e-8, 1, 0, false};
    } else if (nlen == 5 && !strncmp(spec, "adamw", 5)) {
        *o = (OptimConfig){OPTIM_ADAMW, 1e-3, 0.0, 1e-2, 0.9, 0.999, 1e-8, 1, 0, false};
    } else {
        snprintf(err, err_len, "%s: %.*s: unknown optimizer; expected sgd or adamw, then optionally :key=value,… "
                 "(e.g. adamw:lr=0.01,steps=5)", arg, (int)(nlen < 40 ? nlen : 40), spec);
        return false;
    }
    for (const char *p = colon ? colon + 1 : NULL; p;) {
        const char *comma = strchr(p, ',');
        const size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (!parse_pair(o, p, n, arg, err, err_len)) return false;
        const size_t klen = (size_t)(strchr(p, '=') - p); // (parse_pair: the pair has a value)
        for (const char *q = colon + 1; q < p; q = strchr(q, ',') + 1) // (a key given twice: not the last silently)
            if (!strncmp(q, p, klen + 1)) {
                snprintf(err, err_len, "%s: %.*s: %.*s given twice; expected each key once", arg, (int)n, p, (int)klen, p);
                return false;
            }
        p = comma ? comma + 1 : NULL;
    }
    return true;
}

double optim_lr_at(const OptimConfig *cfg, int done)
{
    if (cfg->cosine <= 0) return cfg->lr;
    const int s = done < cfg->cosine ? done : cfg->cosine;
    return cfg->lr * 0.5 * (1.0 + cos(3.14159265358979323846 * s / cfg->cosine));
}

// ---- the optimizer ------------------------------------------------------------------------

void optim_init(Optim *o, const OptimConfig *cfg)
{
    memset(o, 0, sizeof *o);
    o->cfg = *cfg;
}

void optim_free(Optim *o)
{
    for (int l = 0; l < TRACE_MAX_LAYERS; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) tensor_free(&o->m[l][s]), tensor_free(&o->v[l][s]);
    memset(o, 0, sizeof *o);
}

// SGD on n values: g = dW + λ·W; b = g (first step) or μ·b + g; W −= η·b (or η·g without momentum).
static void sgd_update(const OptimConfig *c, bool first, float *w, const float *dw, float *buf, size_t n)
{
    const float lam = (float)c->weight_decay, mu = (float)c->momentum, neg_lr = (float)-c->lr;
    for (size_t k = 0; k < n; k++) {
        float g = dw[k];
        if (c->weight_decay != 0.0) g = g + lam * w[k];
        if (c->momentum != 0.0) g = buf[k] = first ? g : buf[k] * mu + g;
        w[k] = w[k] + neg_lr * g;
    }
}

// AdamW on n values at step t (1-based), torch's _single_tensor_adamw.
static void adamw_update(const OptimConfig *c, int t, float *w, const float *dw, float *m, float *v, size_t n)
{
    const double bc1 = 1.0 - pow(c->beta1, t), bc2 = 1.0 - pow(c->beta2, t);
    const float decay = (float)(1.0 - c->lr * c->weight_decay), b1 = (float)c->beta1, b2 = (float)c->beta2;
    const float a1 = (float)(1.0 - c->beta1), a2 = (float)(1.0 - c->beta2), eps = (float)c->eps;
    const float bc2_sqrt = (float)sqrt(bc2), neg_step = (float)-(c->lr / bc1);
    for (size_t k = 0; k < n; k++) {
        const float g = dw[k];
        w[k] = w[k] * decay;
        m[k] = m[k] * b1 + a1 * g;
        v[k] = v[k] * b2 + a2 * g * g;
        const float denom = sqrtf(v[k]) / bc2_sqrt + eps;
        w[k] = w[k] + neg_step * m[k] / denom;
    }
}

// The state tensor of weight (l, s) shaped as dw, zeroed at its first use; false when out of memory.
static bool state_for(Tensor *st, const Tensor *dw)
{
    return tensor_present(st) || tensor_init(st, dw->rank, dw->shape);
}

bool optim_step(Optim *o, AttnWeights *w, const Grads *g)
{
    const bool sgd = o->cfg.kind == OPTIM_SGD, momentum = sgd && o->cfg.momentum != 0.0;
    for (int l = 0; l < g->n_layers; l++) // every state first: out of memory changes nothing
        for (int s = 0; s < WEIGHT_COUNT; s++) {
            const Tensor *dw = &g->dw[l][s];
            if (!tensor_present(dw)) continue;
            if ((momentum || !sgd) && !state_for(&o->m[l][s], dw)) return false;
            if (!sgd && !state_for(&o->v[l][s], dw)) return false;
        }
    const int t = ++o->t;
    for (int l = 0; l < g->n_layers; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) {
            const Tensor *dw = &g->dw[l][s];
            Tensor *p = attn_weight(&w[l], s);
            if (!tensor_present(dw)) continue;
            assert(p->size == dw->size); // (the backward pass's gradient of this very weight)
            if (sgd)
                sgd_update(&o->cfg, t == 1, p->data, dw->data, momentum ? o->m[l][s].data : NULL, p->size);
            else
                adamw_update(&o->cfg, t, p->data, dw->data, o->m[l][s].data, o->v[l][s].data, p->size);
        }
    return true;
}

// ---- training -----------------------------------------------------------------------------

void trainer_init(Trainer *t, const OptimConfig *cfg)
{
    memset(t, 0, sizeof *t);
    optim_init(&t->opt, cfg);
    grads_init(&t->g);
    trace_init(&t->tr);
}

void trainer_free(Trainer *t)
{
    optim_free(&t->opt);
    grads_free(&t->g);
    trace_free(&t->tr);
    for (int l = 0; l < TRACE_MAX_LAYERS; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) tensor_free(&t->keep[l][s]);
    memset(t, 0, sizeof *t);
}

// Copies the weights between w and keep: to keep (to_keep) those that have a gradient, back
// those kept. False when out of memory.
static bool keep_weights(Trainer *t, AttnWeights *w, bool to_keep)
{
    for (int l = 0; l < TRACE_MAX_LAYERS; l++)
        for (int s = 0; s < WEIGHT_COUNT; s++) {
            Tensor *p = attn_weight(&w[l], s), *k = &t->keep[l][s];
            if (!tensor_present(to_keep ? &t->g.dw[l][s] : k)) continue;
            if (to_keep && !tensor_present(k) && !tensor_init_raw(k, p->rank, p->shape)) return false;
            memcpy(to_keep ? k->data : p->data, to_keep ? p->data : k->data, p->size * sizeof *p->data);
        }
    return true;
}

// Whether x[0..n) holds a value that is not finite (an exponent of all ones: ±inf, NaN). Integer
// operations the compiler turns into vectors, no branch a value (a whole step's gradients are
// checked): (bits & exponent) + the exponent's lowest bit reaches the sign bit only when the
// exponent is all ones.
static bool any_not_finite(const float *x, size_t n)
{
    for (size_t i0 = 0; i0 < n; i0 += 4096) {
        const size_t i1 = n - i0 < 4096 ? n : i0 + 4096;
        uint32_t bad = 0;
        for (size_t i = i0; i < i1; i++) {
            uint32_t u;
            memcpy(&u, x + i, sizeof u);
            bad |= (u & 0x7f800000u) + 0x00800000u;
        }
        if (bad & 0x80000000u) return true;
    }
    return false;
}

// The first weight (its gradient's name) holding a value that is not finite, or NULL.
static const char *not_finite(const Trainer *t, AttnWeights *w, char *name)
{
    bool any = false;
    for (int i = 0; i < t->g.n && !any; i++) any = any_not_finite(t->g.d[i].data, t->g.d[i].size);
    for (int l = 0; l < t->g.n_layers && !any; l++)
        for (int s = 0; s < WEIGHT_COUNT && !any; s++)
            any = any_not_finite(t->g.dw[l][s].data, t->g.dw[l][s].size) ||
                  (tensor_present(&t->g.dw[l][s]) && any_not_finite(attn_weight(&w[l], s)->data, attn_weight(&w[l], s)->size));
    if (!any) return NULL; // (else the first in the gradients' order, named as below)
    for (int k = 0, n = grads_count(&t->g); k < n; k++) {
        int st, sl, ly;
        const Tensor *d = grads_item(&t->g, &t->tr, k, name, &st, &sl, &ly);
        const Tensor *x = st >= 0 ? d : attn_weight(&w[ly], sl); // a stage's gradient, or a weight itself
        for (size_t i = 0; i < x->size; i++)
            if (!isfinite(x->data[i])) return st >= 0 ? name : name + 5; // (a weight: without "grad.")
    }
    return NULL;
}

// The forward pass of w into t->tr and its backward pass; false with err set.
static bool forward_backward(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in,
                             const int *targets, const char *file, char *err, size_t err_len)
{
    trace_free(&t->tr);
    trace_init(&t->tr);
    if (!attn_forward(cfg, w, in, &t->tr)) {
        snprintf(err, err_len, "%s: out of memory computing the forward pass", file);
        return false;
    }
    return attn_backward(cfg, w, &t->tr, targets, &t->g, file, err, err_len);
}

// The forward and backward pass of w, checked: a loss, gradient or weight that is not finite
// (after a step: w back to the weights before it) is false with err set.
static bool checked_pass(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in, const int *targets,
                         const char *file, char *err, size_t err_len)
{
    char name[GRAD_NAME_MAX];
    bool ok = forward_backward(t, cfg, w, in, targets, file, err, err_len);
    const char *bad = !ok ? NULL : isfinite(t->g.loss) ? not_finite(t, w, name) : "the loss";
    if (bad && t->steps_done == 0)
        snprintf(err, err_len, "%s: %s is not finite with the lesson's own weights; expected weights that give a "
                 "finite loss to train", file, bad);
    else if (bad)
        snprintf(err, err_len, "%s: step %d: %s is not finite after it (try a smaller lr); the weights before it kept",
                 file, t->steps_done, bad);
    if ((!ok || bad) && t->steps_done > 0) keep_weights(t, w, false); // (copies back: allocates nothing)
    return ok && !bad;
}

bool trainer_step(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in, const int *targets,
                  float *loss, const char *file, char *err, size_t err_len)
{
    if (!checked_pass(t, cfg, w, in, targets, file, err, err_len)) return false;
    if (loss) *loss = t->g.loss;
    if (!keep_weights(t, w, true) || !optim_step(&t->opt, w, &t->g)) {
        snprintf(err, err_len, "%s: out of memory at training step %d", file, t->steps_done + 1);
        return false;
    }
    t->steps_done++;
    return true;
}

bool trainer_run(Trainer *t, const AttnConfig *cfg, AttnWeights *w, const AttnInputs *in, const int *targets,
                 float *losses, const char *file, char *err, size_t err_len)
{
    const int steps = t->opt.cfg.steps;
    for (int k = 0; k < steps; k++)
        if (!trainer_step(t, cfg, w, in, targets, losses ? &losses[k] : NULL, file, err, err_len)) return false;
    if (!checked_pass(t, cfg, w, in, targets, file, err, err_len)) return false;
    if (losses) losses[steps] = t->g.loss;
    return true;
}
