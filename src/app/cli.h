// cli.h — the headless commands: --check, --dump, --print (no display needed).
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H

#include <stdio.h>

struct SessionEdits;

// Validates each lesson; prints "ok: PATH" or the one-line error. Returns 0 if all valid, 1 otherwise.
int cli_check(int n, char **paths, FILE *out, FILE *err);
// --set edits (ed, may be NULL) are applied first.
// Writes every stage as JSON: {"title": ..., "stages": [{"name", "shape", "data"}]}.
int cli_dump(const char *path, const struct SessionEdits *ed, FILE *out, FILE *err);
// Prints one stage like a PyTorch tensor print. Exit 1 for a bad lesson, 2 for an unknown stage.
int cli_print(const char *stage, const char *path, const struct SessionEdits *ed, FILE *out, FILE *err);

#endif
