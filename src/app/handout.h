// handout.h — attnviz --handout FILE.pdf LESSON: a printable handout (A4 or
// US letter): a title page with the contents, then one page a stage with the
// frame (the export's, through the vector backend: text stays text), the
// formula, the narration and the shapes. Written under a temporary name and
// renamed; SIGINT / SIGTERM leave no file.
#ifndef ATTNVIZ_HANDOUT_H
#define ATTNVIZ_HANDOUT_H

#include "lesson.h"

struct SessionEdits;

typedef enum Paper { PAPER_A4, PAPER_LETTER } Paper;

typedef struct HandoutOptions {
    const char *path;          // FILE.pdf
    const char *lesson_path;
    const char *font_path;     // --font or NULL
    Lang lang;
    Paper paper;
    int batch, head;
    const struct SessionEdits *edits;
} HandoutOptions;

// The process exit code: 0, 1 (bad lesson, write error), 2 (bad batch/head),
// 130 / 143 when interrupted.
int handout_run(const HandoutOptions *o);

#endif
