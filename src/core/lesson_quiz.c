// lesson_quiz.c — the author's questions of a lesson ("quiz"): read with the lesson and
// checked against its trace (lesson.h: lesson_read_quiz, lesson_check_quiz).
#include "lesson.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"
#include "trace.h"

static const char *const quiz_keys_allowed[] = {"id", "stage", "question", "answer", "tolerance", "unordered",
                                                "explanation", "batch", "head", "cell", NULL};

static bool plain_name(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-')) return false;
    return true;
}

static bool parse_one_quiz(JsonCtx *c, const cJSON *j, const char *p, int index, LessonQuiz *q)
{
    char pk[JSONPATH_MAX];
    if (!cJSON_IsObject(j)) return jsonpath_fail(c, p, "expected an object {\"stage\", \"question\", \"answer\", ...}, got %s", jsonpath_type(j));
    if (!jsonpath_check_keys(c, j, p, quiz_keys_allowed)) return false;
    q->batch = q->head = -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    jsonpath_key(pk, p, "id");
    if (id && (!cJSON_IsString(id) || strlen(id->valuestring) > 48 || !plain_name(id->valuestring)))
        return jsonpath_fail(c, pk, "expected up to 48 of a-z, 0-9, _ and -");
    char idbuf[32];
    if (id) { // the generated questions' ids are STAGE-KIND…: answers are kept by id, so never the same
        static const char *const kinds[] = {"-shape", "-value", "-argmax", "-masked", "-sum", "-source"};
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            const char *at = strstr(id->valuestring, kinds[k]);
            size_t after = at ? strlen(kinds[k]) : 0;
            if (at && (at[after] == '\0' || at[after] == '-'))
                return jsonpath_fail(c, pk, "\"%s\" has the form of a generated question's id (STAGE%s…); expected another name",
                            id->valuestring, kinds[k]);
        }
    }
    snprintf(idbuf, sizeof idbuf, "authored-%d", index + 1);
    q->id = strdup(id ? id->valuestring : idbuf);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stage");
    jsonpath_key(pk, p, "stage");
    if (!st) return jsonpath_fail(c, pk, "missing; expected the name of the stage that asks it, e.g. \"attn\"");
    // (a layer's stage in a model of several: "l1.attn"; lesson_check_quiz finds it in the trace)
    const char *sn = cJSON_IsString(st) ? st->valuestring : "";
    int layer, used = 0;
    if (sscanf(sn, "l%d.%n", &layer, &used) == 1 && used > 0 && layer >= 0 && layer < LESSON_MAX_LAYERS) sn += used;
    if (!cJSON_IsString(st) || strlen(st->valuestring) >= 24 || !plain_name(sn))
        return jsonpath_fail(c, pk, "expected a stage name such as \"attn\" or \"l1.attn\", got %s", jsonpath_type(st));
    q->stage = strdup(st->valuestring);
    const cJSON *qt = cJSON_GetObjectItemCaseSensitive(j, "question");
    jsonpath_key(pk, p, "question");
    if (!qt) return jsonpath_fail(c, pk, "missing; expected a string or {\"en\": ..., \"zh\": ...}");
    if (!lesson_read_text(c, qt, pk, true, q->question)) return false;
    for (int l = 0; l < LANG_COUNT; l++) // what the study box and --quiz hold (quiz.h)
        if (q->question[l] && (!q->question[l][0] || strlen(q->question[l]) > LESSON_QUIZ_MAX_QUESTION))
            return jsonpath_fail(c, pk, "%s text %s; expected 1 to %d bytes", l == LANG_EN ? "the English" : "the Chinese",
                        q->question[l][0] ? "too long" : "empty", LESSON_QUIZ_MAX_QUESTION);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "explanation");
    jsonpath_key(pk, p, "explanation");
    if (ex && !lesson_read_text(c, ex, pk, true, q->explanation)) return false;
    for (int l = 0; l < LANG_COUNT; l++)
        if (q->explanation[l] && strlen(q->explanation[l]) > LESSON_QUIZ_MAX_EXPLANATION)
            return jsonpath_fail(c, pk, "%s text too long; expected at most %d bytes", l == LANG_EN ? "the English" : "the Chinese",
                        LESSON_QUIZ_MAX_EXPLANATION);
    const cJSON *an = cJSON_GetObjectItemCaseSensitive(j, "answer");
    jsonpath_key(pk, p, "answer");
    if (!an) return jsonpath_fail(c, pk, "missing; expected a number or a list of numbers");
    if (cJSON_IsArray(an)) {
        int n = cJSON_GetArraySize(an);
        if (n < 1 || n > LESSON_QUIZ_MAX_ANSWER)
            return jsonpath_fail(c, pk, "expected 1 to %d numbers, got %d", LESSON_QUIZ_MAX_ANSWER, n);
        q->list = true;
        int i = 0;
        for (const cJSON *e = an->child; e; e = e->next, i++) {
            char pi[JSONPATH_MAX];
            jsonpath_index(pi, pk, i);
            if (!jsonpath_number(c, e, pi, &q->answer[i])) return false;
        }
        q->n_answer = n;
    } else {
        if (!jsonpath_number(c, an, pk, &q->answer[0])) return false;
        q->n_answer = 1;
    }
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    jsonpath_key(pk, p, "tolerance");
    if (tol) {
        if (!jsonpath_number(c, tol, pk, &q->tolerance)) return false;
        if (q->tolerance < 0) return jsonpath_fail(c, pk, "expected a number >= 0");
        q->has_tolerance = true;
    } else {
        q->tolerance = q->list ? 0.0f : 0.005f;
    }
    if (!jsonpath_bool(c, j, p, "unordered", &q->unordered, false)) return false;
    jsonpath_key(pk, p, "unordered");
    if (q->unordered && !q->list) return jsonpath_fail(c, pk, "only a list answer can be unordered");
    if (!jsonpath_int(c, j, p, "batch", &q->batch, 0, LESSON_MAX_BATCH - 1, false, -1)) return false;
    if (!jsonpath_int(c, j, p, "head", &q->head, 0, LESSON_MAX_HEADS - 1, false, -1)) return false;
    const cJSON *cell = cJSON_GetObjectItemCaseSensitive(j, "cell");
    jsonpath_key(pk, p, "cell");
    if (cell) {
        int n = cJSON_IsArray(cell) ? cJSON_GetArraySize(cell) : -1;
        if (n < 1 || n > 2) return jsonpath_fail(c, pk, "expected [row] or [row, column]");
        int i = 0;
        for (const cJSON *e = cell->child; e; e = e->next, i++) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
                e->valuedouble > LESSON_MAX_ELEMS)
                return jsonpath_fail(c, pk, "expected [row] or [row, column] of whole numbers >= 0");
            q->cell[i] = (int)e->valuedouble;
        }
        q->n_cell = n;
    }
    if (!q->id || !q->stage) return jsonpath_fail(c, p, "out of memory");
    return true;
}

