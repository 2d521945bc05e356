// experiment.c — head ablation, its table, and the logit lens (see experiment.h).
#include "experiment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "backward.h"

static int layers_of(const Lesson *ls) { return ls->cfg.n_layers > 1 ? ls->cfg.n_layers : 1; }

bool experiment_parse_head(const Lesson *ls, const char *text, AttnAblation *a, const char *what, char *err,
                           size_t n)
{
    const int L = layers_of(ls), H = ls->cfg.n_heads;
    int layer = 0, head = -1, used = 0;
    char last[40];
    if (L > 1)
        snprintf(last, sizeof last, "l%d.h%d", L - 1, H - 1);
    else
        snprintf(last, sizeof last, "h%d", H - 1);
    bool read = L > 1 ? sscanf(text, "l%d.h%d%n", &layer, &head, &used) == 2
                      : sscanf(text, "h%d%n", &head, &used) == 1 || sscanf(text, "l%d.h%d%n", &layer, &head, &used) == 2;
    if (!read && sscanf(text, "l%d%n", &layer, &used) == 1 && !text[used] && !strchr(text, ' ') && !strchr(text, '+')) {
        if (layer < 0 || layer >= L) { // a whole layer's attention (every head: head −1)
            snprintf(err, n, "%s: \"%s\": no such layer: the model has %d layer%s (l0 … l%d)", what, text, L,
                     L > 1 ? "s" : "", L - 1);
            return false;
        }
        a->layer = layer, a->head = -1;
        return true;
    }
    if (!read || text[used] || strchr(text, ' ') || strchr(text, '+')) {
        snprintf(err, n, "%s: \"%s\": expected a head as %s (layer.head, from 0) or a layer as lL", what, text,
                 L > 1 ? "lL.hH, e.g. l1.h0" : "hH, e.g. h0");
        return false;
    }
    if (layer < 0 || layer >= L || head < 0 || head >= H) {
        snprintf(err, n, "%s: \"%s\": no such head: the model has %d layer%s of %d heads (%s0 … %s)", what, text, L,
                 L > 1 ? "s" : "", H, L > 1 ? "l0.h" : "h", last);
        return false;
    }
    a->layer = layer, a->head = head;
    return true;
}

bool experiment_can_ablate(const Lesson *ls, const char *file, char *err, size_t n)
{
    for (int l = 0; l < ls->cfg.n_layer_types; l++)
        if (ls->cfg.layer_types[l] == LAYER_LINEAR) { // (delta.c: no head_out stage there)
            snprintf(err, n, "%s: model.layer_types: a \"linear_attention\" layer's heads are not ablated yet; ablate in a "
                     "lesson without one", file);
            return false;
        }
    if (ls->cfg.flash_block_k > 0 || ls->cfg.decode) {
        snprintf(err, n, "%s: model.%s: an ablation changes head_out, which the %s stages compute again apart; "
                 "ablate in a lesson without it", file, ls->cfg.decode ? "decode" : "flash",
                 ls->cfg.decode ? "decoding" : "FlashAttention");
        return false;
    }
    return true;
}

// The targets of tr (B·L): the lesson's, else the default (backward.h). False with one line in err.
static bool targets_of(const Lesson *ls, const Trace *tr, int *t, const char *file, char *err, size_t n)
{
    if (!ls->targets || tr->vocab_size <= 0) return backward_default_targets(tr, t, file, err, n);
    memcpy(t, ls->targets, (size_t)tr->batch * tr->len_q * sizeof *t);
    return true;
}

static bool loss_with(const Trace *tr, const int *t, float *loss)
{
    const int lg = trace_find(tr, "logits"), V = tr->vocab_size;
    double sum = 0.0;
    int count = 0;
    for (int r = 0; r < tr->batch * tr->len_q; r++) {
        if (t[r] < 0 || t[r] >= V) continue;
        sum += backward_nll(tr->stages[lg].t.data + (size_t)r * V, V, tr->temperature, t[r]);
        count++;
    }
    *loss = (float)(sum / count);
    return count > 0;
}

bool experiment_loss(const Lesson *ls, const Trace *tr, float *loss, const char *file, char *err, size_t n)
{
    int *t = malloc((size_t)tr->batch * tr->len_q * sizeof *t);
    if (!t) {
        snprintf(err, n, "%s: out of memory", file);
        return false;
    }
    bool ok = targets_of(ls, tr, t, file, err, n);
    if (ok && !(ok = loss_with(tr, t, loss))) snprintf(err, n, "%s: targets: no position has a target", file);
    free(t);
    return ok;
}

static int effect_order(const void *pa, const void *pb)
{
    const HeadEffect *a = pa, *b = pb;
    if (a->delta != b->delta) return a->delta > b->delta ? -1 : 1;
    return a->layer != b->layer ? a->layer - b->layer : a->head - b->head;
}

