// viewkind.c — the table of view kinds (see viewkind.h).
#include "viewkind.h"

#include <assert.h>

#include "i18n.h"
#include "layout_inner.h"

static const ViewKindInfo VIEW_KINDS[VIEW_KIND_COUNT] = {
    [VIEW_PANELS] = {
        .next = VIEW_MODEL, .panels = true, .extra = true, .narrated_head = true, .place = layout_place_stage,
    },
    [VIEW_MODEL] = {
        .file_stem = "model-view", .next = VIEW_HEADS, .title_key = "title.model_view",
        .formula_key = "formula.model_view", .place = view_model_place, .hit = view_model_hit,
        .narration = view_model_narration, .narration_fixed = true, .alt = view_model_alt,
        .describe = view_model_describe,
    },
    [VIEW_HEADS] = {
        .file_stem = "head-view", .next = VIEW_PANELS, .title_key = "title.head_view",
        .formula_key = "formula.head_view", .place = view_heads_place, .narration = view_heads_narration,
        .alt = view_heads_alt, .describe = view_heads_describe,
    },
    [VIEW_COMPARE] = {
        .next = VIEW_PANELS, .panels = true, .place = view_compare_place, .narration = view_compare_narration, .alt = view_compare_alt,
        .describe = view_compare_describe, .tip = view_compare_tip,
    },
#define EXPERIMENT(stem, key)                                                                                          \
    {.file_stem = stem, .next = VIEW_PANELS, .panels = true, .one_frame = true, .title_key = "title." key,               \
     .formula_key = "formula." key, .row_key = "name." key, .place = view_experiment_place, .narration = view_experiment_narration,            \
     .alt = view_experiment_alt, .describe = view_experiment_describe, .tip = view_experiment_tip}
    [VIEW_ABLATION] = EXPERIMENT("ablation", "exp_ablation"),
    [VIEW_LENS] = EXPERIMENT("logit-lens", "exp_lens"),
    [VIEW_ATTRIBUTION] = EXPERIMENT("logit-attribution", "exp_dla"),
    [VIEW_PATCHING] = EXPERIMENT("patching", "exp_patching"),
#undef EXPERIMENT
};

const ViewKindInfo *viewkind_of(ViewKind k)
{
    assert(k >= 0 && k < VIEW_KIND_COUNT && VIEW_KINDS[k].place);
    return &VIEW_KINDS[k];
}

const char *viewkind_frame_name(ViewKind k, const Trace *tr, int s)
{
    const char *stem = viewkind_of(k)->file_stem;
    return stem ? stem : tr->stages[s].name;
}

void viewkind_heading(Layout *L, const View *v, ViewKind k, int layer)
{
    const ViewKindInfo *vk = viewkind_of(k);
    char bb[12], lb[12], hb[12];
    snprintf(bb, sizeof bb, "%d", v->batch), snprintf(lb, sizeof lb, "%d", layer), snprintf(hb, sizeof hb, "%d", v->head);
    const char *args[] = {bb, lb, hb};
    i18n_fmt(L->title, sizeof L->title, v->lang, vk->title_key, 3, args);
    snprintf(L->formula, sizeof L->formula, "%s", i18n_get(v->lang, vk->formula_key));
    L->formula_note[0] = '\0';
}
