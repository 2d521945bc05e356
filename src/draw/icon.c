// icon.c — the application icon (see icon.h).
#include "icon.h"

void icon_draw(Canvas *cv)
{
    int w = 0, h = 0;
    paint_size(cv, &w, &h);
    int s = w < h ? w : h;
    paint_clear(cv, THEME.accent);
    int border = s / 16 > 0 ? s / 16 : 1;
    paint_fill(cv, THEME.bg, 255, border, border, s - 2 * border, s - 2 * border);
    // A causal softmax over 4 keys: each query attends to itself most, the keys
    // after it are masked (drawn as the page colour).
    enum { N = 4 };
    static const float weight[N][N] = {{1.00f, 0, 0, 0},
                                       {0.30f, 0.70f, 0, 0},
                                       {0.15f, 0.25f, 0.60f, 0},
                                       {0.10f, 0.15f, 0.20f, 0.55f}};
    int margin = s * 5 / 32, gap = s / 32 > 0 ? s / 32 : 1;
    int cell = (s - 2 * margin - (N - 1) * gap) / N;
    if (cell < 1) cell = 1;
    int x0 = (s - (N * cell + (N - 1) * gap)) / 2;
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            Rgb col = c > r ? THEME.empty : colormap_sequential(PALETTE_BLUE_RED, weight[r][c]);
            paint_fill(cv, col, 255, x0 + c * (cell + gap), x0 + r * (cell + gap), cell, cell);
        }
}