bool experiment_ablation_table(const Lesson *ls, AblateKind kind, HeadEffect **out, int *n_out, float *clean,
                               const char *file, char *err, size_t n)
{
    *out = NULL, *n_out = 0;
    if (ls->cfg.vocab_size <= 0) {
        snprintf(err, n, "%s: the ablation table ranks heads by the next-token loss: a language model's (a lesson "
                 "with a \"vocab\")", file);
        return false;
    }
    if (!experiment_can_ablate(ls, file, err, n)) return false;
    const int L = layers_of(ls), H = ls->cfg.n_heads;
    HeadEffect *e = calloc((size_t)L * H, sizeof *e);
    AttnConfig cfg = ls->cfg;
    Trace tr;
    trace_init(&tr);
    bool ok = e && attn_forward(&cfg, ls->w, &ls->in, &tr);
    if (!ok) snprintf(err, n, "%s: out of memory", file);
    ok = ok && experiment_loss(ls, &tr, clean, file, err, n);
    for (int k = 0; ok && k < L * H; k++) {
        trace_free(&tr);
        trace_init(&tr);
        cfg.ablate = (AttnAblation){kind, k / H, k % H};
        if (!(ok = attn_forward(&cfg, ls->w, &ls->in, &tr))) snprintf(err, n, "%s: out of memory", file);
        if (ok) ok = experiment_loss(ls, &tr, &e[k].loss, file, err, n);
        e[k].layer = k / H, e[k].head = k % H, e[k].delta = e[k].loss - *clean;
    }
    trace_free(&tr);
    if (!ok) {
        free(e);
        return false;
    }
    qsort(e, (size_t)L * H, sizeof *e, effect_order);
    *out = e, *n_out = L * H;
    return true;
}

int experiment_layer_output(const Trace *tr, int layer)
{
    if (layer < 0 || layer >= tr->n_layers) return -1;
    if (layer == tr->n_layers - 1) { // read by the final norm, else by the logits
        int s = trace_find(tr, "final_norm");
        if (s < 0) s = trace_find(tr, "logits");
        return s >= 0 ? tr->stages[s].operands[0] : -1;
    }
    for (int s = 0; s < tr->n; s++) // layer + 1's first stage (its norm, or q_proj) reads it
        if (tr->stages[s].layer == layer + 1) return tr->stages[s].operands[0];
    return -1;
}

void logit_lens_free(LogitLens *l)
{
    free(l->top), free(l->top_prob), free(l->next_prob), free(l->target);
    memset(l, 0, sizeof *l);
}

// Row r of x (C) as the model's head reads it: the final norm, the unembedding, softmax(· / T),
// into p (V), with room for the norm's row in xn (C).
static void lens_row(const Lesson *ls, const float *x, float *xn, float *p)
{
    const AttnConfig *c = &ls->cfg;
    const AttnWeights *w = &ls->w[0];
    const int C = c->d_model, V = c->vocab_size;
    const float *in = x;
    if (c->final_norm) {
        const float *g = tensor_present(&w->final_norm_weight) ? w->final_norm_weight.data : NULL;
        if (c->norm == NORM_RMS)
            tensor_rms_norm(xn, x, g, 1, C, c->norm_eps);
        else
            tensor_layer_norm(xn, x, g, tensor_present(&w->final_norm_bias) ? w->final_norm_bias.data : NULL, 1, C,
                              c->norm_eps);
        in = xn;
    }
    const Tensor *wu = c->tie_embeddings ? &w->embed : &w->lm_head;
    tensor_linear(p, in, wu->data, NULL, 1, C, V);
    for (int v = 0; v < V; v++) p[v] = p[v] / c->temperature;
    tensor_softmax_rows(p, 1, V);
}

bool experiment_logit_lens(const Lesson *ls, const Trace *tr, LogitLens *out, const char *file, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    if (tr->vocab_size <= 0) {
        snprintf(err, n, "%s: the logit lens reads the residual stream through the unembedding: a language model's "
                 "(a lesson with a \"vocab\")", file);
        return false;
    }
    const int L = tr->n_layers, B = tr->batch, T = tr->len_q, C = tr->d_model, V = tr->vocab_size;
    const size_t cells = (size_t)L * B * T;
    out->n_layers = L, out->batch = B, out->len = T, out->vocab = V;
    out->top = malloc(cells * sizeof *out->top);
    out->top_prob = malloc(cells * sizeof *out->top_prob);
    out->next_prob = malloc(cells * sizeof *out->next_prob);
    out->target = malloc((size_t)B * T * sizeof *out->target);
    float *xn = malloc((size_t)(C + V) * sizeof *xn);
    bool ok = out->top && out->top_prob && out->next_prob && out->target && xn;
    if (!ok) snprintf(err, n, "%s: out of memory", file);
    ok = ok && targets_of(ls, tr, out->target, file, err, n);
    for (int l = 0; ok && l < L; l++) {
        const int s = experiment_layer_output(tr, l);
        for (int r = 0; r < B * T; r++) {
            float *p = xn + C;
            lens_row(ls, tr->stages[s].t.data + (size_t)r * C, xn, p);
            int best = 0;
            for (int v = 1; v < V; v++)
                if (p[v] > p[best]) best = v;
            const size_t i = (size_t)l * B * T + (size_t)r;
            out->top[i] = best, out->top_prob[i] = p[best];
            out->next_prob[i] = out->target[r] >= 0 && out->target[r] < V ? p[out->target[r]] : NAN;
        }
    }
    free(xn);
    if (!ok) logit_lens_free(out);
    return ok;
}

