// cmpmenu.c — the compare menu's list of B's (see cmpmenu.h).
#include "cmpmenu.h"

#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "i18n.h"

// The conventions' switches (lessons/README.md, "Conventions"); a lesson lists those that change
// its numbers (its own value, or a switch its model does not use, changes none).
static const char *const CONVENTIONS[] = {
    "set:model.window_convention=flash", "set:model.window_convention=inclusive", "set:model.masked_rows=zero",
    "set:model.masked_rows=softmax",     "set:model.mask_fill=-inf",              "set:model.mask_fill=-1e9",
    "set:model.mask_fill=finfo_min",     "set:model.flash_accumulator=fa1",       "set:model.flash_accumulator=fa2",
    "set:model.streaming_positions=cache", "set:model.streaming_positions=text", "set:model.alibi_form=key",
    "set:model.alibi_form=relative",
};

// One item, its title from the language files' key with args (both languages).
static void add(Picker *p, const char *spec, const char *key, int n_args, const char *const *args)
{
    char t[LANG_COUNT][400];
    for (int l = 0; l < LANG_COUNT; l++) i18n_fmt(t[l], sizeof t[l], (Lang)l, key, n_args, args);
    picker_add(p, spec, spec, t[LANG_EN], t[LANG_ZH]);
}

// How many stages B = a changed by spec differs in; 0 when it cannot be made or changes nothing.
static int stages_changed(const Session *a, const char *spec)
{
    char err[LESSON_ERR_MAX + 400];
    CompareSpec sp;
    Session *b = NULL;
    Compare c = {0};
    int n = 0;
    if (compare_parse_spec(spec, &sp, err, sizeof err) && (b = compare_open_b(a, NULL, &sp, err, sizeof err)) &&
        compare_traces(&a->trace, &b->trace, &c, err, sizeof err))
        n = c.n_differ;
    compare_free(&c);
    session_destroy(b);
    return n;
}

static void add_conventions(Picker *p, const Session *a)
{
    for (size_t i = 0; i < sizeof CONVENTIONS / sizeof CONVENTIONS[0]; i++) {
        const int n = stages_changed(a, CONVENTIONS[i]);
        if (n <= 0) continue;
        char count[16], what[80];
        snprintf(count, sizeof count, "%d", n);
        snprintf(what, sizeof what, "%s", CONVENTIONS[i] + strlen("set:"));
        const char *args[] = {what, count};
        add(p, CONVENTIONS[i], "cmpmenu.convention", 2, args);
    }
}

static void add_heads(Picker *p, const Trace *tr, const Lesson *ls)
{
    if (ls->cfg.flash_block_k > 0 || ls->cfg.decode) return; // (experiment_can_ablate)
    const int L = tr->n_layers > 1 ? tr->n_layers : 1;
    for (int kind = 0; kind < 2; kind++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < tr->n_heads; h++) {
                char spec[48], layer[12], head[12];
                if (L > 1)
                    snprintf(spec, sizeof spec, "%s:l%d.h%d", kind ? "ablate-mean" : "ablate", l, h);
                else
                    snprintf(spec, sizeof spec, "%s:h%d", kind ? "ablate-mean" : "ablate", h);
                snprintf(layer, sizeof layer, "%d", l), snprintf(head, sizeof head, "%d", h);
                const char *args[] = {layer, head};
                add(p, spec, kind ? "cmpmenu.ablate_mean" : "cmpmenu.ablate", 2, args);
            }
}

// Each layer's attention (every head of it) zeroed: a model of several layers.
static void add_layers(Picker *p, const Trace *tr, const Lesson *ls)
{
    if (ls->cfg.flash_block_k > 0 || ls->cfg.decode || tr->n_layers <= 1) return;
    for (int l = 0; l < tr->n_layers; l++) {
        char spec[32], layer[12];
        snprintf(spec, sizeof spec, "ablate:l%d", l);
        snprintf(layer, sizeof layer, "%d", l);
        const char *args[] = {layer};
        add(p, spec, "cmpmenu.ablate_layer", 1, args);
    }
}

