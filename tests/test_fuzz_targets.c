// Replays the seeds and every crash kept of the newer fuzz targets (the --set grammar,
// the study mode's answer parser, the progress file's reader and writer: issue 27; a
// language-model lesson through load → retext → forward, the tokenizer, the page's
// address read as its command line: issue 36) through the targets' own oracles, built
// with the normal compiler: `make
// test` covers them without clang. Plus the inputs those oracles were written for.
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define FUZZ_SET_ENTRY fuzz_set_one
#include "fuzz/fuzz_set.c"
#define FUZZ_QUIZ_ENTRY fuzz_quiz_one
#include "fuzz/fuzz_quiz_answer.c"
#define FUZZ_PROGRESS_ENTRY fuzz_progress_one
#include "fuzz/fuzz_progress.c"
#define FUZZ_LM_ENTRY fuzz_lm_one
#include "fuzz/fuzz_lm.c"
#define FUZZ_TOKENIZER_ENTRY fuzz_tokenizer_one
#include "fuzz/fuzz_tokenizer.c"
#define FUZZ_URL_ENTRY fuzz_url_one
#include "fuzz/fuzz_url_args.c"
#include "fuzz_replay.h"


static int str(int (*one)(const uint8_t *, size_t), const char *s)
{
    return one((const uint8_t *)s, strlen(s));
}

static void test_replay(void **state)
{
    (void)state;
    int set = fuzz_replay("tests/fuzz/seeds/set", fuzz_set_one) + fuzz_replay("tests/fuzz/regressions/set", fuzz_set_one);
    int quiz = fuzz_replay("tests/fuzz/seeds/quiz", fuzz_quiz_one) + fuzz_replay("tests/fuzz/regressions/quiz_answer", fuzz_quiz_one);
    int prog = fuzz_replay("tests/fuzz/seeds/progress", fuzz_progress_one) +
               fuzz_replay("tests/fuzz/regressions/progress", fuzz_progress_one);
    int lm = fuzz_replay("tests/fuzz/seeds/lm", fuzz_lm_one) + fuzz_replay("tests/fuzz/regressions/lm", fuzz_lm_one);
    int tok = fuzz_replay("tests/fuzz/seeds/tokenizer", fuzz_tokenizer_one) +
              fuzz_replay("tests/fuzz/regressions/tokenizer", fuzz_tokenizer_one);
    int url = fuzz_replay("tests/fuzz/seeds/url", fuzz_url_one) + fuzz_replay("tests/fuzz/regressions/url_args", fuzz_url_one);
    print_message("replayed %d --set, %d answer, %d progress, %d language-model, %d tokenizer and %d address inputs\n",
                  set, quiz, prog, lm, tok, url);
    assert_true(set >= 20 && quiz >= 5 && prog >= 2 && lm >= 12 && tok >= 10 && url >= 6);
    // the cases found by hand in issue 27: an answer longer than a number's buffer is
    // refused, never read as two numbers; the near-FLT_MAX decimal as --set
    float v[4];
    int n;
    assert_false(quiz_parse_answer("3.14159265358979323846264338327950288419716939937510e-3", v, 4, &n));
    str(fuzz_set_one, "\001input.query[0,0,0]=340282356779733652192806429718852141056");
    str(fuzz_quiz_one, "3.14159265358979323846264338327950288419716939937510e-3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
