// story.c — narration from a model's own numbers (see story.h).
#include "story.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn_json.h"
#include "i18n.h"
#include "panel.h"

#define STORY_MAX_HEADS 8 // heads the model view's narration names one by one (more: summary_text)

// Layer l's attention weights (attn), or -1.
static int attn_stage(const Trace *tr, int l)
{
    for (int s = 0; s < tr->n; s++)
        if (tr->stages[s].id == STAGE_ATTN && (tr->stages[s].layer == l || (tr->n_layers <= 1 && l == 0))) return s;
    return -1;
}

static const float *attn_row(const Tensor *t, int b, int h, int i)
{
    return t->data + ((((size_t)b * (size_t)t->shape[1] + (size_t)h) * (size_t)t->shape[2]) + (size_t)i) * (size_t)t->shape[3];
}

static int row_argmax(const float *a, int n)
{
    int best = 0;
    for (int j = 1; j < n; j++)
        if (a[j] > a[best]) best = j;
    return best;
}

void story_head_pattern(const Trace *tr, int s, int b, int h, HeadPattern *p)
{
    assert(s >= 0 && s < tr->n); // attn_stage of a layer most_changed found, or of the loop's layer
    const Tensor *t = &tr->stages[s].t;
    assert(t->rank == 4 && b >= 0 && b < t->shape[0] && h >= 0 && h < t->shape[1]); // an attn stage's (b, h)
    const int Lq = t->shape[2], Lk = t->shape[3], off = Lk - Lq; // (queries the last Lq positions)
    assert(Lq <= LESSON_MAX_LEN && Lk <= LESSON_MAX_LEN); // (the reader's limit on a length)
    *p = (HeadPattern){0, 0, 0, Lq, 0.0f};
    // each row's largest weight once, and how many rows have it at each distance back and at
    // each key (the model view's narration asks every head several times a frame: the argmax
    // inside both loops made it Lk²·Lq a head, 0.75–1.6 s a frame for 51 tokens × 16 heads)
    int arg[LESSON_MAX_LEN], at_back[LESSON_MAX_LEN] = {0}, at_key[LESSON_MAX_LEN] = {0};
    for (int i = 0; i < Lq; i++) {
        arg[i] = row_argmax(attn_row(t, b, h, i), Lk);
        at_key[arg[i]]++;
        if (i + off - arg[i] >= 0) at_back[i + off - arg[i]]++;
    }
    int best_back = 0, back_rows = -1, best_key = 0, key_rows = -1;
    for (int d = 0; d < Lk; d++) // key i − d: in how many of the rows that have it
        if (at_back[d] > back_rows) back_rows = at_back[d], best_back = d;
    for (int k = 0; k < Lk; k++) // one key for every row
        if (at_key[k] > key_rows) key_rows = at_key[k], best_key = k;
    const bool back = back_rows >= key_rows;
    p->back = back ? best_back : -1, p->key = best_key, p->rows = back ? back_rows : key_rows;
    p->of = 0;
    double sum = 0.0;
    for (int i = 0; i < Lq; i++) {
        const int j = back ? i + off - best_back : best_key;
        if (j < 0) continue;
        p->of++;
        if (arg[i] == j) sum += (double)attn_row(t, b, h, i)[j];
    }
    p->weight = p->rows > 0 ? (float)(sum / p->rows) : 0.0f;
}

// "key i − 5 in 6 of 7 rows (0.93 on average)"; n > 1 patterns that are the same (same_pattern):
// their counts and weights as ranges, "key i − 1 in 11–17 of 20 rows (0.44–0.70 on average)"
static void pattern_text_n(const HeadPattern *p, int n, const View *v, AxisKind keys, char *out, size_t size)
{
    assert(n >= 1); // (a layer has a head)
    int rlo = p[0].rows, rhi = p[0].rows;
    float wlo = p[0].weight, whi = p[0].weight;
    for (int k = 1; k < n; k++) {
        rlo = p[k].rows < rlo ? p[k].rows : rlo, rhi = p[k].rows > rhi ? p[k].rows : rhi;
        wlo = p[k].weight < wlo ? p[k].weight : wlo, whi = p[k].weight > whi ? p[k].weight : whi;
    }
    char a[16], r[32], of[16], w[40], w2[16], lb[64];
    snprintf(r, sizeof r, rlo == rhi ? "%d" : "%d–%d", rlo, rhi), snprintf(of, sizeof of, "%d", p->of);
    snprintf(w, sizeof w, "%.2f", (double)wlo), snprintf(w2, sizeof w2, "%.2f", (double)whi);
    if (strcmp(w, w2) != 0) snprintf(w + strlen(w), sizeof w - strlen(w), "–%s", w2); // (one rounding: equal when printed equal)
    snprintf(a, sizeof a, "%d", p->back >= 0 ? p->back : p->key);
    const char *args[] = {a, r, of, w, p->back < 0 ? panel_axis_label(v, keys, p->key, lb, sizeof lb) : ""};
    i18n_fmt(out, size, v->lang, p->back > 0 ? "story.looks_back" : p->back == 0 ? "story.looks_self" : "story.looks_key", 5,
             args);
}

