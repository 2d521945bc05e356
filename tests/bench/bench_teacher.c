// bench_teacher — the waits a teacher feels in front of a class, in the real window
// (app_create / app_frame in-process, on the display make bench gives it: Xvfb), each
// timed from the key (or the call) to the end of the frame that shows its result:
//   - O / a dropped file: the largest shipped lesson (the largest file in lessons/)
//     opened in place of the default one → its first frame (≤ 300 ms), alternately with
//     the default lesson opened back;
//   - L: the language switched → the frame in the other language (≤ 100 ms; the first
//     switch to Chinese, which opens its font, is an info row: the page fetches that
//     font before it switches);
//   - F5: the presenter window opened → both windows' first frame (≤ 300 ms), closed
//     again (its window's close button) between rounds.
// bench_process times the process started on the largest lesson to its first frame.
#include <SDL.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "bench_common.h"

static long drawn; // frames drawn so far (the hook)

static void on_frame(void *ctx, const AppTestFrame *f)
{
    (void)ctx;
    drawn = f->frame;
}

// Frames until one more is drawn than before (at most 50 calls); false when the window quit.
static bool next_frame(App *a)
{
    const long before = drawn;
    for (int i = 0; i < 50 && drawn == before; i++)
        if (!app_frame(a)) return false;
    return drawn > before;
}

// Frames until nothing moves (a transition, a notice).
static void settle(App *a)
{
    for (int i = 0; i < 3000 && app_busy(a); i++) app_frame(a);
    app_frame(a);
}

static void push_key(SDL_Keycode sym)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN, e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym, e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP, e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
}

// The id of a window other than `not` (the presenter's beside the audience's), 0: none.
static Uint32 other_window(Uint32 not)
{
    for (Uint32 id = 1; id < 64; id++)
        if (id != not && SDL_GetWindowFromID(id)) return id;
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv; // argv[1] is the app binary (unused: in-process)
    enum { ROUNDS = 15 };
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        printf("| teacher's waits: skipped (no DISPLAY; make bench runs it under xvfb-run) | | | | |\n");
        return 0;
    }
    char big[600];
    if (!bench_largest_lesson(big, sizeof big)) return 1;
    const AppTestHook hook = {1000.0 / 60.0, on_frame, NULL};
    app_test_hook = &hook;
    const AppOptions opt = {.lesson_path = "lessons/arange-2x4x4.json", .lang = LANG_EN, .width = 1280, .height = 720};
    App *a = app_create(&opt);
    if (!a || !next_frame(a)) {
        fprintf(stderr, "bench_teacher: the window did not open\n");
        return 1;
    }
    settle(a);
    const Uint32 audience = other_window(0);
    static double t_open[ROUNDS], t_lang[2 * ROUNDS], t_f5[ROUNDS];
    double first_zh = 0;
    for (int r = 0; r < ROUNDS; r++) {
        // O: the largest lesson in place of the default one, then the default one back
        double t0 = bench_now();
        if (!app_open(a, big) || !next_frame(a)) return 1;
        t_open[r] = (bench_now() - t0) * 1e3;
        settle(a);
        if (!app_open(a, "lessons/arange-2x4x4.json")) return 1;
        settle(a);
        // L twice: to Chinese and back
        for (int k = 0; k < 2; k++) {
            t0 = bench_now();
            push_key(SDLK_l);
            if (!next_frame(a)) return 1;
            const double ms = (bench_now() - t0) * 1e3;
            if (r == 0 && k == 0) first_zh = ms;
            t_lang[2 * r + k] = ms;
            settle(a);
        }
        // F5: the presenter window and both first frames; then its close button
        t0 = bench_now();
        push_key(SDLK_F5);
        if (!next_frame(a)) return 1;
        t_f5[r] = (bench_now() - t0) * 1e3;
        settle(a);
        const Uint32 pres = other_window(audience);
        if (!pres) {
            fprintf(stderr, "bench_teacher: F5 opened no presenter window\n");
            return 1;
        }
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_WINDOWEVENT, e.window.event = SDL_WINDOWEVENT_CLOSE, e.window.windowID = pres;
        SDL_PushEvent(&e);
        settle(a);
        if (other_window(audience)) {
            fprintf(stderr, "bench_teacher: the presenter window did not close\n");
            return 1;
        }
    }
    app_destroy(a);
    char name[700];
    snprintf(name, sizeof name, "O: the largest shipped lesson (%s) opened in the window -> its first frame", big + 8);
    bench_row(name, t_open, ROUNDS, 300, "ms", 1);
    bench_row("L: the language switched -> its frame (English <-> Chinese)", t_lang + 1, 2 * ROUNDS - 1, 100, "ms", 1);
    bench_info("  the first switch to Chinese (its font opened)", first_zh, "ms");
    bench_row("F5: the presenter window -> both windows' first frame", t_f5, ROUNDS, 300, "ms", 1);
    return 0;
}
