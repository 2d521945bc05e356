// file_support.h — small file helpers the in-process tests share.
#ifndef ATTNVIZ_FILE_SUPPORT_H
#define ATTNVIZ_FILE_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The whole file into *out (malloc'ed, NUL-terminated); its length, or -1.
static inline long slurp(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)(n < 0 ? 0 : n) + 1);
    if (n < 0 || fread(*out, 1, (size_t)n, f) != (size_t)n) n = -1;
    (*out)[n < 0 ? 0 : n] = '\0';
    fclose(f);
    return n;
}

// The attnviz beside a test's directory: build/tests/test_X → build/attnviz
// (build/san/tests/test_X → build/san/attnviz).
static inline void test_bin_path(char *bin, size_t n, const char *argv0)
{
    snprintf(bin, n, "%s", argv0);
    char *slash = strrchr(bin, '/');
    if (slash) *slash = 0;
    slash = strrchr(bin, '/');
    snprintf(slash ? slash + 1 : bin, n - (size_t)(slash ? slash + 1 - bin : 0), "attnviz");
}

#endif