static void pattern_text(const HeadPattern *p, const View *v, AxisKind keys, char *out, size_t n)
{
    pattern_text_n(p, 1, v, keys, out, n);
}

static void put(char *buf, size_t n, size_t *len, const char *s)
{
    if (*len >= n) return;
    const size_t room = n - *len;
    int w = snprintf(buf + *len, room, "%s%s", *len ? " " : "", s);
    if (w <= 0) return;
    if ((size_t)w < room) {
        *len += (size_t)w;
        return;
    }
    *len = n - 1; // cut short: never inside a character (its lead byte goes when its sequence was cut)
    size_t k = *len;
    while (k > 0 && ((unsigned char)buf[k - 1] & 0xC0) == 0x80) k--;
    if (k > 0 && (unsigned char)buf[k - 1] >= 0xC0) {
        const unsigned char c = (unsigned char)buf[k - 1];
        const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (*len - (k - 1) < need) *len = k - 1;
    }
    buf[*len] = '\0';
}

// "Step 250 of 6000 (checkpoint 6 of 20), loss 2.10 (step 200: 2.31)."
static void step_text(const View *v, char *out, size_t n)
{
    const Lesson *ls = v->lesson;
    out[0] = '\0';
    if (!ls || ls->n_checkpoints < 1) return;
    const int k = ls->checkpoint >= 0 ? ls->checkpoint : ls->n_checkpoints - 1, K = ls->n_checkpoints;
    char st[16], last[16], kb[16], kn[16], loss[16], pst[16], pl[16];
    snprintf(st, sizeof st, "%d", ls->ckpt_step[k]), snprintf(last, sizeof last, "%d", ls->ckpt_step[K - 1]);
    snprintf(kb, sizeof kb, "%d", k + 1), snprintf(kn, sizeof kn, "%d", K);
    snprintf(loss, sizeof loss, "%.3f", (double)ls->ckpt_loss[k]); // (as the loss curve writes it)
    snprintf(pst, sizeof pst, "%d", k > 0 ? ls->ckpt_step[k - 1] : 0);
    snprintf(pl, sizeof pl, "%.3f", (double)ls->ckpt_loss[k > 0 ? k - 1 : 0]);
    const char *args[] = {st, last, kb, kn, loss, pst, pl};
    i18n_fmt(out, n, v->lang, k > 0 ? "story.step_prev" : "story.step", 7, args);
}

// The head (of layer `only`, or any: -1) whose rows moved most between prev and tr: the
// average over its rows of half the sum of |a − a_prev| (0: the same, 1: all moved).
// False when prev is not the same shape.
static bool most_changed(const Trace *tr, const Trace *prev, int b, int only, int *layer, int *head, float *moved)
{
    *moved = -1.0f;
    const int layers = tr->n_layers > 1 ? tr->n_layers : 1;
    for (int l = 0; l < layers; l++) {
        if (only >= 0 && l != only) continue;
        const int s = attn_stage(tr, l), sp = prev ? attn_stage(prev, l) : -1;
        if (s < 0 || sp < 0) continue;
        const Tensor *t = &tr->stages[s].t, *u = &prev->stages[sp].t;
        if (memcmp(t->shape, u->shape, sizeof t->shape) != 0 || t->rank != 4) return false;
        for (int h = 0; h < t->shape[1]; h++) {
            double m = 0.0;
            for (int i = 0; i < t->shape[2]; i++) {
                const float *a = attn_row(t, b, h, i), *c = attn_row(u, b, h, i);
                double d = 0.0;
                for (int j = 0; j < t->shape[3]; j++) d += fabs((double)a[j] - (double)c[j]);
                m += d / 2.0;
            }
            m /= t->shape[2];
            if (m > (double)*moved) *moved = (float)m, *layer = l, *head = h;
        }
    }
    return *moved >= 0.0f;
}

