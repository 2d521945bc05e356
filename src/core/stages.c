// stages.c — the rows of stages.h's tables.
#include "stages.h"

#include <stddef.h>
#include <string.h>

const StageInfo STAGE_INFO[STAGE_ID_COUNT] = {
#define STAGE_ROW(id, nm, k, st, sym, w, b) \
    [STAGE_##id] = {nm, STAGE_KIND_##k, STEP_##st, sym, WEIGHT_##w, WEIGHT_##b},
    STAGE_TABLE(STAGE_ROW)
#undef STAGE_ROW
};

const WeightInfo WEIGHT_INFO[WEIGHT_COUNT] = {
#define WEIGHT_ROW(id, json, field, sym, pl) [WEIGHT_##id] = {json, sym, pl},
    WEIGHT_TABLE(WEIGHT_ROW)
#undef WEIGHT_ROW
};

const char *const STEP_NAMES[STEP_COUNT] = {
#define STEP_ROW(id, nm) [STEP_##id] = nm,
    STEP_TABLE(STEP_ROW)
#undef STEP_ROW
};

int stage_id_of(const char *name)
{
    for (int i = 0; name && i < STAGE_ID_COUNT; i++)
        if (strcmp(STAGE_INFO[i].name, name) == 0) return i;
    return -1;
}

int weight_slot_of(const char *name)
{
    for (int i = 0; name && i < WEIGHT_COUNT; i++)
        if (strcmp(WEIGHT_INFO[i].name, name) == 0) return i;
    return -1;
}
