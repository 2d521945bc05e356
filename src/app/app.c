// app.c — the interactive window: events in, playback, one render_frame per frame.
//
// Initialization: assets + strings, lesson + trace (computed once), SDL window,
// renderer, fonts. Update: events → UI state (Playback + View). Draw:
// render_frame. De-initialization in reverse order.
#include "app.h"

#include <SDL.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "i18n.h"
#include "layout.h"
#include "playback.h"
#include "png_write.h"
#include "render.h"
#include "text.h"
#include "view.h"

#define TOAST_SECONDS 3.0
#define MSG_MAX 1200

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

bool app_find_assets(char *out, size_t n, char *err, size_t err_len)
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

typedef struct App {
    const AppOptions *opt;
    Lesson ls;
    Trace tr;
    SDL_Window *win;
    SDL_Renderer *r;
    Fonts *fonts;
    Playback pb;
    View v;
    char toast[MSG_MAX];
    double toast_left; // seconds
    bool quit;
    bool mouse_in;
    int mouse_wx, mouse_wy; // window coordinates
} App;

static void toast(App *a, const char *key, const char *arg)
{
    const char *args[] = {arg};
    i18n_fmt(a->toast, sizeof a->toast, a->v.lang, key, 1, args);
    a->toast_left = TOAST_SECONDS;
}

static void current_layout(App *a, Layout *L)
{
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    layout_compute(L, &a->tr, &a->v, w, h);
}

// Window coordinates → renderer output pixels (differ on HiDPI).
static void to_output(App *a, int x, int y, int *ox, int *oy)
{
    int ww, wh, ow, oh;
    SDL_GetWindowSize(a->win, &ww, &wh);
    SDL_GetRendererOutputSize(a->r, &ow, &oh);
    *ox = ww > 0 ? x * ow / ww : x;
    *oy = wh > 0 ? y * oh / wh : y;
}

static void save_frame(App *a)
{
    const char *dir = getenv("ATTNVIZ_SAVE_DIR");
    if (!dir || !*dir) dir = ".";
    const Stage *st = &a->tr.stages[a->pb.stage];
    char path[1100], err[MSG_MAX];
    snprintf(path, sizeof path, "%s/attnviz-%04d-%s.png", dir, a->pb.stage + 1, st->name);
    for (int k = 2; file_exists(path) && k < 1000; k++)
        snprintf(path, sizeof path, "%s/attnviz-%04d-%s-%d.png", dir, a->pb.stage + 1, st->name, k);
    int w, h;
    SDL_GetRendererOutputSize(a->r, &w, &h);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    if (!s) {
        toast(a, "app.save_failed", SDL_GetError());
        return;
    }
    // the frame as shown, without the toast of an earlier save
    View v = a->v;
    v.toast = NULL;
    render_frame(a->r, a->fonts, &a->tr, &v);
    if (SDL_RenderReadPixels(a->r, NULL, SDL_PIXELFORMAT_RGBA32, s->pixels, s->pitch) != 0) {
        snprintf(err, sizeof err, "%s: %s", path, SDL_GetError());
        toast(a, "app.save_failed", err);
    } else if (!png_write_rgba(path, s->pixels, w, h, s->pitch, 6, err, sizeof err)) {
        toast(a, "app.save_failed", err);
    } else {
        toast(a, "app.saved", path);
        printf("%s\n", path);
        fflush(stdout);
    }
    SDL_FreeSurface(s);
}

static void set_head(App *a, int h)
{
    int n = a->tr.n_heads > 0 ? a->tr.n_heads : 1;
    a->v.head = ((h % n) + n) % n;
}

static void set_batch(App *a, int b)
{
    int n = a->tr.batch > 0 ? a->tr.batch : 1;
    a->v.batch = ((b % n) + n) % n;
}

static void goto_step(App *a, StepId s)
{
    int first = trace_step_first(&a->tr, s);
    if (first >= 0) playback_goto(&a->pb, first, true);
}

