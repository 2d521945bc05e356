// pure_support.h — shared set-up of the SDL-free tests (test_scene, test_edit,
// test_quiz): the interface strings from assets/ as the cmocka group set-up and
// tear-down, and a lesson opened as a Session (failing the test when it does not
// load). Include once, in a test's .c file, after <cmocka.h>.
#ifndef ATTNVIZ_PURE_SUPPORT_H
#define ATTNVIZ_PURE_SUPPORT_H

#include "session.h"
#include "i18n.h"

static int setup(void **state)
{
    (void)state;
    char err[256];
    return i18n_load("assets", err, sizeof err) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    i18n_free();
    return 0;
}

// A lesson and its trace (the session owns both; the trace borrows the lesson's weights).
static inline Session *open_session(const char *path)
{
    char err[LESSON_ERR_MAX];
    Session *s = session_create(path, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

#endif
