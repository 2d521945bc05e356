// optstep.c — one optimizer step shown (optstep.h).
#include "optstep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "i18n.h"

// The largest |value| of t (1 when all are 0).
static float abs_max(const Tensor *t)
{
    float m = 0.0f;
    for (size_t i = 0; i < t->size; i++) m = fmaxf(m, fabsf(t->data[i]));
    return m > 0.0f ? m : 1.0f;
}

// A (rows, cols) heatmap at r with cell size c: diverging around 0 (sequential from 0 when
// positive), its cells' numbers at `dec` decimals when they fit.
static void panel(Canvas *cv, const Tensor *t, Rect r, int c, bool positive, Palette pal, float s)
{
    const float m = abs_max(t);
    const int rows = t->shape[0], cols = t->shape[1], px = c * 2 / 5;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            const float v = t->data[(size_t)i * cols + j];
            const Rgb col = positive ? colormap_sequential(pal, v / m) : colormap_diverging(pal, v / m);
            paint_fill(cv, col, 255, r.x + j * c, r.y + i * c, c, c);
            if (c >= paint_px(s, 34)) {
                char num[16];
                snprintf(num, sizeof num, "%.2f", (double)v);
                paint_text_centered(cv, FONT_SANS, px, colormap_text_dark(col) ? THEME.ink : THEME.white, 255,
                                    (Rect){r.x + j * c, r.y + i * c + (c - px * 5 / 4) / 2, c, px * 5 / 4}, num);
            }
        }
    paint_frame(cv, THEME.grid, 255, r.x - 1, r.y - 1, cols * c + 2, rows * c + 2, 1);
}

// The title and the update's formula; returns the y under them.
static int draw_head(Canvas *cv, int m, int y, float s, const TrainShown *st, Lang lang)
{
    const bool model = st->slot >= WEIGHT_EMBED; // (the model's own weights: no layer)
    char step[16], layer[16], lr[24], line[400];
    snprintf(step, sizeof step, "%d", st->step), snprintf(layer, sizeof layer, "%d", st->layer);
    snprintf(lr, sizeof lr, "%.3g", st->oc.lr);
    const char *args[] = {step, layer, WEIGHT_INFO[st->slot].plain, optim_kind_name(st->oc.kind), lr};
    i18n_fmt(line, sizeof line, lang, model ? "train.step_title_model" : "train.step_title", 5, args);
    const int pt = paint_px(s, 24), pf = paint_px(s, 18);
    paint_text(cv, FONT_BOLD, pt, THEME.ink, 255, m, y, ALIGN_LEFT, line);
    y += pt * 3 / 2;
    paint_text(cv, FONT_SANS, pf, THEME.ink, 255, m, y, ALIGN_LEFT,
               i18n_get(lang, st->oc.kind == OPTIM_ADAMW ? "train.step_adamw" : "train.step_sgd"));
    return y + pf * 2;
}

// The attention row before and after, as two labelled strips with their numbers.
static void draw_row(Canvas *cv, int m, int y, int w, float s, const TrainShown *st, char *const *vocab, int n_vocab,
                     Lang lang, Palette pal)
{
    char a[5][24], line[400];
    snprintf(a[0], 24, "%d", st->att_layer), snprintf(a[1], 24, "%d", st->att_head);
    snprintf(a[2], 24, "%d", st->att_batch), snprintf(a[3], 24, "%d", st->att_row);
    snprintf(a[4], 24, "%.3f", (double)st->att_change);
    const char *args[] = {a[0], a[1], a[2], a[3], a[4]};
    const int pf = paint_px(s, 17), lw = paint_px(s, 110);
    i18n_fmt(line, sizeof line, lang, "train.step_row", 5, args);
    paint_text(cv, FONT_SANS, pf, THEME.ink, 255, m, y, ALIGN_LEFT, line);
    y += pf * 3 / 2;
    const int n = st->att_before.shape[1], c = (w - 2 * m - lw) / (n > 0 ? n : 1) < paint_px(s, 48)
                                                   ? (w - 2 * m - lw) / (n > 0 ? n : 1) : paint_px(s, 48);
    for (int j = 0; vocab && st->att_ids.rank == 2 && j < n && j < st->att_ids.shape[1]; j++) { // the keys' tokens
        const int id = (int)st->att_ids.data[j];
        if (id >= 0 && id < n_vocab)
            paint_text_centered(cv, FONT_MONO, pf, j == st->att_row ? THEME.accent : THEME.muted, 255,
                                (Rect){m + lw + j * c, y, c, pf * 5 / 4}, vocab[id]);
    }
    if (vocab) y += pf * 3 / 2;
    const Tensor *rows[2] = {&st->att_before, &st->att_after};
    for (int k = 0; k < 2; k++, y += c + paint_px(s, 6)) {
        paint_text(cv, FONT_SANS, pf, THEME.muted, 255, m, y + (c - pf) / 2, ALIGN_LEFT,
                   i18n_get(lang, k ? "train.step_after" : "train.step_before"));
        for (int j = 0; j < n; j++) { // probabilities: one scale from 0 to 1 for both rows
            const float v = rows[k]->data[j];
            const Rgb col = colormap_sequential(pal, v);
            paint_fill(cv, col, 255, m + lw + j * c, y, c, c);
            char num[16];
            snprintf(num, sizeof num, "%.2f", (double)v);
            if (c >= paint_px(s, 34))
                paint_text_centered(cv, FONT_SANS, c * 2 / 5, colormap_text_dark(col) ? THEME.ink : THEME.white, 255,
                                    (Rect){m + lw + j * c, y + (c - c / 2) / 2, c, c / 2}, num);
        }
        paint_frame(cv, THEME.grid, 255, m + lw - 1, y - 1, n * c + 2, c + 2, 1);
    }
}

