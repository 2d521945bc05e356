// trace.c — the ordered list of recorded stages (see trace.h).
#include "trace.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// every stage of the table fits in one layer (a layer records each at most once)
_Static_assert(STAGE_ID_COUNT <= TRACE_LAYER_STAGES, "TRACE_LAYER_STAGES below the stage table");

void trace_init(Trace *tr)
{
    memset(tr, 0, sizeof *tr);
    tr->n_layers = 1;
    tr->layer = -1;
}

bool trace_reserve(Trace *tr, int n)
{
    if (n <= tr->cap) return true;
    Stage *s = realloc(tr->stages, (size_t)n * sizeof *s);
    if (!s) return false;
    tr->stages = s, tr->cap = n;
    return true;
}

void trace_free(Trace *tr)
{
    for (int i = 0; i < tr->n; i++) tensor_free(&tr->stages[i].t);
    tr->n = 0;
    free(tr->stages);
    tr->stages = NULL, tr->cap = 0;
    free(tr->positions);
    free(tr->rope_inv);
    free(tr->rope_inv_local);
    free(tr->ids);
    tr->positions = NULL, tr->rope_inv = NULL, tr->rope_inv_local = NULL, tr->ids = NULL;
}

const float *trace_rope_inv(const Trace *tr, int layer)
{
    const bool local = layer >= 0 && layer < TRACE_MAX_LAYERS && tr->layer_sliding[layer];
    return local && tr->rope_inv_local ? tr->rope_inv_local : tr->rope_inv;
}

int trace_position(const Trace *tr, int b, int l)
{
    return tr->positions ? tr->positions[(size_t)b * tr->len_q + l] : l;
}

static int push(Trace *tr, StageId id, int rank, const int *shape, int op0, int op1, int op2, bool zero)
{
    assert((unsigned)id < STAGE_ID_COUNT);
    // operands are stages pushed before this one (or -1): the forward pass's own indices
    assert(op0 >= -1 && op0 < tr->n && op1 >= -1 && op1 < tr->n && op2 >= -1 && op2 < tr->n);
    if (tr->n == tr->cap && !trace_reserve(tr, tr->cap < 24 ? 48 : 2 * tr->cap)) return -1;
    const StageInfo *in = &STAGE_INFO[id];
    Stage *s = &tr->stages[tr->n];
    memset(s, 0, offsetof(Stage, absmax));
    if (!(zero ? tensor_init(&s->t, rank, shape) : tensor_init_raw(&s->t, rank, shape))) return -1;
    s->layer = tr->layer;
    if (tr->n_layers > 1 && tr->layer >= 0)
        snprintf(s->name, sizeof s->name, "l%d.%s", tr->layer, in->name);
    else
        snprintf(s->name, sizeof s->name, "%s", in->name);
    s->id = id;
    s->kind = in->kind;
    s->step = in->step;
    s->operands[0] = op0, s->operands[1] = op1, s->operands[2] = op2;
    return tr->n++;
}

int trace_push(Trace *tr, StageId id, int rank, const int *shape, int op0, int op1, int op2)
{
    return push(tr, id, rank, shape, op0, op1, op2, true);
}

int trace_push_raw(Trace *tr, StageId id, int rank, const int *shape, int op0, int op1, int op2)
{
    return push(tr, id, rank, shape, op0, op1, op2, false);
}

void trace_compute_stats(Trace *tr)
{
    for (int i = 0; i < tr->n; i++) {
        Stage *s = &tr->stages[i];
        int B = s->t.rank >= 3 ? s->t.shape[0] : 1;
        size_t per = B > 0 ? s->t.size / (size_t)B : 0;
        for (int b = 0; b < B && b < TRACE_MAX_BATCH; b++) {
            float m = 0.0f, mp = INFINITY;
            bool nan = false;
            const float *x = s->t.data + (size_t)b * per;
            for (size_t k = 0; k < per; k++) {
                nan |= isnan(x[k]);
                if (!isfinite(x[k])) continue;
                float a = fabsf(x[k]);
                if (a > m) m = a;
                if (x[k] > 0.0f && x[k] < mp) mp = x[k];
            }
            s->absmax[b] = m, s->minpos[b] = mp, s->any_nan[b] = nan;
        }
    }
    tr->has_stats = true;
}

