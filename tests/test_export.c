// test_export.c — the PNG export in-process: with encoder threads, and with none
// (the browser build cannot start threads; each PNG is then written by the
// drawing thread) the same files with the same bytes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/export.h"
#include "file_support.h"

#define L "lessons/arange-2x4x4.json"

static void export_with(const char *dir, int threads)
{
    ExportOptions o;
    export_options_init(&o);
    o.dir = dir, o.lesson_path = L, o.width = 640, o.height = 360, o.stage = "attn", o.threads = threads;
    o.quiet = true;
    assert_int_equal(export_run(&o), 0);
}

static void test_no_threads_same_files(void **state)
{
    (void)state;
    char base[] = "/tmp/attnviz-export-XXXXXX", a[600], b[600], pa[1024], pb[1024];
    assert_non_null(mkdtemp(base));
    snprintf(a, sizeof a, "%s/threads", base);
    snprintf(b, sizeof b, "%s/none", base);
    export_with(a, 2);
    export_with(b, 0);
    char *x = NULL, *y = NULL;
    snprintf(pa, sizeof pa, "%s/frames.json", b);
    long nj = slurp(pa, &x);
    assert_true(nj > 0);
    assert_non_null(strstr(x, "\"complete\": true"));
    free(x), x = NULL;
    // the one frame: named by its index in the plan and the stage
    const char *name = NULL;
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls %s | grep -- '-attn.png$'", a);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, p));
    pclose(p);
    line[strcspn(line, "\n")] = '\0';
    name = line;
    snprintf(pa, sizeof pa, "%s/%s", a, name);
    snprintf(pb, sizeof pb, "%s/%s", b, name);
    long na = slurp(pa, &x), nb = slurp(pb, &y);
    assert_true(na > 1000);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, (size_t)na);
    free(x), free(y);
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_threads_same_files)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