int story_changed_head(const Trace *tr, const View *v, const Trace *prev, int layer)
{
    int l, h;
    float moved;
    return prev && most_changed(tr, prev, v->batch < tr->batch ? v->batch : 0, layer, &l, &h, &moved) ? h : -1;
}

// "Since step 200, layer 1 head 1 changed most (…); its largest weight is now on key i − 5 …"
static void changed_text(const Trace *tr, const View *v, const Trace *prev, int only, bool brief, char *out, size_t n)
{
    out[0] = '\0';
    const Lesson *ls = v->lesson;
    const int b = v->batch < tr->batch ? v->batch : 0;
    int l = 0, h = 0;
    float moved;
    if (!ls || ls->n_checkpoints < 2 || !prev || !most_changed(tr, prev, b, only, &l, &h, &moved)) return;
    const int k = ls->checkpoint >= 0 ? ls->checkpoint : ls->n_checkpoints - 1;
    if (k < 1) return;
    HeadPattern p;
    story_head_pattern(tr, attn_stage(tr, l), b, h, &p);
    char pst[16], lb[16], hb[16], mv[16], pat[200];
    snprintf(pst, sizeof pst, "%d", ls->ckpt_step[k - 1]), snprintf(lb, sizeof lb, "%d", l), snprintf(hb, sizeof hb, "%d", h);
    snprintf(mv, sizeof mv, "%.2f", (double)moved);
    pattern_text(&p, v, panel_key_axis(tr, l), pat, sizeof pat);
    const char *args[] = {pst, lb, hb, mv, pat};
    i18n_fmt(out, n, v->lang, brief ? "story.changed_short" : "story.changed", 5, args); // (brief: the model view says what)
}

// A head's pattern holds in most of its rows (the model view's summary names it; the rest
// "no fixed pattern").
static bool pattern_fixed(const HeadPattern *p) { return 2 * p->rows > p->of; }

static bool same_pattern(const HeadPattern *a, const HeadPattern *b)
{
    return a->back == b->back && a->of == b->of && (a->back >= 0 || a->key == b->key);
}

// Layer l's heads with a fixed pattern, those that share one together: "Layer 0: all 4 heads
// look most at …", "Layer 0 heads 0, 2, 3 look most at …", "Layer 1 head 2 looks most at …";
// its other heads are said once at the end (summary_text; summary_none: a layer with none).
static void summary_layer(const Trace *tr, const View *v, int l, const HeadPattern *p, int heads, int *named,
                          bool *others, char *buf, size_t n, size_t *len)
{
    char line[600], pat[240], lb[16], hb[120];
    snprintf(lb, sizeof lb, "%d", l);
    bool told[LESSON_MAX_HEADS] = {false};
    for (int h = 0; h < heads; h++) {
        if (told[h]) continue;
        if (!pattern_fixed(&p[h])) {
            *others = true; // (said once, after every layer: "The other heads: no fixed pattern.")
            continue;
        }
        HeadPattern group[LESSON_MAX_HEADS];
        int k = 0;
        hb[0] = '\0';
        for (int g = h; g < heads; g++)
            if (!told[g] && pattern_fixed(&p[g]) && same_pattern(&p[g], &p[h])) {
                group[k++] = p[g], told[g] = true;
                snprintf(hb + strlen(hb), sizeof hb - strlen(hb), "%s%d", k > 1 ? ", " : "", g);
            }
        if ((*named)++ == STORY_MAX_HEADS) put(buf, n, len, "…");
        if (*named > STORY_MAX_HEADS) continue;
        pattern_text_n(group, k, v, panel_key_axis(tr, l), pat, sizeof pat);
        if (k == heads) snprintf(hb, sizeof hb, "%d", heads);
        const char *args[] = {lb, hb, pat};
        i18n_fmt(line, sizeof line, v->lang, k == heads ? "story.mv_all" : k > 1 ? "story.mv_group" : "story.head", 3, args);
        put(buf, n, len, line);
    }
}

// "Layers 1–3: no head has a fixed pattern (… at most 7 of 21 rows)." for layers from..to,
// whose heads have none; most: the head whose pattern holds in the largest share of its rows.
static void summary_none(const View *v, int from, int to, const HeadPattern *most, char *buf, size_t n, size_t *len)
{
    char line[400], a[16], b[16], r[16], of[16];
    snprintf(a, sizeof a, "%d", from), snprintf(b, sizeof b, "%d", to);
    snprintf(r, sizeof r, "%d", most->rows), snprintf(of, sizeof of, "%d", most->of);
    const char *args[] = {a, b, r, of};
    const char *one[] = {a, r, of};
    if (from == to) i18n_fmt(line, sizeof line, v->lang, "story.mv_none", 3, one);
    else i18n_fmt(line, sizeof line, v->lang, "story.mv_none_range", 4, args);
    put(buf, n, len, line);
}

