// user_dir.c — the user's data folder (see user_dir.h).
#include "user_dir.h"

#include <stdio.h>
#include <stdlib.h>

bool user_data_path(const char *name, char *out, size_t n)
{
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    const char *sep = name && *name ? "/" : "", *nm = name ? name : "";
    int len = x && *x == '/'         ? snprintf(out, n, "%s/attnviz%s%s", x, sep, nm)
              : home && *home == '/' ? snprintf(out, n, "%s/.local/share/attnviz%s%s", home, sep, nm)
                                     : -1;
    if (len < 0 || (size_t)len >= n) { // no or a relative XDG_DATA_HOME / HOME, or one too long
        if (n) out[0] = '\0';
        return false;
    }
    return true;
}

bool user_data_dir(char *out, size_t n)
{
    return user_data_path(NULL, out, n);
}
