// handout.h — attnviz --handout FILE.pdf LESSON: a printable handout (A4 or
// US letter): a title page with the contents, then one page a stage with the
// frame (the export's panels and legend without the window's chrome, through the
// vector backend: text stays text, across the page and as tall as it leaves room
// for), the formula, the narration and the shapes; or a worksheet. Written under a temporary name and
// renamed; SIGINT / SIGTERM leave no file.
#ifndef ATTNVIZ_HANDOUT_H
#define ATTNVIZ_HANDOUT_H

#include <stdbool.h>
#include <stddef.h>

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
    bool worksheet;            // --worksheet: a stage's study questions under its frame, the result's
                               // cells empty; the answers on the last page(s)
    bool head_set;             // --head given: every stage in head, else on its narration's head
} HandoutOptions;

struct Session;

// Writes the handout of ses (o->lesson_path and o->edits unused; the strings of
// i18n.h loaded) to o->path;
// stops when *stop becomes non-zero (a signal), leaving no file. False with one
// line in err; *pages = pages written.
bool handout_write(const HandoutOptions *o, const struct Session *ses, volatile const int *stop, int *pages, char *err,
                   size_t n);

// The command line: loads the lesson (with o->edits), writes the handout.
// The process exit code: 0, 1 (bad lesson, write error), 2 (bad batch/head),
// 130 / 143 when interrupted.
int handout_run(const HandoutOptions *o);

#endif
