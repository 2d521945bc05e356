// lesson_task.c — a language model's "task": how its training script draws its data
// (task.h), read and written.
//
//   "task": {"kind": "induction" | "reversal" | "corpus", "length": L, "batch": B, "seed": S}
//
// length: the tokens a training row reads (1 … the model's context), batch: the rows a step
// (1 … 512), seed: the data generator's (a whole number, 0 … 2⁵³). A lesson without it cannot
// be trained (--train, the training mode say so in one line).
#include "lesson.h"
#include "jsonpath.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

bool lesson_read_task(JsonCtx *c, const cJSON *j, Lesson *ls)
{
    if (!j) return true;
    if (!ls->vocab) return jsonpath_fail(c, "task", "a language model's training data; expected no \"task\" in a "
                                                   "lesson without a \"vocab\"");
    static const char *const keys[] = {"kind", "length", "batch", "seed", NULL};
    if (!cJSON_IsObject(j))
        return jsonpath_fail(c, "task", "expected {\"kind\": …, \"length\": L, \"batch\": B, \"seed\": S}, got %s",
                             jsonpath_type(j));
    if (!jsonpath_check_keys(c, j, "task", keys)) return false;
    TaskSpec t = {TASK_NONE, 0, 0, 0};
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    for (int k = 1; k < TASK_KIND_COUNT && cJSON_IsString(kind); k++)
        if (!strcmp(kind->valuestring, TASK_KIND_NAMES[k])) t.kind = (TaskKind)k;
    if (t.kind == TASK_NONE)
        return jsonpath_fail(c, "task.kind", "expected \"induction\", \"reversal\" or \"corpus\", got %s%s%s",
                             cJSON_IsString(kind) ? "\"" : "", cJSON_IsString(kind) ? kind->valuestring : jsonpath_type(kind),
                             cJSON_IsString(kind) ? "\"" : "");
    const int ctx = ls->cfg.positions == POS_LEARNED ? ls->cfg.max_positions : LESSON_MAX_LEN;
    if (!jsonpath_int(c, j, "task", "length", &t.length, 1, ctx < TASK_MAX_LENGTH ? ctx : TASK_MAX_LENGTH, true, 0) ||
        !jsonpath_int(c, j, "task", "batch", &t.batch, 1, TASK_MAX_BATCH, true, 0))
        return false;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(j, "seed");
    const double s = cJSON_IsNumber(seed) ? seed->valuedouble : -1.0;
    if (!(s >= 0.0 && s <= 9007199254740992.0 && s == floor(s)))
        return jsonpath_fail(c, "task.seed", "expected a whole number from 0 to 2^53, got %s", jsonpath_type(seed));
    t.seed = (uint64_t)s;
    Lesson probe = *ls; // the sizes of the forward pass a training batch runs
    probe.batch = t.batch, probe.len_q = probe.len_k = t.length;
    if (!lesson_check_size(&probe, c->file, "task", c->err, c->err_len)) return false;
    ls->task = t;
    return true;
}

void lesson_write_task(FILE *f, const Lesson *ls)
{
    const TaskSpec *t = &ls->task;
    if (t->kind == TASK_NONE) return;
    fprintf(f, ",\n  \"task\": {\"kind\": \"%s\", \"length\": %d, \"batch\": %d, \"seed\": %llu}",
            TASK_KIND_NAMES[t->kind], t->length, t->batch, (unsigned long long)t->seed);
}