// The model view's narration of a model of more than STORY_MAX_HEADS heads, more than 2 a
// layer (the subword model's 4 × 4 named one by one ran past its box): a layer whose heads
// share a pattern in one sentence, the heads with a pattern of their own named, consecutive
// layers without one together.
static void summary_text(const Trace *tr, const View *v, int b, char *buf, size_t n, size_t *len)
{
    const int layers = tr->n_layers > 1 ? tr->n_layers : 1;
    int named = 0, none_from = -1;
    bool others = false; // (heads without a pattern in a layer whose other heads have one)
    HeadPattern most = {0, 0, 0, 1, 0.0f};
    for (int l = 0; l <= layers; l++) {
        const int s = l < layers ? attn_stage(tr, l) : -1;
        HeadPattern p[LESSON_MAX_HEADS];
        const int heads = s >= 0 ? tr->stages[s].t.shape[1] : 0;
        bool any = false;
        for (int h = 0; h < heads; h++) {
            story_head_pattern(tr, s, b, h, &p[h]);
            any = any || pattern_fixed(&p[h]);
        }
        if (heads > 0 && !any) { // (said with the layers around it that have none either)
            if (none_from < 0) none_from = l, most = p[0];
            for (int h = 0; h < heads; h++)
                if ((long)p[h].rows * most.of > (long)most.rows * p[h].of) most = p[h];
            continue;
        }
        if (none_from >= 0) summary_none(v, none_from, l - 1, &most, buf, n, len), none_from = -1;
        if (heads > 0) summary_layer(tr, v, l, p, heads, &named, &others, buf, n, len);
    }
    if (others) {
        char line[200];
        i18n_fmt(line, sizeof line, v->lang, "story.mv_others", 0, NULL);
        put(buf, n, len, line);
    }
}

const char *story_model_view(const Trace *tr, const View *v, const Trace *prev, char *buf, size_t n)
{
    size_t len = 0;
    char line[600];
    if (n) buf[0] = '\0';
    if (v->lesson && v->lesson->n_checkpoints > 0) {
        step_text(v, line, sizeof line);
        put(buf, n, &len, line);
        changed_text(tr, v, prev, -1, true, line, sizeof line);
        if (line[0]) put(buf, n, &len, line);
    }
    const int layers = tr->n_layers > 1 ? tr->n_layers : 1, b = v->batch < tr->batch ? v->batch : 0;
    int total = 0, widest = 0; // (two heads a layer: a summary groups little, the heads are named)
    for (int l = 0; l < layers; l++) {
        const int heads = attn_stage(tr, l) >= 0 ? tr->stages[attn_stage(tr, l)].t.shape[1] : 0;
        total += heads, widest = heads > widest ? heads : widest;
    }
    if (total > STORY_MAX_HEADS && widest > 2) {
        summary_text(tr, v, b, buf, n, &len);
        return buf;
    }
    for (int l = 0; l < layers; l++) { // (a few heads: each named)
        const int s = attn_stage(tr, l);
        for (int h = 0; s >= 0 && h < tr->stages[s].t.shape[1]; h++) {
            HeadPattern p;
            story_head_pattern(tr, s, b, h, &p);
            char pat[200], lb[16], hb[16];
            pattern_text(&p, v, panel_key_axis(tr, l), pat, sizeof pat); // (a decoder's self-attention: the target's)
            snprintf(lb, sizeof lb, "%d", l), snprintf(hb, sizeof hb, "%d", h);
            const char *args[] = {lb, hb, pat};
            i18n_fmt(line, sizeof line, v->lang, "story.head", 3, args);
            put(buf, n, &len, line);
        }
    }
    return buf;
}

const char *story_checkpoint(const Trace *tr, const View *v, const Trace *prev, const char *generic, char *buf,
                             size_t n)
{
    size_t len = 0;
    char line[600];
    if (n) buf[0] = '\0';
    step_text(v, line, sizeof line);
    put(buf, n, &len, line);
    assert(v->stage >= 0 && v->stage < tr->n); // scene.c's narration of the view's stage
    const int layer = tr->stages[v->stage].layer;
    changed_text(tr, v, prev, layer, false, line, sizeof line);
    if (line[0]) put(buf, n, &len, line);
    put(buf, n, &len, generic);
    return buf;
}
