// bench_train_frames — the window's frames while it trains (R; src/app/app_train.c, issue 38:
// frames ≤ 16 ms while training): the induction lesson from its first checkpoint at 1280×720
// in-process (SDL's offscreen driver, frames called one after another as the page's main loop
// calls them: no wait between them), R pressed, then every frame of 12 s of training timed —
// the slice of steps, the trace and curve following the weights, the layout and the drawing.
// Rows: the median frame and its p99, and the worst frame, in wall time and in the process's CPU
// time (on a loaded machine the wall time is mostly the other processes').
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app.h"
#include "bench_common.h"
#include "session.h"

#define FRAMES 4000
#define SECONDS 12.0

// The process's CPU time (its threads'), in seconds: a frame's work without the time the
// machine's other processes took the core.
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv; // argv[1] is the app binary (unused here)
    setenv("SDL_VIDEODRIVER", "offscreen", 0);
    setenv("ATTNVIZ_ASSETS", "assets", 0);
    const SessionEdits at0 = {.has_checkpoint = true, .checkpoint = 0};
    AppOptions o = {.lesson_path = "lessons/induction-heads.json", .lang = LANG_EN, .width = 1280, .height = 720,
                    .edits = &at0, .browser = true};
    App *a = app_create(&o);
    if (!a) return 1;
    for (int k = 0; k < 5; k++) app_frame(a); // (opened, laid out)
    SDL_Event e = {.type = SDL_KEYDOWN};
    e.key.keysym.sym = SDLK_r, e.key.keysym.scancode = SDL_SCANCODE_R, e.key.state = SDL_PRESSED;
    SDL_PushEvent(&e);
    static double t[FRAMES], cpu[FRAMES];
    int n = 0;
    double worst = 0.0;
    const double start = bench_now();
    while (n < FRAMES && bench_now() - start < SECONDS) {
        const double t0 = bench_now(), c0 = cpu_now();
        app_frame(a);
        t[n] = (bench_now() - t0) * 1e3, cpu[n] = (cpu_now() - c0) * 1e3;
        if (t[n] > worst) worst = t[n];
        n++;
    }
    app_destroy(a);
    if (n < 10) return 1;
    bench_row("train: window frame while training (induction)", t, n, 16.0, "ms", 1);
    bench_info("train: its worst frame", worst, "ms");
    bench_row("train: a frame's CPU time while training", cpu, n, 16.0, "ms", 1);
    bench_info("train: the most CPU time of a frame", cpu[n - 1], "ms");
    bench_info("train: its frames", n, "");
    return 0;
}