static void on_key(App *a, const SDL_KeyboardEvent *k)
{
    SDL_Keycode sym = k->keysym.sym;
    bool shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    bool question = sym == SDLK_QUESTION || (sym == SDLK_SLASH && shift);
    if (a->v.help) { // any key closes the help
        if (sym != SDLK_LSHIFT && sym != SDLK_RSHIFT) a->v.help = false;
        return;
    }
    if (question || sym == SDLK_F1) {
        a->v.help = true;
        return;
    }
    switch (sym) {
    case SDLK_ESCAPE:
    case SDLK_q: a->quit = true; break;
    case SDLK_RIGHT:
    case SDLK_SPACE:
    case SDLK_PAGEDOWN: playback_next(&a->pb); break;
    case SDLK_LEFT:
    case SDLK_PAGEUP: playback_prev(&a->pb); break;
    case SDLK_HOME: playback_goto(&a->pb, 0, false); break;
    case SDLK_END: playback_goto(&a->pb, a->tr.n - 1, false); break;
    case SDLK_p: playback_toggle(&a->pb); break;
    case SDLK_TAB: set_head(a, a->v.head + (shift ? -1 : 1)); break;
    case SDLK_RIGHTBRACKET: set_head(a, a->v.head + 1); break;
    case SDLK_LEFTBRACKET: set_head(a, a->v.head - 1); break;
    case SDLK_b: set_batch(a, a->v.batch + (shift ? -1 : 1)); break;
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS: playback_set_speed(&a->pb, a->pb.speed * 1.5f); break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS: playback_set_speed(&a->pb, a->pb.speed / 1.5f); break;
    case SDLK_v: a->v.show_values = !a->v.show_values; break;
    case SDLK_c:
        a->v.palette = (Palette)((a->v.palette + 1) % PALETTE_COUNT);
        toast(a, "app.palette", i18n_get(a->v.lang, colormap_palette_key(a->v.palette)));
        break;
    case SDLK_f: {
        bool fs = (SDL_GetWindowFlags(a->win) & SDL_WINDOW_FULLSCREEN_DESKTOP) != 0;
        SDL_SetWindowFullscreen(a->win, fs ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
        break;
    }
    case SDLK_s: save_frame(a); break;
    default:
        if (sym >= SDLK_1 && sym <= SDLK_9) {
            Layout L;
            current_layout(a, &L);
            int i = (int)(sym - SDLK_1);
            if (i < L.n_steps) goto_step(a, L.step_id[i]);
        }
        break;
    }
}

static void on_click(App *a, int wx, int wy)
{
    int x, y;
    to_output(a, wx, wy, &x, &y);
    Layout L;
    current_layout(a, &L);
    int s = layout_hit_step(&L, x, y), b = layout_hit_batch(&L, x, y), h = layout_hit_head(&L, x, y);
    if (s >= 0) goto_step(a, (StepId)s);
    if (b >= 0) set_batch(a, b);
    if (h >= 0) set_head(a, h);
}

static void handle_event(App *a, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT: a->quit = true; break;
    case SDL_KEYDOWN: on_key(a, &e->key); break;
    case SDL_MOUSEMOTION:
        a->mouse_in = true;
        a->mouse_wx = e->motion.x, a->mouse_wy = e->motion.y;
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (a->v.help) a->v.help = false;
        else if (e->button.button == SDL_BUTTON_LEFT) on_click(a, e->button.x, e->button.y);
        break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_LEAVE) a->mouse_in = false;
        break;
    default: break;
    }
}

static bool open_window(App *a)
{
    const AppOptions *o = a->opt;
    char title[600];
    const char *args[] = {lesson_title(&a->ls, (Lang)o->lang)};
    i18n_fmt(title, sizeof title, (Lang)o->lang, "app.title", 1, args);
    Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI |
                   (o->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
    // The window uses the same software renderer as the PNG export unless
    // SDL_RENDER_DRIVER says otherwise: identical pixels, a frame in ~2 ms at
    // 1280×720, and no GL start-up (measured: first frame 45 ms and 18 MiB vs
    // 95 ms and 112 MiB with Mesa's GL under X; see README "Speed").
    const char *driver = SDL_GetHint(SDL_HINT_RENDER_DRIVER);
    if (!driver || !*driver) {
        SDL_SetHint(SDL_HINT_RENDER_DRIVER, "software");
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    }
    a->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, o->width, o->height, flags);
    if (!a->win) return false;
    SDL_SetWindowMinimumSize(a->win, 480, 320);
    a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!a->r) a->r = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_SOFTWARE);
    return a->r != NULL;
}