// ---- direct logit attribution -------------------------------------------------------------

void logit_attribution_free(LogitAttribution *a)
{
    free(a->token), free(a->contrib), free(a->logit);
    memset(a, 0, sizeof *a);
}

// Layer l's head_out stage in tr (a linear layer's: what its concat reads, lin_out or lin_parallel), or -1.
static int head_out_of(const Trace *tr, int l)
{
    for (int s = 0; s < tr->n; s++)
        if (tr->stages[s].id == STAGE_CONCAT && trace_layer_at(tr, s) == l) return tr->stages[s].operands[0];
    return -1;
}

// Row x (C) of the final residual: the final norm as a fixed linear map at x (its mean and scale
// frozen): y = γ ⊙ (c − mean(c)) / σ(x) (LayerNorm), γ ⊙ c / rms(x) (RMSNorm), c (none), as
// a scale per feature into g and whether c is centred.
static void frozen_norm(const Lesson *ls, const float *x, int C, double *g, bool *centre)
{
    const AttnConfig *c = &ls->cfg;
    const Tensor *gw = &ls->w[0].final_norm_weight;
    double s = 1.0;
    *centre = c->final_norm && c->norm != NORM_RMS;
    if (c->final_norm) {
        double mean = 0.0, var = 0.0;
        for (int k = 0; k < C; k++) mean += (double)x[k];
        mean = *centre ? mean / C : 0.0;
        for (int k = 0; k < C; k++) var += ((double)x[k] - mean) * ((double)x[k] - mean);
        s = 1.0 / sqrt(var / C + (double)c->norm_eps);
    }
    for (int k = 0; k < C; k++) g[k] = s * (c->final_norm && tensor_present(gw) ? (double)gw->data[k] : 1.0);
}

bool experiment_logit_attribution(const Lesson *ls, const Trace *tr, LogitAttribution *out, const char *file, char *err,
                                  size_t n)
{
    memset(out, 0, sizeof *out);
    if (tr->vocab_size <= 0 || !ls->cfg.norm_first) {
        snprintf(err, n, "%s: direct logit attribution follows each head's output along the residual stream to the "
                 "logits: a pre-norm language model's (model.norm_first and a \"vocab\")", file);
        return false;
    }
    const int L = tr->n_layers, H = tr->n_heads, B = tr->batch, T = tr->len_q, C = tr->d_model, dv = tr->d_v;
    const size_t rows = (size_t)B * T;
    out->n_layers = L, out->n_heads = H, out->batch = B, out->len = T;
    out->token = malloc(rows * sizeof *out->token);
    out->contrib = malloc((size_t)L * H * rows * sizeof *out->contrib);
    out->logit = malloc(rows * sizeof *out->logit);
    double *g = malloc((size_t)C * 2 * sizeof *g), *y = g ? g + C : NULL;
    bool ok = out->token && out->contrib && out->logit && g;
    if (!ok) snprintf(err, n, "%s: out of memory", file);
    ok = ok && targets_of(ls, tr, out->token, file, err, n);
    const Tensor *wu = ls->cfg.tie_embeddings ? &ls->w[0].embed : &ls->w[0].lm_head;
    const Stage *last = ok ? &tr->stages[experiment_layer_output(tr, L - 1)] : NULL, *lg = trace_get(tr, "logits");
    for (size_t r = 0; ok && r < rows; r++) {
        const int t = out->token[r], b = (int)(r / (size_t)T), i = (int)(r % (size_t)T);
        out->logit[r] = t >= 0 ? lg->t.data[r * (size_t)tr->vocab_size + (size_t)t] : NAN;
        bool centre;
        frozen_norm(ls, last->t.data + r * (size_t)C, C, g, &centre);
        for (int l = 0; l < L; l++) {
            const float *ho = tr->stages[head_out_of(tr, l)].t.data, *wo = ls->w[l].w_o.data;
            for (int h = 0; h < H; h++) {
                float *dst = &out->contrib[(((size_t)l * H + (size_t)h) * rows) + r];
                if (t < 0) {
                    *dst = NAN;
                    continue;
                }
                // the head's part of output: c = W_O[:, h·dv … (h+1)·dv] · head_out[b, h, i]
                const float *hv = ho + (((size_t)b * H + (size_t)h) * T + (size_t)i) * dv;
                double mean = 0.0, sum = 0.0;
                for (int k = 0; k < C; k++) {
                    double ck = 0.0;
                    for (int j = 0; j < dv; j++) ck += (double)wo[(size_t)k * H * dv + (size_t)h * dv + (size_t)j] * (double)hv[j];
                    y[k] = ck, mean += ck;
                }
                mean = centre ? mean / C : 0.0;
                for (int k = 0; k < C; k++) sum += (double)wu->data[(size_t)t * C + (size_t)k] * g[k] * (y[k] - mean);
                *dst = (float)sum;
            }
        }
    }
    free(g);
    if (!ok) logit_attribution_free(out);
    return ok;
}
