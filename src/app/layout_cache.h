// layout_cache.h — the frame's Layout, computed once and drawn and hit-tested with until
// the view, the output size or the lesson's numbers (the lab's generation) change.
#ifndef ATTNVIZ_LAYOUT_CACHE_H
#define ATTNVIZ_LAYOUT_CACHE_H

#include <stdbool.h>

#include "layout.h"
#include "view.h"

typedef struct LayoutCache {
    Layout layout;
    View view;     // the view and size it was computed for
    int w, h;
    unsigned gen;  // the lab's generation it was computed for
    bool valid;    // false: compute it again (fonts reloaded)
} LayoutCache;

// Whether the cached layout is not the one for v at w×h and generation gen.
bool layout_cache_stale(const LayoutCache *c, const View *v, int w, int h, unsigned gen);
// The layout for tr, v at w×h and generation gen: the cached one, or computed again.
const Layout *layout_cache_get(LayoutCache *c, const Trace *tr, const View *v, int w, int h, unsigned gen);

#endif
