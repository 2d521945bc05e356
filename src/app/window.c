// window.c — what every part of the window that works on App uses (window.h): the
// notice, the frame's layout, pointer coordinates, E's source.
#include "window.h"

#include <stdio.h>

#include "cli.h"

void (*app_on_saved)(const char *path);
bool (*app_fetch_font)(void);
bool (*app_open_presenter)(void);
bool (*app_fetch_lesson)(const char *path);

void app_toast(App *a, const char *key, const char *arg)
{
    toast_show(&a->toast, a->v.lang, key, arg);
}

void app_output_size(App *a, int *w, int *h)
{
    SDL_GetRendererOutputSize(a->screen.r, w, h);
}

// The Layout of the frame on screen: computed once, drawn with, and hit-tested with
// until the view, the window size or the lesson's numbers change (then computed anew).
const Layout *app_layout(App *a)
{
    int w, h;
    app_output_size(a, &w, &h);
    if (layout_cache_stale(&a->layout, &a->v, w, h, a->lab.gen) && a->screen.heatmap_gen != a->lab.gen) {
        heatmap_cache_flush(a->screen.heatmaps); // an edit changes numbers at the same addresses
        a->screen.heatmap_gen = a->lab.gen;
    }
    return layout_cache_get(&a->layout, lab_trace(&a->lab, a->session), &a->v, w, h, a->lab.gen);
}

// Window coordinates → renderer output pixels (differ on HiDPI).
void app_to_output(App *a, int x, int y, int *ox, int *oy)
{
    int ww, wh, ow, oh;
    SDL_GetWindowSize(a->screen.win, &ww, &wh);
    app_output_size(a, &ow, &oh);
    *ox = ww > 0 ? x * ow / ww : x;
    *oy = wh > 0 ? y * oh / wh : y;
}

ExportFrom app_export_from(App *a)
{
    ExportFrom f = {a->session, &a->v, a->opt->font_path, 0, 0, a->opt->browser, a->study->st.on};
    app_output_size(a, &f.w, &f.h);
    return f;
}

// Ctrl+S (and S when quitting asks): the edited lesson saved as a new file; its path
// on stdout and in a toast. False (said in a toast and on stderr) when it was not.
bool app_save_lesson(App *a)
{
    char dir[1200], path[1400];
    lab_save_dir(dir, sizeof dir);
    if (!lab_save(&a->lab, a->session, dir, path, sizeof path)) {
        cli_error(stderr, "attnviz: %s", path);
        app_toast(a, "app.lesson_save_failed", path);
        a->toast.left = ERROR_TOAST_SECONDS;
        return false;
    }
    app_toast(a, "app.lesson_saved", path);
    printf("%s\n", path);
    fflush(stdout);
    if (app_on_saved) app_on_saved(path);
    a->quit.saved_session = a->session, a->quit.saved_version = a->session->version;
    return true;
}
