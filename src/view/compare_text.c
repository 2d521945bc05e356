// compare_text.c — the summary line of a compare (see compare_text.h).
#include "compare_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "recipe.h"
#include "tip.h"

#define SUMMARY_DIFFER_SHOWN 8

// As a tooltip and the legend write a number (tip_number), so the header's max |Δ|, the
// summary's and the ends of Δ's colour scale read the same.
void compare_text_delta(float max_abs, char *buf, size_t n)
{
    if (!isfinite(max_abs))
        snprintf(buf, n, "∞");
    else
        tip_number(max_abs, buf, n);
}

static void append(char *buf, size_t n, const char *s)
{
    size_t used = strlen(buf);
    if (used + 1 < n) snprintf(buf + used, n - used, "%s", s);
}

// The stage's name: its id ("l1.masked_scores"), or (ids false: a frame's narration) its name in
// the language after the layer ("l1.masked scores", "l1.掩码后的分数").
static const char *name_of(const CompareStage *s, const Trace *a, const Trace *b, bool ids, Lang lang)
{
    const Trace *tr = s->a >= 0 ? a : b;
    const int i = s->a >= 0 ? s->a : s->b;
    if (ids) return tr->stages[i].name;
    static _Thread_local char buf[2][STAGE_NAME_MAX + 120];
    static _Thread_local int next;
    char *out = buf[next++ & 1];
    const char *name = recipe_stage_text(tr, i, "name", false, lang), *dot = strchr(tr->stages[i].name, '.');
    snprintf(out, sizeof buf[0], "%.*s%s", dot ? (int)(dot - tr->stages[i].name + 1) : 0, tr->stages[i].name, name);
    return out;
}

static bool identical(const CompareStage *s) { return s->a >= 0 && s->b >= 0 && s->n_diff == 0; }

// The identical stages as runs of consecutive ones: "input … l0.scores, l1.q_proj".
static void identical_runs(const Compare *c, const Trace *a, const Trace *b, bool ids, Lang lang, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        if (!identical(&c->st[i])) continue;
        int j = i;
        while (j + 1 < c->n && identical(&c->st[j + 1])) j++;
        char run[2 * (STAGE_NAME_MAX + 120) + 8], item[sizeof run + 16];
        snprintf(run, sizeof run, "%s%s%s", name_of(&c->st[i], a, b, ids, lang), j > i ? " … " : "",
                 j > i ? name_of(&c->st[j], a, b, ids, lang) : "");
        const char *args[1] = {run};
        i18n_fmt(item, sizeof item, lang, buf[0] ? "compare.run_next" : "compare.run", 1, args);
        append(buf, n, item);
        i = j;
    }
}

void compare_text_summary(const Compare *c, const Trace *a, const Trace *b, const char *spec, bool ids, Lang lang,
                          char *buf, size_t n)
{
    char same[1200], differ[1600] = "", count[2][16], more[120];
    identical_runs(c, a, b, ids, lang, same, sizeof same);
    int shown = 0;
    for (int i = 0; i < c->n; i++) {
        const CompareStage *s = &c->st[i];
        if (s->a < 0 || s->b < 0 || !s->n_diff) continue;
        if (shown++ == SUMMARY_DIFFER_SHOWN) break;
        char v[32], item[STAGE_NAME_MAX + 200];
        compare_text_delta(s->max_abs, v, sizeof v);
        const char *args[2] = {name_of(s, a, b, ids, lang), v};
        i18n_fmt(item, sizeof item, lang, differ[0] ? "compare.item_next" : "compare.item", 2, args);
        append(differ, sizeof differ, item);
    }
    if (c->n_differ > SUMMARY_DIFFER_SHOWN) {
        snprintf(count[0], sizeof count[0], "%d", c->n_differ - SUMMARY_DIFFER_SHOWN);
        const char *args[1] = {count[0]};
        i18n_fmt(more, sizeof more, lang, "compare.more", 1, args);
        append(differ, sizeof differ, more);
    }
    snprintf(count[0], sizeof count[0], "%d", c->n_identical);
    snprintf(count[1], sizeof count[1], "%d", c->n_differ);
    const char *args[5] = {spec, count[0], same, count[1], differ};
    const char *key = c->n_differ == 0 ? "compare.summary_same" : c->n_identical == 0 ? "compare.summary_none"
                                                                                       : "compare.summary";
    i18n_fmt(buf, n, lang, key, 5, args);
    if (c->n_only) {
        char only[16], tail[200];
        snprintf(only, sizeof only, "%d", c->n_only);
        const char *oa[1] = {only};
        i18n_fmt(tail, sizeof tail, lang, "compare.only", 1, oa);
        append(buf, n, tail);
    }
}

void compare_text_stage(const CompareStage *s, Lang lang, char *buf, size_t n)
{
    if (s->a < 0 || s->b < 0) {
        snprintf(buf, n, "%s", i18n_get(lang, s->a < 0 ? "compare.only_b" : "compare.only_a"));
        return;
    }
    if (!s->n_diff) {
        snprintf(buf, n, "%s", i18n_get(lang, "compare.identical"));
        return;
    }
    char k[24], all[24], v[32];
    snprintf(k, sizeof k, "%zu", s->n_diff);
    snprintf(all, sizeof all, "%zu", s->delta.size);
    compare_text_delta(s->max_abs, v, sizeof v);
    const char *args[3] = {k, all, v};
    i18n_fmt(buf, n, lang, "compare.differs", 3, args);
}
