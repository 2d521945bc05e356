// viewdraw.c — the painters of the glances, by ViewKind (see viewdraw.h).
#include "viewdraw.h"

#include <assert.h>

typedef void (*ViewDrawFn)(Canvas *cv, const Layout *L, const Trace *tr, const View *v);

// NULL: the stage's panels (render.c)
static const ViewDrawFn VIEW_DRAW[VIEW_KIND_COUNT] = {
    [VIEW_PANELS] = NULL,
    [VIEW_MODEL] = modelview_draw,
    [VIEW_HEADS] = headview_draw,
};

void viewdraw_glance(Canvas *cv, const Layout *L, const Trace *tr, const View *v)
{
    assert(v->kind >= 0 && v->kind < VIEW_KIND_COUNT && VIEW_DRAW[v->kind]);
    VIEW_DRAW[v->kind](cv, L, tr, v);
}
