// lesson_narration.c — a lesson's texts by stage: the title, the narration ("steps") and
// the teacher's notes ("notes") of a stage, a step or a layer's stage (lesson.h).
#include "lesson.h"

#include <string.h>

#include "trace.h"

const char *lesson_title(const Lesson *ls, Lang lang)
{
    if ((unsigned)lang < LANG_COUNT && ls->title[lang]) return ls->title[lang];
    return ls->title[LANG_EN] ? ls->title[LANG_EN] : "";
}

static int keyed_index(int n, char *const *keys, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0) return i;
    return -1;
}

static const char *text_at(char **const text[LANG_COUNT], int i, Lang lang)
{
    if (i < 0) return NULL;
    if ((unsigned)lang < LANG_COUNT && text[lang][i]) return text[lang][i];
    return text[LANG_EN][i];
}

static const char *keyed_text(int n, char *const *keys, char **const text[LANG_COUNT], const char *key,
                              Lang lang)
{
    return text_at(text, keyed_index(n, keys, key), lang);
}

const char *lesson_step_text(const Lesson *ls, const char *key, Lang lang)
{
    return keyed_text(ls->n_steps, ls->step_keys, ls->step_text, key, lang);
}

// The text for stage s of tr: its name ("l1.attn"), its layer's step ("l1.softmax"),
// the table's name ("attn": every layer) and the step ("softmax"), the first there is
// (its index in keys; -1: none).
static int stage_keyed(int n, char *const *keys, const Trace *tr, int s)
{
    if (s < 0 || s >= tr->n) return -1;
    const Stage *st = &tr->stages[s];
    char k[STAGE_NAME_MAX + 16];
    int i = keyed_index(n, keys, st->name);
    if (i < 0 && tr->n_layers > 1 && st->layer >= 0) {
        snprintf(k, sizeof k, "l%d.%s", st->layer, step_name(st->step));
        i = keyed_index(n, keys, k);
    }
    if (i < 0) i = keyed_index(n, keys, STAGE_INFO[st->id].name);
    if (i < 0) i = keyed_index(n, keys, step_name(st->step));
    return i;
}

const char *lesson_stage_text(const Lesson *ls, const Trace *tr, int s, Lang lang)
{
    return text_at(ls->step_text, stage_keyed(ls->n_steps, ls->step_keys, tr, s), lang);
}

int lesson_stage_head(const Lesson *ls, const Trace *tr, int s)
{
    int i = stage_keyed(ls->n_steps, ls->step_keys, tr, s);
    return i >= 0 && ls->step_head ? ls->step_head[i] : -1;
}

const char *lesson_stage_note(const Lesson *ls, const Trace *tr, int s, Lang lang)
{
    return text_at(ls->note_text, stage_keyed(ls->n_notes, ls->note_keys, tr, s), lang);
}

const char *lesson_note_text(const Lesson *ls, const char *key, Lang lang)
{
    return keyed_text(ls->n_notes, ls->note_keys, ls->note_text, key, lang);
}
