// attn_names.c — the enums' names from attention.h's X-macros (attn_names.h).
#include "attn_names.h"

#include <stdio.h>
#include <string.h>

#define NAME_OF(id, name, ...) [id] = name,
#define FIRST(a, ...) a
#define GLOSS_OF(id, name, ...) [id] = FIRST(__VA_ARGS__, ~),
#define NAMES(var, TABLE, count)                                                                                 \
    static const char *const var##_names[count] = {TABLE(NAME_OF)};                                              \
    static const char *const var##_glosses[count] = {TABLE(GLOSS_OF)};                                           \
    const AttnNames var = {var##_names, var##_glosses, count};

NAMES(ATTN_NAMES_FFN_ACT, FFN_ACT_TABLE, FFN_ACT_COUNT)
NAMES(ATTN_NAMES_NORM, NORM_KIND_TABLE, NORM_KIND_COUNT)
NAMES(ATTN_NAMES_POS, POS_KIND_TABLE, POS_KIND_COUNT)
NAMES(ATTN_NAMES_ROPE_STYLE, ROPE_STYLE_TABLE, ROPE_STYLE_COUNT)
NAMES(ATTN_NAMES_ROPE_SCALE, ROPE_SCALE_TABLE, ROPE_SCALE_COUNT)
NAMES(ATTN_NAMES_CAUSAL, CAUSAL_ALIGN_TABLE, CAUSAL_ALIGN_COUNT)
NAMES(ATTN_NAMES_MASK, MASK_KIND_TABLE, MASK_KIND_COUNT)
NAMES(ATTN_NAMES_LAYER_TYPE, LAYER_TYPE_TABLE, LAYER_TYPE_COUNT)
NAMES(ATTN_NAMES_WINDOW_CONV, WINDOW_CONV_TABLE, WINDOW_CONV_COUNT)
NAMES(ATTN_NAMES_MASKED_ROWS, MASKED_ROWS_TABLE, MASKED_ROWS_COUNT)
NAMES(ATTN_NAMES_ALIBI_FORM, ALIBI_FORM_TABLE, ALIBI_FORM_COUNT)
NAMES(ATTN_NAMES_FLASH_ACC, FLASH_ACC_TABLE, FLASH_ACC_COUNT)
NAMES(ATTN_NAMES_STREAM_POS, STREAM_POS_TABLE, STREAM_POS_COUNT)
NAMES(ATTN_NAMES_LINEAR_RULE, LINEAR_RULE_TABLE, LINEAR_RULE_COUNT)
NAMES(ATTN_NAMES_LINEAR_FORM, LINEAR_FORM_TABLE, LINEAR_FORM_COUNT)

int attn_names_find(const AttnNames *e, const char *s)
{
    for (int v = 0; s && v < e->n; v++)
        if (e->names[v] && strcmp(e->names[v], s) == 0) return v;
    return -1;
}

const char *attn_names_name(const AttnNames *e, int v)
{
    return v >= 0 && v < e->n ? e->names[v] : NULL;
}

void attn_names_expected(const AttnNames *e, char *out, size_t n)
{
    int named = 0, k = 0;
    for (int v = 0; v < e->n; v++) named += e->names[v] != NULL;
    if (n) out[0] = '\0';
    size_t used = 0;
    for (int v = 0; v < e->n && used < n; v++) {
        if (!e->names[v]) continue;
        const char *sep = k == 0 ? "" : k == named - 1 ? " or " : ", ";
        int w = snprintf(out + used, n - used, "%s\"%s\"%s", sep, e->names[v], e->glosses[v]);
        if (w < 0) break;
        used += (size_t)w;
        k++;
    }
}
