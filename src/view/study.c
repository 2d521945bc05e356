// study.c — the study mode's state (see study.h).
#include "study.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "labmenu.h" // lab_button_rect

void study_clear(Study *s)
{
    memset(s->a, 0, sizeof s->a);
    s->text[0] = '\0';
    s->note[0] = '\0';
    s->hint = false;
    s->last = -1;
}

void study_load(Study *s, const Trace *tr, const Lesson *ls, Lang lang, bool authored, int stage)
{
    // the answers by id, across the new list
    StudyAnswer old_a[STUDY_MAX];
    char old_id[STUDY_MAX][sizeof s->q[0].id];
    int old_n = s->n;
    for (int i = 0; i < old_n; i++) {
        old_a[i] = s->a[i];
        memcpy(old_id[i], s->q[i].id, sizeof old_id[i]);
    }
    int old_last = s->last;
    s->n = quiz_all(tr, ls, lang, STUDY_SEED, authored, s->q, STUDY_MAX);
    memset(s->a, 0, sizeof s->a);
    s->last = -1;
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < old_n; j++)
            if (strcmp(s->q[i].id, old_id[j]) == 0) {
                s->a[i] = old_a[j];
                if (j == old_last) s->last = i;
                break;
            }
    study_enter(s, stage);
}

int study_stage_questions(const Study *s, int stage, int *count)
{
    int first = -1, n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->q[i].stage == stage) {
            if (first < 0) first = i;
            n++;
        }
    if (count) *count = n;
    return first;
}

bool study_pending(const Study *s, int stage)
{
    for (int i = 0; i < s->n; i++)
        if (s->q[i].stage == stage && !s->a[i].answered) return true;
    return false;
}

int study_frontier(const Study *s, int n_stages)
{
    int f = n_stages - 1;
    for (int i = 0; i < s->n; i++)
        if (!s->a[i].answered && s->q[i].stage < f) f = s->q[i].stage;
    return f < 0 ? 0 : f;
}

void study_enter(Study *s, int stage)
{
    s->stage = stage;
    s->focus = -1;
    s->text[0] = '\0';
    s->note[0] = '\0';
    s->hint = false;
    int n, first = study_stage_questions(s, stage, &n);
    if (first < 0) return;
    // the question last answered here (its feedback is what the student was reading)
    s->focus = s->last >= first && s->last < first + n ? s->last : first;
    for (int i = first; i < first + n; i++)
        if (!s->a[i].answered) {
            s->focus = i;
            return;
        }
}

bool study_asking(const Study *s)
{
    return s->focus >= 0 && s->focus < s->n && !s->a[s->focus].answered;
}

// After an answer: its feedback stays in focus (study_next goes on to the next question).
static void answered(Study *s)
{
    s->last = s->focus;
    s->text[0] = '\0';
    s->note[0] = '\0';
    s->hint = false;
}

bool study_next(Study *s)
{
    if (study_asking(s)) return false;
    int n, first = study_stage_questions(s, s->stage, &n);
    if (first < 0) return false;
    int from = s->focus >= first && s->focus < first + n ? s->focus - first : n - 1;
    for (int k = 1; k <= n; k++) {
        int i = first + (from + k) % n;
        if (!s->a[i].answered) {
            s->focus = i;
            s->text[0] = '\0';
            s->note[0] = '\0';
            s->hint = false;
            return true;
        }
    }
    return false;
}

bool study_submit(Study *s, Lang lang)
{
    if (!study_asking(s)) return false;
    const QuizQuestion *q = &s->q[s->focus];
    float got[QUIZ_MAX_LIST];
    int n = 0;
    const char *t = s->text;
    while (*t == ' ') t++;
    if (!*t) {
        snprintf(s->note, sizeof s->note, "%s", i18n_get(lang, "study.empty"));
        return false;
    }
    if (!quiz_parse_answer(s->text, got, QUIZ_MAX_LIST, &n) || n < 1 || (!q->list && n != 1)) {
        snprintf(s->note, sizeof s->note, "%s",
                 i18n_get(lang, q->kind == QUIZ_SHAPE ? "study.bad_shape"
                                : q->list          ? "study.bad_list"
                                                   : "study.bad_number"));
        return false;
    }
    StudyAnswer *a = &s->a[s->focus];
    a->answered = true;
    a->right = quiz_check(q, got, n);
    a->gave_up = false;
    a->hinted = s->hint;
    snprintf(a->given, sizeof a->given, "%s", s->text);
    answered(s);
    return true;
}

void study_give_up(Study *s)
{
    if (!study_asking(s)) return;
    StudyAnswer *a = &s->a[s->focus];
    a->answered = true;
    a->right = false;
    a->gave_up = true;
    a->hinted = s->hint;
    a->given[0] = '\0';
    answered(s);
}

void study_focus_step(Study *s, int delta)
{
    if (study_asking(s)) return;
    int n, first = study_stage_questions(s, s->stage, &n);
    if (first < 0 || n < 2) return;
    int k = s->focus - first + delta;
    k = ((k % n) + n) % n;
    s->focus = first + k;
    s->text[0] = '\0';
    s->note[0] = '\0';
    s->hint = false;
}

bool study_pick_key(Study *s, int row, int col)
{
    if (!study_asking(s)) return false;
    const QuizQuestion *q = &s->q[s->focus];
    if (q->n_cell != 1 || q->cell[0] != row) return false;
    if (q->kind == QUIZ_ARGMAX || q->kind == QUIZ_RISES) {
        snprintf(s->text, sizeof s->text, "%d", col);
        return true;
    }
    if (q->kind != QUIZ_MASKED || !q->unordered) return false;
    // toggles col in the typed list, kept in ascending order
    float v[QUIZ_MAX_LIST + 1];
    int n = 0;
    if (s->text[0] && !quiz_parse_answer(s->text, v, QUIZ_MAX_LIST, &n)) n = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] != (float)col) v[k++] = v[i];
    if (k == n && n < QUIZ_MAX_LIST) v[k++] = (float)col;
    n = k;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            float t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    s->text[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(s->text);
        snprintf(s->text + len, sizeof s->text - len, i ? " %d" : "%d", (int)v[i]);
    }
    return true;
}

void study_score(const Study *s, int *right, int *answered)
{
    int r = 0, a = 0;
    for (int i = 0; i < s->n; i++)
        if (s->a[i].answered) {
            a++;
            r += s->a[i].right;
        }
    if (right) *right = r;
    if (answered) *answered = a;
}

void study_question_slice(const Study *s, int *batch, int *head)
{
    *batch = -1, *head = -1;
    if (s->focus < 0) return; // no question in focus
    assert(s->focus < s->n);
    *batch = s->q[s->focus].batch;
    *head = s->q[s->focus].head;
}

bool study_button_rect(const Layout *L, Rect *out)
{
    Rect lb;
    if (!lab_button_rect(L, &lb)) return false;
    int bw = (int)lrintf(108 * L->s), gap = (int)lrintf(10 * L->s);
    if (L->status.w < 3 * bw + 2 * gap + (int)lrintf(160 * L->s)) return false; // (the status keeps "? help")
    *out = (Rect){lb.x - gap - bw, lb.y, bw, lb.h};
    return true;
}
