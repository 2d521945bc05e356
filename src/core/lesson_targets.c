// lesson_targets.c — a language model's "targets": the next token each position is trained
// to predict (the backward pass's cross-entropy, backward.h), read and written.
//
//   "targets": [[t, t, …], …]   one row per input row (B), one entry per token (L): a token id
//                               of the vocab, or -1 / null: the position is not counted
//
// Without "targets" the backward pass takes the input shifted by one (the last position and
// padding not counted): ls->targets stays NULL. Text typed instead of the file's input
// (--text, the text box) drops them: they were about the file's tokens.
#include "lesson.h"
#include "jsonpath.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

bool lesson_read_targets(JsonCtx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (!ls->vocab) return jsonpath_fail(c, "targets", "the next tokens of a language model; expected no \"targets\" in "
                                                      "a lesson without a \"vocab\"");
    if (ls->typed) return true; // (about the file's input, not the typed text)
    const int B = ls->batch, L = ls->len_q, V = ls->n_vocab;
    if (!cJSON_IsArray(j))
        return jsonpath_fail(c, "targets", "expected %d row%s (one per input row) of %d token ids, got %s", B,
                             B == 1 ? "" : "s", L, jsonpath_type(j));
    if (cJSON_GetArraySize(j) != B)
        return jsonpath_fail(c, "targets", "expected %d row%s (one per input row) of %d token ids, got %d row%s", B,
                             B == 1 ? "" : "s", L, cJSON_GetArraySize(j), cJSON_GetArraySize(j) == 1 ? "" : "s");
    int *t = malloc((size_t)B * L * sizeof *t), n = 0;
    if (!t) return jsonpath_fail(c, "targets", "out of memory");
    char p[JSONPATH_MAX], q[JSONPATH_MAX];
    for (int b = 0; b < B; b++) {
        const cJSON *row = cJSON_GetArrayItem(j, b);
        jsonpath_index(p, "targets", b);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != L) {
            free(t);
            return jsonpath_fail(c, p, "expected %d entries (one per token of input row %d), got %s with %d", L, b,
                                 jsonpath_type(row), cJSON_IsArray(row) ? cJSON_GetArraySize(row) : 0);
        }
        int l = 0;
        for (const cJSON *v = row->child; v; v = v->next, l++) {
            const double d = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
            if (!cJSON_IsNull(v) && !(cJSON_IsNumber(v) && d == (int)d && d >= -1 && d < V)) {
                jsonpath_index(q, p, l);
                free(t);
                if (cJSON_IsNumber(v))
                    return jsonpath_fail(c, q, "expected a token id from 0 to %d (the vocab's), or -1 or null (not "
                                         "counted), got %g", V - 1, d);
                return jsonpath_fail(c, q, "expected a token id from 0 to %d (the vocab's), or -1 or null (not "
                                     "counted), got %s", V - 1, jsonpath_type(v));
            }
            t[b * L + l] = cJSON_IsNull(v) ? -1 : (int)d;
            n += t[b * L + l] >= 0;
        }
    }
    if (n == 0) {
        free(t);
        return jsonpath_fail(c, "targets", "every entry is -1 or null; expected at least one token id to train on");
    }
    ls->targets = t;
    return true;
}

void lesson_write_targets(FILE *f, const Lesson *ls)
{
    if (!ls->targets) return;
    fputs(",\n  \"targets\": [", f);
    for (int b = 0; b < ls->batch; b++) {
        fputs(b ? ", [" : "[", f);
        for (int l = 0; l < ls->len_q; l++) fprintf(f, l ? ", %d" : "%d", ls->targets[b * ls->len_q + l]);
        fputs("]", f);
    }
    fputs("]", f);
}
