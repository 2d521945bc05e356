// frame.h — what the view hands draw for one frame, beyond the Layout: everything the
// painting would otherwise ask the recipes and the scene while it draws (the animation's
// kind and progress, the header's texts, the masked cells' text, the padded keys, the
// timeline's labels, the narration, the derivation strip to write out). frame_prepare
// fills it once, before the first paint call; render.c, chrome.c and the overlays read it.
// Pure view code: no SDL, no allocation.
#ifndef ATTNVIZ_FRAME_H
#define ATTNVIZ_FRAME_H

#include <stdbool.h>

#include "anim.h"
#include "layout.h"
#include "recipe.h"

typedef struct Frame {
    AnimFrame anim;            // the stage's transition: kind, eased progress
    char mask_text[32];        // what a masked cell says ("−∞", "−1e9")
    // the header: "3/12  Scores", the stage's own name, its operand's (a split or concat
    // badge reads "Q (2,4,4) → (2,2,4,2)": from_stage is its index, else -1)
    char title[200], name[96], from_name[96];
    int from_stage;
    char step_key[STEP_COUNT][40]; // the i18n key of the timeline's label of each L->step_id[i]
    // an experiment's frame: the row in the timeline's place, what is on screen and how to go back
    char view_row[160], view_back[120];
    const float *key_pad;      // key-padding mask row of the batch shown (0 = a padded key); NULL: none
    int n_keys;                // its length
    const char *narration;     // the stage's narration: the lesson's own text, or narration_buf
    char narration_buf[600];
    unsigned long long narration_hash; // of every stage's narration (one size for the lesson; not printed)
    bool narration_live;       // Overlays.live: narration_hash is of the text shown only, its size kept
    int narration_from, narration_to; // the stages whose narrations may differ (scene_narration_stages)
    bool has_deriv;            // the strip writes deriv out, its lines shown deriv_shown (0 … 1)
    float deriv_shown;
    Derivation deriv;
    char deriv_text[SCENE_DERIV_MAX_LINES][SCENE_DERIV_MAX_VALUES][32]; // its values as written
} Frame;

// Fills F for v's frame laid out as L; ov (may be NULL): the window's overlays (a
// hovered result cell's derivation replaces the settled strip's).
void frame_prepare(Frame *F, const Layout *L, const Trace *tr, const View *v, const Overlays *ov);

// Whether key j of the batch shown is padding (its label struck through).
static inline bool frame_key_padded(const Frame *F, int j)
{
    return F->key_pad && j >= 0 && j < F->n_keys && F->key_pad[j] == 0.0f;
}

#endif
