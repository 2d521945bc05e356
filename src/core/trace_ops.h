// trace_ops.h — whole-trace arithmetic for the what-if lab: a copy, the difference
// of an edited lesson's trace to the original's, and the frames in between two
// traces while an edit animates. Stages are matched by name (an edit can add or
// remove the mask stage; shapes never change).
#ifndef ATTNVIZ_TRACE_OPS_H
#define ATTNVIZ_TRACE_OPS_H

#include "trace.h"

// A deep copy of src into dst (dst is overwritten, not freed). Weight pointers are
// shared (borrowed from the same lesson). False on allocation failure (dst empty).
bool trace_clone(Trace *dst, const Trace *src);

// dst (a clone of b) = a + (b − a)·t element-wise, for the stages of b that a has
// with the same shape; others (and non-finite values, and 0/1 masks) switch from
// a's value to b's half-way. Statistics are left unset (the view measures).
void trace_lerp(Trace *dst, const Trace *a, const Trace *b, float t);

// dst (a clone of b) = b − a element-wise: the change an edit made. A stage a lacks
// is compared with what it means there: a mask that was not there was all 1.
// NaN − NaN and equal infinities give 0 (unchanged); a masked score (the mask's fill in
// a or b) gives −∞: masked, no difference (the Δ view shows it masked); statistics are
// computed.
void trace_diff(Trace *dst, const Trace *a, const Trace *b);

// Whether element k of stage s of b differs from a's (same name and shape; a stage
// a lacks differs everywhere). NaN equals NaN.
bool trace_value_changed(float a, float b);

#endif