void optstep_draw(Canvas *cv, int w, int h, float s, const TrainShown *st, char *const *vocab, int n_vocab, Lang lang,
                  Palette pal)
{
    paint_fill(cv, THEME.bg, 255, 0, 0, w, h);
    const int m = paint_px(s, 20), gap = paint_px(s, 28), pl = paint_px(s, 16);
    int y = draw_head(cv, m, m, s, st, lang);
    const bool adamw = st->oc.kind == OPTIM_ADAMW;
    const Tensor *ts[5] = {&st->w_old, &st->dw, adamw ? &st->m_hat : NULL, adamw ? &st->v_hat : NULL, &st->w_new};
    static const char *const keys[5] = {"train.step_w_old", "train.step_dw", "train.step_m_hat", "train.step_v_hat",
                                        "train.step_w_new"};
    const int n = adamw ? 5 : 3, rows = st->w_old.shape[0], cols = st->w_old.shape[1];
    const int room_h = h * 45 / 100, pw = (w - 2 * m - (n - 1) * gap) / n;
    int c = pw / (cols > 0 ? cols : 1);
    if (c * rows > room_h) c = room_h / (rows > 0 ? rows : 1);
    if (c < 1) c = 1;
    int x = m;
    for (int k = 0; k < 5; k++) {
        if (!ts[k]) continue;
        char label[120], range[48];
        snprintf(label, sizeof label, "%s  %d×%d", i18n_get(lang, keys[k]), rows, cols);
        paint_text(cv, FONT_BOLD, pl, THEME.ink, 255, x, y, ALIGN_LEFT, label);
        panel(cv, ts[k], (Rect){x, y + pl * 3 / 2, cols * c, rows * c}, c, k == 3, pal, s);
        snprintf(range, sizeof range, k == 3 ? "0 … %.3g" : "± %.3g", (double)abs_max(ts[k]));
        paint_text(cv, FONT_SANS, pl * 7 / 8, THEME.muted, 255, x, y + pl * 3 / 2 + rows * c + pl / 3, ALIGN_LEFT, range);
        x += pw + gap;
    }
    y += pl * 3 / 2 + rows * c + pl * 2;
    char before[24], after[24], delta[24], line[300];
    snprintf(before, sizeof before, "%.4f", (double)st->loss_before);
    snprintf(after, sizeof after, "%.4f", (double)st->loss_after);
    // the difference of the two as shown (one value, one rounding: it adds up at 4 decimals)
    const long d4 = lround((double)st->loss_after * 1e4) - lround((double)st->loss_before * 1e4);
    snprintf(delta, sizeof delta, "%s%ld.%04ld", d4 < 0 ? "−" : "+", labs(d4) / 10000, labs(d4) % 10000);
    const char *args[] = {before, after, delta};
    i18n_fmt(line, sizeof line, lang, "train.step_loss", 3, args);
    paint_text(cv, FONT_BOLD, paint_px(s, 18), THEME.ink, 255, m, y, ALIGN_LEFT, line);
    y += paint_px(s, 18) * 2;
    if (st->att_before.rank == 2) draw_row(cv, m, y, w, s, st, vocab, n_vocab, lang, pal);
    paint_text(cv, FONT_SANS, paint_px(s, 15), THEME.muted, 255, w - m, h - m - paint_px(s, 15), ALIGN_RIGHT,
               i18n_get(lang, "train.step_keys"));
}
