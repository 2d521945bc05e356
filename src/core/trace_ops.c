// trace_ops.c — copies, differences and in-betweens of traces (see trace_ops.h).
#include "trace_ops.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool trace_clone(Trace *dst, const Trace *src)
{
    *dst = *src;
    dst->stages = NULL, dst->cap = 0, dst->n = 0;
    dst->positions = NULL, dst->rope_inv = NULL, dst->rope_inv_local = NULL, dst->ids = NULL; // the trace's own arrays: copied below
    if (!trace_reserve(dst, src->n)) return false;
    if (src->n) memcpy(dst->stages, src->stages, (size_t)src->n * sizeof *dst->stages);
    for (int i = 0; i < src->n; i++) memset(&dst->stages[i].t, 0, sizeof dst->stages[i].t);
    dst->n = src->n;
    const size_t np = src->positions ? (size_t)src->batch * src->len_q : 0, ni = (size_t)src->rotary_dim / 2 + 1;
    const size_t nid = src->ids ? (size_t)src->batch * src->len_q : 0;
    if ((np && !(dst->positions = malloc(np * sizeof(int)))) || (src->rope_inv && !(dst->rope_inv = malloc(ni * sizeof(float)))) ||
        (src->rope_inv_local && !(dst->rope_inv_local = malloc(ni * sizeof(float)))) ||
        (nid && !(dst->ids = malloc(nid * sizeof(int))))) {
        dst->n = 0;
        trace_free(dst);
        return false;
    }
    if (np) memcpy(dst->positions, src->positions, np * sizeof(int));
    if (nid) memcpy(dst->ids, src->ids, nid * sizeof(int));
    if (src->rope_inv) memcpy(dst->rope_inv, src->rope_inv, ni * sizeof(float));
    if (src->rope_inv_local) memcpy(dst->rope_inv_local, src->rope_inv_local, ni * sizeof(float));
    for (int i = 0; i < src->n; i++) {
        if (!tensor_copy(&dst->stages[i].t, &src->stages[i].t)) {
            dst->n = i;
            trace_free(dst);
            return false;
        }
    }
    return true;
}

static const Stage *match(const Trace *a, const Stage *s)
{
    int i = trace_find(a, s->name);
    if (i < 0) return NULL;
    const Stage *m = &a->stages[i];
    return m->t.size == s->t.size && m->t.rank == s->t.rank ? m : NULL;
}

void trace_lerp(Trace *dst, const Trace *a, const Trace *b, float t)
{
    assert(dst->n == b->n); // dst: a clone of b (lab.c and session_delta clone it just before)
    for (int i = 0; i < b->n; i++) {
        const Stage *sb = &b->stages[i], *sa = match(a, sb);
        assert(dst->stages[i].t.size == sb->t.size);
        float *d = dst->stages[i].t.data;
        const float *y = sb->t.data;
        if (!sa || sb->kind == STAGE_KIND_MASK) {
            const float *from = sa && t < 0.5f ? sa->t.data : y;
            memcpy(d, from, sb->t.size * sizeof *d);
            continue;
        }
        const float *x = sa->t.data;
        for (size_t k = 0; k < sb->t.size; k++) {
            if (isfinite(x[k]) && isfinite(y[k]))
                d[k] = (1.0f - t) * x[k] + t * y[k]; // exactly x at 0 and y at 1
            else
                d[k] = t < 0.5f ? x[k] : y[k];
        }
    }
    dst->has_stats = false;
}

static float diff(float a, float b)
{
    if (isnan(a) && isnan(b)) return 0.0f;
    if (a == b) return 0.0f;   // equal infinities too
    return b - a;
}

void trace_diff(Trace *dst, const Trace *a, const Trace *b)
{
    assert(dst->n == b->n); // dst: a clone of b (lab.c and session_delta clone it just before)
    for (int i = 0; i < b->n; i++) {
        const Stage *sb = &b->stages[i], *sa = match(a, sb);
        assert(dst->stages[i].t.size == sb->t.size);
        float *d = dst->stages[i].t.data;
        const float *y = sb->t.data;
        bool masking = sb->kind == STAGE_KIND_MASKED;
        for (size_t k = 0; k < sb->t.size; k++) {
            float x = sa ? sa->t.data[k] : sb->kind == STAGE_KIND_MASK ? 1.0f : y[k];
            // a score the mask filled, before or after the edit: no difference to show
            if (masking && ((sa && a->mask_kind && x == a->mask_fill) || (b->mask_kind && y[k] == b->mask_fill)))
                d[k] = -INFINITY;
            else
                d[k] = diff(x, y[k]);
        }
    }
    trace_compute_stats(dst);
}

bool trace_value_changed(float a, float b)
{
    if (isnan(a) || isnan(b)) return isnan(a) != isnan(b);
    return a != b;
}
