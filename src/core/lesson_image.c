// lesson_image.c — a vision transformer's "image" and its input images, read and written.
//
//   "image": {"height": H, "width": W, "patch": p, "classes": ["0", "1", …]}
//   "input": {"image": (B, H, W) or (H, W) pixels}
//
// p must divide H and W (non-square images allowed); the patches, N = (H/p)·(W/p), become the
// tokens after a learned [CLS] one (L = N + 1, attention.c's vision_embed_forward); the model
// has learned positions (N + 1 rows of weights.pos_embed) and a final norm, as ViT has
// (Dosovitskiy et al. 2020). The labels of the positions are "CLS", "1" … "N".
#include "lesson.h"
#include "json_out.h"
#include "jsonpath.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_MAX_SIDE 64

static bool read_classes(JsonCtx *c, const cJSON *j, Lesson *ls)
{
    const int K = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 0;
    if (K < 1 || K > LESSON_MAX_VOCAB)
        return jsonpath_fail(c, "image.classes", "expected an array of 1 to %d class names, got %s", LESSON_MAX_VOCAB,
                             !j ? "none" : cJSON_IsArray(j) ? (K ? "a longer one" : "an empty one (0 classes)")
                                                            : jsonpath_type(j));
    if (!(ls->classes = calloc((size_t)K + 1, sizeof *ls->classes))) return jsonpath_fail(c, "image.classes", "out of memory");
    ls->cfg.n_classes = K; // (lesson_free frees what was read so far)
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char p[JSONPATH_MAX];
        jsonpath_index(p, "image.classes", i);
        if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) > 64)
            return jsonpath_fail(c, p, "expected a class name (a string of 1 to 64 bytes), got %s",
                                 cJSON_IsString(e) ? "another length" : jsonpath_type(e));
        for (int k = 0; k < i; k++)
            if (strcmp(ls->classes[k], e->valuestring) == 0)
                return jsonpath_fail(c, p, "\"%s\" again (image.classes[%d]); expected distinct names", e->valuestring, k);
        if (!(ls->classes[i] = strdup(e->valuestring))) return jsonpath_fail(c, p, "out of memory");
    }
    return true;
}

bool lesson_read_image(JsonCtx *c, const cJSON *root, Lesson *ls)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "image");
    if (!j) return true;
    if (cJSON_GetObjectItemCaseSensitive(root, "vocab"))
        return jsonpath_fail(c, "image", "a vision transformer reads pixels, not tokens; expected no \"vocab\" with it");
    static const char *const keys[] = {"height", "width", "patch", "classes", NULL};
    if (!cJSON_IsObject(j))
        return jsonpath_fail(c, "image", "expected {\"height\": H, \"width\": W, \"patch\": p, \"classes\": […]}, got %s",
                             jsonpath_type(j));
    if (!jsonpath_check_keys(c, j, "image", keys)) return false;
    AttnConfig *cfg = &ls->cfg;
    if (!jsonpath_int(c, j, "image", "height", &cfg->image_h, 1, IMAGE_MAX_SIDE, true, 0) ||
        !jsonpath_int(c, j, "image", "width", &cfg->image_w, 1, IMAGE_MAX_SIDE, true, 0) ||
        !jsonpath_int(c, j, "image", "patch", &cfg->patch_size, 1, IMAGE_MAX_SIDE, true, 0))
        return false;
    if (cfg->image_h % cfg->patch_size || cfg->image_w % cfg->patch_size) {
        char div[160] = "";
        for (int d = 1, n = 0; d <= cfg->image_h && d <= cfg->image_w; d++)
            if (cfg->image_h % d == 0 && cfg->image_w % d == 0)
                n += snprintf(div + n, sizeof div - (size_t)n, "%s%d", n ? ", " : "", d);
        return jsonpath_fail(c, "image.patch", "%d does not divide the %d × %d image; expected a divisor of both (%s)",
                             cfg->patch_size, cfg->image_h, cfg->image_w, div);
    }
    return read_classes(c, cJSON_GetObjectItemCaseSensitive(j, "classes"), ls);
}

bool lesson_read_image_input(JsonCtx *c, const cJSON *in, Lesson *ls)
{
    AttnConfig *cfg = &ls->cfg;
    const int H = cfg->image_h, W = cfg->image_w, N = (H / cfg->patch_size) * (W / cfg->patch_size);
    if (!in) return jsonpath_fail(c, "input", "missing; expected {\"image\": a (B, %d, %d) tensor of pixels}", H, W);
    if (!cJSON_IsObject(in)) return jsonpath_fail(c, "input", "expected an object, got %s", jsonpath_type(in));
    static const char *const keys[] = {"image", NULL};
    if (!jsonpath_check_keys(c, in, "input", keys)) return false;
    const cJSON *im = cJSON_GetObjectItemCaseSensitive(in, "image");
    if (!im) return jsonpath_fail(c, "input.image", "missing; expected a (B, %d, %d) tensor of pixels", H, W);
    JsonTensorOpts o = {false, LESSON_MAX_ELEMS};
    Tensor *t = &ls->in.query;
    if (!jsonpath_tensor(c, im, "input.image", &o, t)) return false;
    if (t->rank == 2) { // one image: a batch of one
        t->shape[2] = t->shape[1], t->shape[1] = t->shape[0], t->shape[0] = 1, t->rank = 3;
    }
    char written[64];
    tensor_shape_str(t, written, sizeof written);
    if (t->rank != 3 || t->shape[1] != H || t->shape[2] != W)
        return jsonpath_fail(c, "input.image", "shape %s; expected (B, %d, %d) or (%d, %d): image.height × image.width "
                             "pixels", written, H, W, H, W);
    ls->batch = t->shape[0];
    ls->len_q = ls->len_k = N + 1;
    ls->in.key_is_query = ls->in.value_is_key = true;
    // ViT's own: a learned position per token, a final norm (model_keys leaves a model's own keys
    // to language models: these are not read from "model")
    cfg->positions = POS_LEARNED, cfg->max_positions = N + 1, cfg->final_norm = true, cfg->temperature = 1.0f;
    ls->q_tokens = calloc((size_t)N + 2, sizeof *ls->q_tokens);
    ls->k_tokens = calloc((size_t)N + 2, sizeof *ls->k_tokens);
    if (!ls->q_tokens || !ls->k_tokens) return jsonpath_fail(c, "input.image", "out of memory");
    for (int l = 0; l <= N; l++) {
        char lab[16];
        snprintf(lab, sizeof lab, l ? "%d" : "CLS", l);
        if (!(ls->q_tokens[l] = strdup(lab)) || !(ls->k_tokens[l] = strdup(lab)))
            return jsonpath_fail(c, "input.image", "out of memory");
    }
    return true;
}

void lesson_write_image(FILE *f, const Lesson *ls)
{
    const AttnConfig *cfg = &ls->cfg;
    fprintf(f, ",\n  \"image\": {\"height\": %d, \"width\": %d, \"patch\": %d, \"classes\": [", cfg->image_h, cfg->image_w,
            cfg->patch_size);
    for (int k = 0; k < cfg->n_classes; k++) {
        fputs(k ? ", " : "", f);
        json_write_string(f, ls->classes[k]);
    }
    fputs("]}", f);
}
