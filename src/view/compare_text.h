// compare_text.h — the words of a compare (compare.h) in a language: the summary line of which
// stages are identical and which differ by how much, and one stage's line.
#ifndef ATTNVIZ_COMPARE_TEXT_H
#define ATTNVIZ_COMPARE_TEXT_H

#include <stddef.h>

#include "compare.h"
#include "lang.h"

// max |Δ| as shown: 3 significant digits, "∞" when a non-finite value differs.
void compare_text_delta(float max_abs, char *buf, size_t n);
// "B = SPEC: N stages identical (input … l0.scores); M differ: l0.masked_scores (max |Δ| ∞), …"
// (identical stages as runs of consecutive ones; the first 8 that differ, then how many more).
// ids: the stages' ids (--dump's names), else their names in lang (a frame's narration).
void compare_text_summary(const Compare *c, const Trace *a, const Trace *b, const char *spec, bool ids, Lang lang,
                          char *buf, size_t n);
// One stage: "identical" or "differs in K of N cells, max |Δ| V" (or "only in A / B").
void compare_text_stage(const CompareStage *s, Lang lang, char *buf, size_t n);

#endif
