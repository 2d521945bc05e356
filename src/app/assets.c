// assets.c — finding the asset directory (see assets.h).
#include "assets.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

// The installed data directory, from the Makefile's PREFIX (build/gen/datadir.h):
// ATTNVIZ_DATADIR/assets and ATTNVIZ_DATADIR/lessons after `make install`.
#include "datadir.h"

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
    enum { N_TRIED = 5 };
    char tried[N_TRIED][1100] = {"", "", "", "", ""};
    if (base) {
        // build/attnviz → ../assets; build/san/attnviz → ../../assets; beside it → assets;
        // installed (PREFIX/bin/attnviz, also under a DESTDIR or moved as a whole) →
        // ../share/attnviz/assets
        snprintf(tried[0], sizeof tried[0], "%s../assets", base);
        snprintf(tried[1], sizeof tried[1], "%s../../assets", base);
        snprintf(tried[2], sizeof tried[2], "%sassets", base);
        snprintf(tried[3], sizeof tried[3], "%s../share/attnviz/assets", base);
        SDL_free(base);
    }
    // where `make install` put them, whatever the working directory
    snprintf(tried[4], sizeof tried[4], "%s/assets", ATTNVIZ_DATADIR);
    for (int i = 0; i < N_TRIED; i++)
        if (tried[i][0] && assets_ok(tried[i])) {
            snprintf(out, n, "%s", tried[i]);
            return true;
        }
    snprintf(err, err_len, "attnviz: asset directory not found (looked in %s, %s and %s); set ATTNVIZ_ASSETS",
             tried[0][0] ? tried[0] : "../assets", tried[3][0] ? tried[3] : "../share/attnviz/assets", tried[4]);
    return false;
}
