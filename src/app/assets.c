// assets.c — finding the asset directory (see assets.h).
#include "assets.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

// The installed data directory, from the Makefile's PREFIX (build/gen/datadir.h):
// ATTNVIZ_DATADIR/assets and ATTNVIZ_DATADIR/lessons after `make install`.
#include "datadir.h"

// A regular file there (a link to one is fine).
static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool assets_ok(const char *dir)
{
    char p[2400];
    snprintf(p, sizeof p, "%.2000s/lang/en.txt", dir);
    return file_exists(p);
}

// A source checkout's assets beside a build directory: only when the folder is the
// checkout (its Makefile and sources are there) and belongs to root, to this user or
// to the binary's owner: a folder planted beside an install is never read.
static bool checkout_assets(const char *root, uid_t bin_owner, char *out, size_t n)
{
    char p[2400];
    struct stat st;
    snprintf(p, sizeof p, "%.2000s/src/app/main.c", root);
    if (!file_exists(p)) return false;
    snprintf(p, sizeof p, "%.2000s/Makefile", root);
    if (!file_exists(p)) return false;
    snprintf(out, n, "%s/assets", root);
    if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    if (st.st_uid != 0 && st.st_uid != geteuid() && st.st_uid != bin_owner) return false;
    return assets_ok(out);
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
    char *base = SDL_GetBasePath(); // the executable's directory, with a trailing '/'
    char installed[1100] = "";
    if (base) {
        // installed (PREFIX/bin/attnviz, also under a DESTDIR or moved as a whole):
        // PREFIX/share/attnviz/assets, inside the prefix
        snprintf(installed, sizeof installed, "%s../share/attnviz/assets", base);
        if (assets_ok(installed)) {
            snprintf(out, n, "%s", installed);
            SDL_free(base);
            return true;
        }
        // a source checkout: build/attnviz, build/san/attnviz, build/tests/test_x
        struct stat st;
        char self[1200], root[1200];
        snprintf(self, sizeof self, "%sattnviz", base);
        uid_t owner = stat(self, &st) == 0 ? st.st_uid : geteuid();
        for (int up = 1; up <= 3; up++) { // (build/san/tests/test_x: three up)
            snprintf(root, sizeof root, "%s%s", base, up == 1 ? ".." : up == 2 ? "../.." : "../../..");
            if (checkout_assets(root, owner, out, n)) {
                SDL_free(base);
                return true;
            }
        }
        SDL_free(base);
    }
    // where `make install` put them, whatever the working directory
    char compiled[1100];
    snprintf(compiled, sizeof compiled, "%s/assets", ATTNVIZ_DATADIR);
    if (assets_ok(compiled)) {
        snprintf(out, n, "%s", compiled);
        return true;
    }
    snprintf(err, err_len, "attnviz: asset directory not found (looked in %s, a source checkout beside the binary "
             "and %s); set ATTNVIZ_ASSETS", installed[0] ? installed : "../share/attnviz/assets", compiled);
    return false;
}

bool assets_default_lesson(char *out, size_t n)
{
    char assets[1100], err[600];
    if (!assets_find(assets, sizeof assets, err, sizeof err)) {
        snprintf(out, n, "%s", err);
        return false;
    }
    snprintf(out, n, "%s/../lessons/arange-2x4x4.json", assets);
    return true;
}
