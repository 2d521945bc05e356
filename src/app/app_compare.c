// app_compare.c — the compare view in the window (see app_compare.h).
#include "app_compare.h"

#include <stdio.h>

#include "compare.h"

void app_compare_off(App *a)
{
    CompareUI *c = &a->ex.cmp;
    compare_free(&c->cmp);
    session_destroy(c->b);
    c->b = NULL, c->session = NULL;
    a->v.cmp = NULL, a->v.cmp_b = NULL, a->v.cmp_spec = NULL;
    if (a->v.kind == VIEW_COMPARE) a->v.kind = VIEW_PANELS;
    a->layout.valid = false; // (its panels pointed into B)
}

// B = the lesson on screen with head k (layer k / H, head k % H) ablated; false with a toast.
static bool open_choice(App *a, int k)
{
    const Trace *tr = &a->session->trace;
    const int H = tr->n_heads;
    char spec[sizeof a->ex.cmp.spec], err[LESSON_ERR_MAX + 400];
    if (tr->n_layers > 1)
        snprintf(spec, sizeof spec, "ablate:l%d.h%d", k / H, k % H);
    else
        snprintf(spec, sizeof spec, "ablate:h%d", k % H);
    CompareSpec sp;
    Session *b = NULL;
    Compare cmp = {0};
    if (!compare_parse_spec(spec, &sp, err, sizeof err) || !(b = compare_open_b(a->session, NULL, &sp, err, sizeof err)) ||
        !compare_traces(tr, &b->trace, &cmp, err, sizeof err)) {
        session_destroy(b);
        app_compare_off(a);
        app_toast(a, "app.compare_failed", err);
        return false;
    }
    app_compare_off(a);
    CompareUI *c = &a->ex.cmp;
    c->b = b, c->cmp = cmp, c->choice = k, c->session = a->session, c->version = a->session->version;
    snprintf(c->spec, sizeof c->spec, "%s", spec);
    a->v.kind = VIEW_COMPARE, a->v.cmp = &c->cmp, a->v.cmp_b = &b->trace, a->v.cmp_spec = c->spec;
    return true;
}

void app_compare_step(App *a, int dir)
{
    const Trace *tr = &a->session->trace;
    const int n = (tr->n_layers > 1 ? tr->n_layers : 1) * tr->n_heads;
    if (a->v.delta) { // (the lab's Δ view shows differences already)
        app_toast(a, "app.compare_delta", NULL);
        return;
    }
    const int k = a->ex.cmp.b ? a->ex.cmp.choice + dir : dir > 0 ? 0 : n - 1;
    if (k < 0 || k >= n) {
        app_compare_off(a);
        app_toast(a, "app.compare_off", NULL);
        return;
    }
    if (open_choice(a, k)) app_toast(a, "app.compare_b", a->ex.cmp.spec);
}

void app_compare_watch(App *a)
{
    CompareUI *c = &a->ex.cmp;
    if (!c->b || (c->session == a->session && c->version == a->session->version)) return;
    if (c->session != a->session) { // another lesson
        app_compare_off(a);
        return;
    }
    open_choice(a, c->choice); // the same head, of the lesson as it is now
}