int app_run(const AppOptions *opt)
{
    // Initialization
    App *a = SDL_calloc(1, sizeof *a);
    if (!a) {
        fprintf(stderr, "attnviz: out of memory\n");
        return 1;
    }
    a->opt = opt;
    int rc = 1;
    char assets[1100], err[MSG_MAX];
    bool have_lesson = false, sdl_up = false;
    if (!app_find_assets(assets, sizeof assets, err, sizeof err) || !i18n_load(assets, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    if (!cli_load_and_forward(opt->lesson_path, &a->ls, &a->tr, stderr)) goto done;
    have_lesson = true;
    if (a->tr.n == 0) {
        fprintf(stderr, "%s: the lesson has no stages\n", opt->lesson_path);
        goto done;
    }
    a->fonts = fonts_create(opt->font_path, (Lang)opt->lang, err, sizeof err);
    if (!a->fonts) {
        fprintf(stderr, "%s\n", err);
        goto done;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto done;
    }
    sdl_up = true;
    if (!open_window(a)) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        goto done;
    }
    playback_init(&a->pb, a->tr.n);
    view_init(&a->v, &a->ls, (Lang)opt->lang);

    Uint64 freq = SDL_GetPerformanceFrequency(), last = SDL_GetPerformanceCounter();
    bool software = false;
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(a->r, &info) == 0) software = (info.flags & SDL_RENDERER_SOFTWARE) != 0;
    // Benchmark hook (make bench): quit right after the first frame is shown.
    const char *bench_first = getenv("ATTNVIZ_QUIT_AFTER_FIRST_FRAME");
    bool quit_after_first = bench_first && *bench_first && strcmp(bench_first, "0") != 0;
    long frames_drawn = 0;
    while (!a->quit) {
        // Update (the first frame is drawn without waiting for an event)
        SDL_Event e;
        bool busy = frames_drawn == 0 || playback_animating(&a->pb) || a->pb.playing ||
                    a->toast_left > 0.0;
        if (!busy && SDL_WaitEventTimeout(&e, 250)) handle_event(a, &e);
        while (SDL_PollEvent(&e)) handle_event(a, &e);
        Uint64 now = SDL_GetPerformanceCounter();
        double dt = (double)(now - last) / (double)freq;
        last = now;
        playback_update(&a->pb, dt);
        if (a->toast_left > 0.0) a->toast_left -= dt;
        a->v.stage = a->pb.stage;
        a->v.anim = playback_progress(&a->pb);
        a->v.playing = a->pb.playing;
        a->v.speed = a->pb.speed;
        a->v.toast = a->toast_left > 0.0 ? a->toast : NULL;
        a->v.toast_alpha = (float)(a->toast_left > 0.5 ? 1.0 : a->toast_left / 0.5);
        a->v.hover = a->mouse_in;
        to_output(a, a->mouse_wx, a->mouse_wy, &a->v.mouse_x, &a->v.mouse_y);
        // Draw
        render_frame(a->r, a->fonts, &a->tr, &a->v);
        SDL_RenderPresent(a->r);
        if (++frames_drawn == 1 && quit_after_first) a->quit = true;
        if (software) SDL_Delay(10);
    }
    rc = 0;
done:
    // De-initialization
    if (a->fonts) fonts_flush(a->fonts);
    if (a->r) SDL_DestroyRenderer(a->r);
    if (a->win) SDL_DestroyWindow(a->win);
    fonts_destroy(a->fonts);
    if (sdl_up) SDL_Quit();
    if (have_lesson) {
        trace_free(&a->tr);
        lesson_free(&a->ls);
    }
    i18n_free();
    SDL_free(a);
    return rc;
}
