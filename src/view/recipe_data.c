// recipe_data.c — the lesson's own numbers: the input (query, key, value) and the mask.
// (recipe.h says what a recipe holds; each kind's whole recipe is here.)
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "i18n.h"

static void formula_named(const Trace *tr, int s, Lang lang, char *out, size_t n)
{
    char key[48];
    snprintf(key, sizeof key, "formula.%s", STAGE_INFO[tr->stages[s].id].name);
    const char *fx = i18n_lookup(LANG_EN, key); // formulas are code: the same in every language
    (void)lang;
    snprintf(out, n, "%s", fx ? fx : recipe_name_of(tr, s).sym);
}

// The mask: the sliding window's and a bottom-right causal mask's narrations say so.
static const char *narration_mask(const Trace *tr, int s)
{
    (void)s;
    if (tr->mask_kind == MASK_CAUSAL && tr->causal_offset != 0) return "_bottom_right";
    if (tr->mask_kind == MASK_SLIDING && tr->sink_tokens > 0) return "_sliding_sinks";
    return tr->mask_kind == MASK_SLIDING ? "_sliding" : "";
}

const StageRecipe RECIPE_INPUT = {
    .panels = recipe_panels_self, .formula = formula_named, .anim = ANIM_FADE,
};

const StageRecipe RECIPE_MASK = {
    .panels = recipe_panels_self, .formula = formula_named, .narration = narration_mask, .anim = ANIM_FADE,
    .key_cols = true, .mask_look = MASK_LOOK_SELF, .scale = SCALE_MASK01,
};
