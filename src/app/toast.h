// toast.h — the notice over the frame: a string of the window's language for a few
// seconds (the window's, E's exports', the quit question's).
#ifndef ATTNVIZ_TOAST_H
#define ATTNVIZ_TOAST_H

#include <stddef.h>

#include "lesson.h" // Lang

#define TOAST_SECONDS 3.0
#define MSG_MAX 1200
#define EXPORT_TOAST_SECONDS 8.0
#define ERROR_TOAST_SECONDS 8.0
#define QUIT_ASK_SECONDS 1.0 // (kept while the question is open)

typedef struct Toast {
    char text[MSG_MAX];
    double left; // seconds it stays; 0: none
} Toast;

// The string key with its n args (i18n_fmt) for seconds.
void toast_say(Toast *t, Lang lang, const char *key, int n, const char *const *args, double seconds);
// The string key with arg for TOAST_SECONDS.
void toast_show(Toast *t, Lang lang, const char *key, const char *arg);

#endif
