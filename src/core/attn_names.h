// attn_names.h — the names of the enums a lesson names (attention.h's X-macros: activation,
// norm, positions, RoPE style and scaling, the causal mask's alignment, --set's mask kinds),
// one list each, read by the reader (attn_json, model_keys), the writer (lesson_save), the
// edits and the messages that list what a key takes.
#ifndef ATTNVIZ_ATTN_NAMES_H
#define ATTNVIZ_ATTN_NAMES_H

#include <stddef.h>

#include "attention.h"

typedef struct AttnNames {
    const char *const *names;   // names[v] of value v; NULL: a value without a name (ROPE_NONE)
    const char *const *glosses; // after the name in messages: " (RMSNorm)", or ""
    int n;
} AttnNames;

extern const AttnNames ATTN_NAMES_FFN_ACT, ATTN_NAMES_NORM, ATTN_NAMES_POS, ATTN_NAMES_ROPE_STYLE,
    ATTN_NAMES_ROPE_SCALE, ATTN_NAMES_CAUSAL, ATTN_NAMES_MASK, ATTN_NAMES_LAYER_TYPE, ATTN_NAMES_WINDOW_CONV,
    ATTN_NAMES_MASKED_ROWS, ATTN_NAMES_ALIBI_FORM, ATTN_NAMES_FLASH_ACC, ATTN_NAMES_STREAM_POS,
    ATTN_NAMES_LINEAR_RULE, ATTN_NAMES_LINEAR_FORM;

// The value named s, or -1 (s may be NULL).
int attn_names_find(const AttnNames *e, const char *s);
// The name of value v; NULL out of range or unnamed.
const char *attn_names_name(const AttnNames *e, int v);
// What a key of these names expects, as messages write it: "\"layer\" (LayerNorm) or \"rms\"
// (RMSNorm)", "\"relu\", \"gelu\", \"gelu_tanh\" or \"swiglu\"" (the named values in order).
void attn_names_expected(const AttnNames *e, char *out, size_t n);

#endif
