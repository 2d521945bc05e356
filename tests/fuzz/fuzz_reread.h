// fuzz_reread.h — a lesson written back (lesson_write, --save's writer) and read again,
// for the fuzz targets' round-trip oracles (fuzz_lesson.c, fuzz_lm.c).
#ifndef ATTNVIZ_FUZZ_REREAD_H
#define ATTNVIZ_FUZZ_REREAD_H

#include <stdio.h>
#include <stdlib.h>

#include "lesson.h"

// ls written and read back into back with the override o (NULL: none); traps when the
// writer fails or what it wrote does not read. False (back untouched) when memory runs out.
static bool fuzz_reread(const Lesson *ls, const LessonOverride *o, Lesson *back)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return false;
    int ok = lesson_write(ls, f);
    fclose(f);
    if (!ok) __builtin_trap();
    char err[LESSON_ERR_MAX];
    if (!lesson_parse_with(back, "fuzz.json", buf, len, o, err, sizeof err)) __builtin_trap();
    free(buf);
    return true;
}

#endif
