// recipe_vision.c — a vision transformer's extra beside its attention stages: the image, and
// [CLS]'s row of the attention over the patches, for the head shown and averaged over the heads
// (the mean of the heads' rows, not a rollout through the layers), on the attention panel's colour
// scale (recipe.h: the softmax recipe's extra; draw/visiondraw.c paints it).
#include "recipe.h"

#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "lesson.h"
#include "scene.h"

static int imin_(int a, int b) { return a < b ? a : b; }
static int imax_(int a, int b) { return a > b ? a : b; }

// "max 0.39" and "patch 10"
static void note_max(const float *a, int n, Lang lang, char out[2][64])
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (a[i] > a[best]) best = i;
    char w[16], p[16];
    snprintf(w, sizeof w, "%.2f", (double)a[best]);
    snprintf(p, sizeof p, "%d", best + 1);
    const char *a1[] = {w}, *a2[] = {p};
    i18n_fmt(out[0], 64, lang, "vision.max", 1, a1);
    i18n_fmt(out[1], 64, lang, "vision.at", 1, a2);
}

void recipe_extra_cls_attention(Layout *L, const Trace *tr, const View *v, int gap)
{
    const Stage *st = &tr->stages[v->stage];
    const Lesson *ls = v->lesson;
    if (tr->n_classes <= 0 || !ls || !ls->classes || st->id != STAGE_ATTN || st->t.rank != 4) return;
    const AttnConfig *cfg = &ls->cfg;
    const int B = st->t.shape[0], H = st->t.shape[1], Lk = st->t.shape[3], N = Lk - 1;
    if (N > LAYOUT_MAX_PATCHES || cfg->patch_size <= 0 || N != (cfg->image_h / cfg->patch_size) * (cfg->image_w / cfg->patch_size) ||
        ls->in.query.rank != 3 || ls->in.query.shape[0] != B || scene_log_probs(tr, v))
        return; // (a log scale would colour the patches otherwise than the panel)
    const int b = v->batch >= 0 && v->batch < B ? v->batch : 0, h = v->head >= 0 && v->head < H ? v->head : 0;
    VisionOverlay *o = &L->vision;
    const int bw = imin_(imax_((int)(260 * L->s), L->area.w / 5), L->area.w / 3);
    o->r = (Rect){L->area.x + L->area.w - bw, L->area.y, bw, L->area.h};
    L->area.w -= bw + gap;
    o->height = cfg->image_h, o->width = cfg->image_w, o->patch = cfg->patch_size;
    o->pixels = ls->in.query.data + (size_t)b * cfg->image_h * cfg->image_w;
    o->pix_max = 0.0f;
    for (int i = 0; i < cfg->image_h * cfg->image_w; i++)
        if (o->pixels[i] > o->pix_max) o->pix_max = o->pixels[i];
    for (int n = 0; n < N; n++) { // row 0 ([CLS]), keys 1 … N (the patches)
        float sum = 0.0f;
        for (int k = 0; k < H; k++) sum += st->t.data[(((size_t)b * H + k) * Lk) * Lk + 1 + n];
        o->att[0][n] = st->t.data[(((size_t)b * H + h) * Lk) * Lk + 1 + n];
        o->att[1][n] = sum / (float)H;
    }
    o->scale = (ColorScale){v->palette, true, false, 0.0f, 1.0f, 0.0f};
    char hb[16], nb[16];
    snprintf(hb, sizeof hb, "%d", h);
    snprintf(nb, sizeof nb, "%d", H);
    const char *a1[] = {hb}, *a2[] = {nb};
    snprintf(o->title, sizeof o->title, "%s", i18n_get(v->lang, "vision.title"));
    snprintf(o->label[0], sizeof o->label[0], "%s", i18n_get(v->lang, "vision.image"));
    i18n_fmt(o->label[1], sizeof o->label[1], v->lang, "vision.head", 1, a1);
    i18n_fmt(o->label[2], sizeof o->label[2], v->lang, "vision.mean", 1, a2);
    note_max(o->att[0], N, v->lang, o->note[0]);
    note_max(o->att[1], N, v->lang, o->note[1]);
}