bool lesson_read_quiz(JsonCtx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (!cJSON_IsArray(j)) return jsonpath_fail(c, "quiz", "expected a list of questions, got %s", jsonpath_type(j));
    int n = cJSON_GetArraySize(j);
    if (n > LESSON_MAX_QUIZ) return jsonpath_fail(c, "quiz", "%d questions; expected at most %d", n, LESSON_MAX_QUIZ);
    if (n == 0) return true;
    ls->quiz = calloc((size_t)n, sizeof *ls->quiz);
    if (!ls->quiz) return jsonpath_fail(c, "quiz", "out of memory");
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char p[JSONPATH_MAX];
        jsonpath_index(p, "quiz", i);
        ls->n_quiz = i + 1;
        if (!parse_one_quiz(c, e, p, i, &ls->quiz[i])) return false;
        for (int k = 0; k < i; k++)
            if (strcmp(ls->quiz[k].id, ls->quiz[i].id) == 0) {
                char pk[JSONPATH_MAX], pi[JSONPATH_MAX];
                if (!cJSON_GetObjectItemCaseSensitive(e, "id")) {
                    // quiz[i] has no id: its name authored-(i+1) was written as quiz[k]'s id
                    jsonpath_index(pi, "quiz", k);
                    jsonpath_key(pk, pi, "id");
                    return jsonpath_fail(c, pk, "\"%s\" is the name of quiz[%d], which has no id of its own; expected "
                                "another id", ls->quiz[i].id, i);
                }
                jsonpath_key(pk, p, "id");
                return jsonpath_fail(c, pk, "\"%s\" is used twice; expected a different id for each question", ls->quiz[i].id);
            }
    }
    return true;
}

bool lesson_check_quiz(const Lesson *ls, const Trace *tr, char *err, size_t err_len)
{
    JsonCtx cc = {0};
    JsonCtx *c = &cc;
    c->file = ls->path ? ls->path : "lesson", c->err = err, c->err_len = err_len;
    for (int i = 0; i < ls->n_quiz; i++) {
        const LessonQuiz *q = &ls->quiz[i];
        char p[JSONPATH_MAX], pk[JSONPATH_MAX];
        jsonpath_index(p, "quiz", i);
        int s = trace_find(tr, q->stage);
        jsonpath_key(pk, p, "stage");
        if (s < 0) {
            char list[400] = "";
            size_t used = 0;
            for (int k = 0; k < tr->n && used < sizeof list; k++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", tr->stages[k].name);
            return jsonpath_fail(c, pk, "\"%s\" is not a stage of this lesson; expected one of: %s", q->stage, list);
        }
        const Tensor *t = &tr->stages[s].t;
        int rows = t->rank >= 2 ? t->shape[t->rank - 2] : 1, cols = t->shape[t->rank - 1];
        jsonpath_key(pk, p, "batch");
        if (q->batch >= 0 && q->batch >= t->shape[0])
            return jsonpath_fail(c, pk, "%d is out of range; expected 0 to %d", q->batch, t->shape[0] - 1);
        jsonpath_key(pk, p, "head");
        if (q->head >= 0 && (t->rank != 4 || q->head >= t->shape[1]))
            return t->rank != 4 ? jsonpath_fail(c, pk, "stage %s has no heads", q->stage)
                                : jsonpath_fail(c, pk, "%d is out of range; expected 0 to %d", q->head, t->shape[1] - 1);
        jsonpath_key(pk, p, "cell");
        if (q->n_cell >= 1 && q->cell[0] >= rows)
            return jsonpath_fail(c, pk, "row %d is out of range; expected 0 to %d", q->cell[0], rows - 1);
        if (q->n_cell == 2 && q->cell[1] >= cols)
            return jsonpath_fail(c, pk, "column %d is out of range; expected 0 to %d", q->cell[1], cols - 1);
    }
    return true;
}
