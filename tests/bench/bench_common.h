// bench_common.h — timing helpers shared by the benchmarks (header-only).
#ifndef ATTNVIZ_BENCH_COMMON_H
#define ATTNVIZ_BENCH_COMMON_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "assets.h"
#include "i18n.h"

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Sorts t and prints one table row: | name | median | p99 | target | ok/MISSED |.
// lower_is_better=0 for throughputs (the target is a minimum).
static inline void bench_row(const char *name, double *t, int n, double target, const char *unit,
                             int lower_is_better)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    double med = t[n / 2], p99 = t[(int)((n - 1) * 0.99)];
    int ok = lower_is_better ? med <= target : med >= target;
    printf("| %-48s | %9.2f %-4s | %9.2f %-4s | %s %g %s | %s |\n", name, med, unit, p99, unit,
           lower_is_better ? "<=" : ">=", target, unit, ok ? "ok" : "MISSED");
    fflush(stdout);
}

// A measured figure with no target.
static inline void bench_info(const char *name, double value, const char *unit)
{
    printf("| %-48s | %9.2f %-4s | %14s | %s | %s |\n", name, value, unit, "", "—", "info");
    fflush(stdout);
}

// The interface strings from assets/ (as the app finds them); false, said on stderr, when not.
static inline bool bench_strings(void)
{
    char assets[1100], err[600];
    if (assets_find(assets, sizeof assets, err, sizeof err) && i18n_load(assets, err, sizeof err)) return true;
    fprintf(stderr, "%s\n", err);
    return false;
}

// The largest file in lessons/ (the shipped lesson a teacher waits longest for), into out.
static inline bool bench_largest_lesson(char *out, size_t n)
{
    DIR *d = opendir("lessons");
    if (!d) return false;
    off_t best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        const size_t len = strlen(e->d_name);
        char path[512];
        struct stat st;
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        snprintf(path, sizeof path, "lessons/%s", e->d_name);
        if (stat(path, &st) == 0 && st.st_size > best) best = st.st_size, snprintf(out, n, "%s", path);
    }
    closedir(d);
    return best >= 0;
}

#endif
