// lesson_checkpoints.c — a lesson's "checkpoints": the weights at points of training (the
// window's training slider, --checkpoint N), read, kept for lesson_write and freed.
//
//   "checkpoints": [{"step": N, "loss": x, "weights": {…}}, …]   steps rising, 1 to 64
//
// Each checkpoint's "weights" is kept as read (its cJSON tree, taken out of the file's), not
// printed: lesson_write prints it when a lesson is saved (printing all of them took ~40 % of
// loading induction-heads.json, 20 checkpoints). The trees are never changed once read, so
// lesson_clone shares them (a reference count) instead of copying them.
#include "lesson.h"
#include "jsonpath.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// "checkpoints": [{"step": N, "loss": x, "weights": {…}}, …] (steps rising); the weights
// computed: the override's checkpoint, else "weights", else the last checkpoint. Every
// checkpoint's weights are read (and checked) on a plain load; with an override, only
// the one computed.
bool lesson_read_checkpoints(JsonCtx *c, const cJSON *root, const LessonOverride *o, Lesson *ls)
{
    const cJSON *cks = cJSON_GetObjectItemCaseSensitive(root, "checkpoints");
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(root, "weights");
    ls->checkpoint = -1;
    if (!cks) {
        if (o && o->has_checkpoint) {
            const char *name = c->file;
            c->file = "--checkpoint";
            return jsonpath_fail(c, NULL, "%d: %s has no checkpoints (no \"checkpoints\")", o->checkpoint, name);
        }
        return attn_json_weights(c, jw, &ls->cfg, ls->w);
    }
    const int K = cJSON_IsArray(cks) ? cJSON_GetArraySize(cks) : 0;
    if (K < 1 || K > LESSON_MAX_CHECKPOINTS)
        return jsonpath_fail(c, "checkpoints", "expected an array of 1 to %d {\"step\", \"loss\", \"weights\"} objects, got %s",
                             LESSON_MAX_CHECKPOINTS, cJSON_IsArray(cks) ? "an empty or longer one" : jsonpath_type(cks));
    ls->ckpt_step = calloc((size_t)K, sizeof *ls->ckpt_step);
    ls->ckpt_loss = calloc((size_t)K, sizeof *ls->ckpt_loss);
    ls->ckpt_weights = calloc((size_t)K, sizeof *ls->ckpt_weights);
    ls->ckpt_trees = calloc(1, sizeof *ls->ckpt_trees + (size_t)K * sizeof *ls->ckpt_trees->tree);
    if (ls->ckpt_trees) atomic_init(&ls->ckpt_trees->refs, 1), ls->ckpt_trees->n = K;
    if (!ls->ckpt_step || !ls->ckpt_loss || !ls->ckpt_weights || !ls->ckpt_trees)
        return jsonpath_fail(c, "checkpoints", "out of memory");
    ls->n_checkpoints = K;
    const int dflt = jw ? -1 : K - 1;
    int sel = o && o->has_checkpoint ? o->checkpoint : dflt;
    ls->other_weights = sel != dflt;
    if (sel < -1 || sel >= K) {
        const char *name = c->file;
        c->file = "--checkpoint";
        return jsonpath_fail(c, NULL, "%d is out of range; %s has checkpoints 0 to %d", sel, name, K - 1);
    }
    static const char *const keys[] = {"step", "loss", "weights", NULL};
    int k = 0;
    for (const cJSON *ck = cks->child; ck; ck = ck->next, k++) {
        char p[JSONPATH_MAX], pw[JSONPATH_MAX];
        jsonpath_index(p, "checkpoints", k);
        if (!cJSON_IsObject(ck)) return jsonpath_fail(c, p, "expected {\"step\", \"loss\", \"weights\"}, got %s", jsonpath_type(ck));
        if (!jsonpath_check_keys(c, ck, p, keys)) return false;
        if (!jsonpath_int(c, ck, p, "step", &ls->ckpt_step[k], 0, 1 << 30, true, 0)) return false;
        if (k > 0 && ls->ckpt_step[k] <= ls->ckpt_step[k - 1]) {
            jsonpath_key(pw, p, "step");
            return jsonpath_fail(c, pw, "%d; expected steps that rise (checkpoint %d is at step %d)", ls->ckpt_step[k], k - 1,
                                 ls->ckpt_step[k - 1]);
        }
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(ck, "loss");
        jsonpath_key(pw, p, "loss");
        if (!l) return jsonpath_fail(c, pw, "missing; expected the training loss at this step");
        if (!jsonpath_number(c, l, pw, &ls->ckpt_loss[k])) return false;
        if (!(ls->ckpt_loss[k] >= 0.0f) || isinf(ls->ckpt_loss[k]))
            return jsonpath_fail(c, pw, "expected a finite loss from 0, got %g", (double)ls->ckpt_loss[k]);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(ck, "weights");
        jsonpath_key(pw, p, "weights");
        if (!w) return jsonpath_fail(c, pw, "missing; expected the weights at this step");
        // kept as read for lesson_write (printed only if it is written: lesson_checkpoint_json),
        // taken out of the file's tree, which its parser frees (and nothing reads it there after)
        ls->ckpt_trees->tree[k] = cJSON_DetachItemViaPointer((cJSON *)ck, (cJSON *)w);
        if (k != sel && o && (o->has_checkpoint || o->text)) continue; // (checked on the plain load)
        // read into the model's own (the one computed) or into a scratch copy, checked and freed
        JsonCtx cc = *c;
        char where[JSONPATH_MAX];
        snprintf(where, sizeof where, "%s", p);
        if (k == sel) {
            if (!attn_json_weights_at(&cc, w, pw, &ls->cfg, ls->w)) return false;
        } else {
            AttnWeights scratch[LESSON_MAX_LAYERS];
            memset(scratch, 0, sizeof scratch);
            bool ok = attn_json_weights_at(&cc, w, pw, &ls->cfg, scratch);
            for (int l2 = 0; l2 < LESSON_MAX_LAYERS; l2++) attn_weights_free(&scratch[l2]);
            if (!ok) return false;
        }
    }
    ls->checkpoint = sel;
    return sel >= 0 || attn_json_weights(c, jw, &ls->cfg, ls->w);
}

void lesson_free_checkpoints(Lesson *ls)
{
    free(ls->ckpt_step);
    free(ls->ckpt_loss);
    for (int k = 0; ls->ckpt_weights && k < ls->n_checkpoints; k++) free(ls->ckpt_weights[k]);
    free(ls->ckpt_weights);
    lesson_trees_release(ls->ckpt_trees);
    ls->ckpt_step = NULL, ls->ckpt_loss = NULL, ls->ckpt_weights = NULL, ls->ckpt_trees = NULL;
}

LessonTrees *lesson_trees_share(LessonTrees *t)
{
    if (t) atomic_fetch_add(&t->refs, 1);
    return t;
}

void lesson_trees_release(LessonTrees *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) > 1) return;
    for (int k = 0; k < t->n; k++) cJSON_Delete(t->tree[k]);
    free(t);
}

char *lesson_checkpoint_json(const Lesson *ls, int k)
{
    assert(k >= 0 && k < ls->n_checkpoints && ls->ckpt_weights);
    if (ls->ckpt_weights[k]) return strdup(ls->ckpt_weights[k]);
    assert(ls->ckpt_trees && ls->ckpt_trees->tree[k]);
    return cJSON_PrintUnformatted(ls->ckpt_trees->tree[k]); // (reads the tree only: clones on other threads may too)
}
