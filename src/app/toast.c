// toast.c — the notice over the frame (toast.h).
#include "toast.h"

#include "i18n.h"

void toast_say(Toast *t, Lang lang, const char *key, int n, const char *const *args, double seconds)
{
    i18n_fmt(t->text, sizeof t->text, lang, key, n, args);
    t->left = seconds;
}

void toast_show(Toast *t, Lang lang, const char *key, const char *arg)
{
    const char *args[] = {arg};
    toast_say(t, lang, key, 1, args, TOAST_SECONDS);
}
