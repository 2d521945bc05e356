// layout_cache.c — the frame's Layout, computed again only when it changes (layout_cache.h).
#include "layout_cache.h"

#include <string.h>

bool layout_cache_stale(const LayoutCache *c, const View *v, int w, int h, unsigned gen)
{
    return !c->valid || w != c->w || h != c->h || c->gen != gen || memcmp(&c->view, v, sizeof *v) != 0;
}

const Layout *layout_cache_get(LayoutCache *c, const Trace *tr, const View *v, int w, int h, unsigned gen)
{
    if (layout_cache_stale(c, v, w, h, gen)) {
        layout_compute(&c->layout, tr, v, w, h);
        c->view = *v, c->w = w, c->h = h, c->valid = true;
        c->gen = gen;
    }
    return &c->layout;
}