int trace_find(const Trace *tr, const char *name)
{
    for (int i = 0; i < tr->n; i++)
        if (strcmp(tr->stages[i].name, name) == 0) return i;
    return -1;
}

const Stage *trace_get(const Trace *tr, const char *name)
{
    int i = trace_find(tr, name);
    return i < 0 ? NULL : &tr->stages[i];
}

int trace_find_near(const Trace *tr, int s, const char *base)
{
    assert(s >= 0 && s < tr->n); // a view's stage, a panel's or its operand: the caller's stage
    int layer = tr->stages[s].layer;
    for (int i = 0; i < tr->n; i++) {
        const Stage *st = &tr->stages[i];
        if ((st->layer == layer || st->layer < 0) && strcmp(STAGE_INFO[st->id].name, base) == 0) return i;
    }
    return -1;
}

int trace_layer_at(const Trace *tr, int s)
{
    assert(s >= 0 && s < tr->n); // View.stage: the app keeps it in range (watch_session, app_lessons)
    return tr->stages[s].layer > 0 ? tr->stages[s].layer : 0;
}

TraceBlock trace_block(const Trace *tr, int layer)
{
    if (tr->encoder_blocks <= 0 || layer < 0) return BLOCK_SELF;
    if (layer < tr->encoder_blocks) return BLOCK_ENCODER;
    return (layer - tr->encoder_blocks) % 2 == 0 ? BLOCK_DECODER_SELF : BLOCK_CROSS;
}

int trace_same_in_layer(const Trace *tr, int s, int layer)
{
    assert(s >= 0 && s < tr->n); // View.stage (app.c's set_layer)
    if (tr->n_layers <= 1) return s;
    int first = -1;
    for (int i = 0; i < tr->n; i++) {
        if (tr->stages[i].layer != layer) continue;
        if (first < 0) first = i;
        if (tr->stages[i].id == tr->stages[s].id) return i;
    }
    return first >= 0 ? first : s;
}

static bool in_layer(const Stage *st, int layer) { return st->layer < 0 || st->layer == layer; }

int trace_step_first(const Trace *tr, int layer, StepId s)
{
    for (int i = 0; i < tr->n; i++)
        if (tr->stages[i].step == s && in_layer(&tr->stages[i], layer)) return i;
    return -1;
}

int trace_step_count(const Trace *tr, int layer, StepId s)
{
    int c = 0;
    for (int i = 0; i < tr->n; i++) c += tr->stages[i].step == s && in_layer(&tr->stages[i], layer);
    return c;
}

const char *step_name(StepId s)
{
    assert((unsigned)s < STEP_COUNT); // a stage's step (stages.h's table) or a layout's
    return STEP_NAMES[s];
}

int trace_kv_head(const Trace *tr, const Tensor *t, int h)
{
    if (t->rank != 4 || h < 0) return h;
    int hk = t->shape[1];
    if (hk < tr->n_heads && hk > 0 && tr->n_heads % hk == 0) return h / (tr->n_heads / hk);
    return h;
}

int trace_kv_heads(const Trace *tr) { return tr->n_kv_heads > 0 ? tr->n_kv_heads : tr->n_heads; }

size_t trace_kv_slice(const Trace *tr, int b, int h)
{
    int kvh = trace_kv_heads(tr);
    assert(b >= 0 && b < tr->batch && h >= 0 && h < tr->n_heads && kvh > 0 && tr->n_heads % kvh == 0);
    return (size_t)b * (size_t)kvh + (size_t)(h / (tr->n_heads / kvh));
}
