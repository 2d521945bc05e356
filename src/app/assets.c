// assets.c — finding the asset directory (see assets.h).
#include "assets.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static bool assets_ok(const char *dir)
{
    char p[2400];
    snprintf(p, sizeof p, "%.2000s/lang/en.txt", dir);
    return file_exists(p);
}

bool assets_find(char *out, size_t n, char *err, size_t err_len)
{
    const char *env = getenv("ATTNVIZ_ASSETS");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        if (assets_ok(out)) return true;
        snprintf(err, err_len, "attnviz: ATTNVIZ_ASSETS=%s: no lang/en.txt there", env);
        return false;
    }
    char *base = SDL_GetBasePath(); // executable's directory, with a trailing '/'
    char tried[3][1100] = {"", "", ""};
    if (base) {
        // build/attnviz → ../assets; build/san/attnviz → ../../assets; installed next to it → assets
        snprintf(tried[0], sizeof tried[0], "%s../assets", base);
        snprintf(tried[1], sizeof tried[1], "%s../../assets", base);
        snprintf(tried[2], sizeof tried[2], "%sassets", base);
        SDL_free(base);
        for (int i = 0; i < 3; i++)
            if (assets_ok(tried[i])) {
                snprintf(out, n, "%s", tried[i]);
                return true;
            }
    }
    snprintf(err, err_len, "attnviz: asset directory not found (looked in %s and %s); set ATTNVIZ_ASSETS",
             tried[0][0] ? tried[0] : "../assets", tried[1][0] ? tried[1] : "assets");
    return false;
}
