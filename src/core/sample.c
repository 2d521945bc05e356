// sample.c — top-k, top-p and the choice of the next token (see sample.h).
#include "sample.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool sample_active(const AttnConfig *cfg) { return cfg->top_k > 0 || (cfg->top_p > 0.0f && cfg->top_p < 1.0f); }

void sample_settings_text(const AttnConfig *cfg, char *out, size_t n)
{
    int k = 0;
    if (n) out[0] = '\0';
    if (cfg->top_k > 0) k = snprintf(out, n, "top-k %d", cfg->top_k);
    if (k >= 0 && (size_t)k < n && cfg->top_p > 0.0f && cfg->top_p < 1.0f)
        snprintf(out + k, n - (size_t)k, "%stop-p %.3g", k ? ", " : "", (double)cfg->top_p);
}

typedef struct Ranked {
    float p;
    int id;
} Ranked;

// ascending by probability; ties: the higher id first (so the lower id is the more likely)
static int by_p_up(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return y->id - x->id;
}

int sample_filter(const float *probs, int V, int top_k, float top_p, float *kept)
{
    assert(V >= 1 && V <= SAMPLE_MAX_VOCAB);
    Ranked r[SAMPLE_MAX_VOCAB];
    for (int i = 0; i < V; i++) r[i] = (Ranked){probs[i], i}, kept[i] = probs[i];
    qsort(r, (size_t)V, sizeof *r, by_p_up); // r[V − 1]: the most likely
    if (top_k > 0 && top_k < V) { // TopKLogitsWarper: below the k-th largest value dropped
        const float kth = r[V - top_k].p;
        for (int i = 0; i < V; i++)
            if (kept[i] < kth) kept[i] = 0.0f;
    }
    float sum = 0.0f;
    for (int i = 0; i < V; i++) sum += kept[i];
    for (int i = 0; i < V; i++) kept[i] /= sum;
    if (top_p < 1.0f) { // TopPLogitsWarper over the renormalised ones: from the least likely up
        float run = 0.0f;
        for (int j = 0; j < V - 1; j++) { // (the most likely, r[V − 1], always stays)
            const int id = r[j].id;
            run += kept[id];
            if (run <= 1.0f - top_p) kept[id] = 0.0f;
        }
        sum = 0.0f;
        for (int i = 0; i < V; i++) sum += kept[i];
        for (int i = 0; i < V; i++) kept[i] /= sum;
    }
    int n = 0;
    for (int i = 0; i < V; i++) n += kept[i] > 0.0f;
    return n;
}

float sample_draw_u(int seed, int position)
{
    // the generator's value v = 2u − 1, u a multiple of 2^-24 (exact in float)
    return (attn_init_value((unsigned long long)seed, SAMPLE_STREAM, (size_t)position, 1) + 1.0f) * 0.5f;
}

int sample_pick(const float *kept, int V, int seed, int position)
{
    int best = 0;
    if (seed == 0) {
        for (int i = 1; i < V; i++)
            if (kept[i] > kept[best]) best = i;
        return best;
    }
    const float u = sample_draw_u(seed, position);
    float run = 0.0f;
    for (int i = 0; i < V; i++) {
        if (kept[i] <= 0.0f) continue;
        best = i;
        run += kept[i];
        if (u < run) return i;
    }
    return best; // (u past the rounded sum: the last kept token)
}
