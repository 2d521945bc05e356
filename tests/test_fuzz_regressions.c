// Replays every input the fuzzer ever crashed on (tests/fuzz/regressions/)
// and the whole bad-lesson corpus through the fuzz target's own oracle:
// parse -> validate -> forward pass, one-line errors. Built with the normal
// compiler, so `make test` covers them without clang.
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fuzz/fuzz_lesson.c"
#include "fuzz_replay.h"

static int replay_dir(const char *dir) { return fuzz_replay(dir, LLVMFuzzerTestOneInput); }

static void test_replay(void **state)
{
    (void)state;
    int regressions = replay_dir("tests/fuzz/regressions");
    int bad = replay_dir("tests/bad");
    int good = replay_dir("lessons") + replay_dir("tests/ref");
    print_message("replayed %d fuzz regressions, %d bad lessons, %d good files\n", regressions, bad, good);
    assert_true(regressions >= 1 && bad >= 25 && good >= 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