static void add_checkpoints(Picker *p, const Session *a)
{
    const Lesson *ls = &a->lesson;
    for (int k = 0; k < ls->n_checkpoints; k++) {
        char spec[32], n[12], step[16], loss[32];
        snprintf(spec, sizeof spec, "checkpoint:%d", k);
        if (k == ls->checkpoint || stages_changed(a, spec) <= 0) continue; // (the weights on screen)
        snprintf(n, sizeof n, "%d", k), snprintf(step, sizeof step, "%d", ls->ckpt_step ? ls->ckpt_step[k] : 0);
        snprintf(loss, sizeof loss, "%.3f", ls->ckpt_loss ? (double)ls->ckpt_loss[k] : 0.0);
        const char *args[] = {n, step, loss};
        add(p, spec, "cmpmenu.checkpoint", 3, args);
    }
}

// Whether the lessons would run with one shape each stage (compare_traces checks each stage when
// B is made: this keeps the others out of the list).
static bool same_shapes(const Lesson *a, const Lesson *b)
{
    return a->batch == b->batch && a->len_q == b->len_q && a->len_k == b->len_k && a->cfg.d_model == b->cfg.d_model &&
           a->cfg.n_heads == b->cfg.n_heads && a->cfg.d_k == b->cfg.d_k && a->cfg.d_v == b->cfg.d_v &&
           a->cfg.n_layers == b->cfg.n_layers && a->cfg.vocab_size == b->cfg.vocab_size;
}

static void add_lessons(Picker *p, const Session *a, const char *dir)
{
    Picker scan;
    picker_init(&scan);
    const char *dirs[] = {dir};
    picker_scan(&scan, dirs, 1, a->path);
    for (int i = 0; i < scan.n; i++) {
        const PickerItem *it = &scan.items[i];
        if (it->error || i == scan.current) continue;
        Lesson ls;
        char err[LESSON_ERR_MAX];
        if (!lesson_load(&ls, it->path, err, sizeof err)) continue;
        if (same_shapes(&a->lesson, &ls)) {
            char spec[1200];
            snprintf(spec, sizeof spec, "lesson:%s", it->shown ? it->shown : it->path); // (as the picker shows it)
            char t[LANG_COUNT][400];
            for (int l = 0; l < LANG_COUNT; l++) {
                const char *args[] = {picker_title(it, (Lang)l)};
                i18n_fmt(t[l], sizeof t[l], (Lang)l, "cmpmenu.lesson", 1, args);
            }
            picker_add(p, spec, spec, t[LANG_EN], t[LANG_ZH]);
        }
        lesson_free(&ls);
    }
    picker_free(&scan);
}

// The experiments drawn (expview.h) of a language model: "experiment:NAME" (not a B: the window
// opens the experiment's view); patching when a text typed with I is on screen (the corrupted
// run; the clean one: the lesson's own text).
static void add_experiments(Picker *p, const Session *a)
{
    const Lesson *ls = &a->lesson;
    if (ls->cfg.vocab_size <= 0 || ls->cfg.flash_block_k > 0 || ls->cfg.decode) return;
    add(p, "experiment:ablation", "cmpmenu.exp_ablation", 0, NULL);
    add(p, "experiment:logit-lens", "cmpmenu.exp_lens", 0, NULL);
    add(p, "experiment:logit-attribution", "cmpmenu.exp_dla", 0, NULL);
    if (ls->typed) add(p, "experiment:patching", "cmpmenu.exp_patching", 0, NULL);
}

int cmpmenu_fill(Picker *p, const Session *a, const char *lessons_dir)
{
    const bool open = p->open;
    picker_free(p);
    p->open = open;
    p->title_key = "cmpmenu.title", p->hint_key = "cmpmenu.hint";
    if (a->lesson.vocab) add(p, CMPMENU_TEXT, "cmpmenu.text", 0, NULL);
    add_conventions(p, a);
    add_heads(p, &a->trace, &a->lesson);
    add_layers(p, &a->trace, &a->lesson);
    add_checkpoints(p, a);
    if (lessons_dir) add_lessons(p, a, lessons_dir);
    add_experiments(p, a);
    p->sel = p->n > 0 ? 0 : -1, p->top = 0;
    return p->n;
}
