// probe.c — the tests' and make bench's view of the window (probe.h).
#include "probe.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const AppTestHook *app_test_hook;

void probe_init(Probe *p)
{
    memset(p, 0, sizeof *p);
    const char *bench_first = getenv("ATTNVIZ_QUIT_AFTER_FIRST_FRAME");
    p->quit_after_first = bench_first && *bench_first && strcmp(bench_first, "0") != 0;
    const char *clock = getenv("ATTNVIZ_TEST_CLOCK"), *state = getenv("ATTNVIZ_TEST_STATE");
    p->ms_per_frame = app_test_hook ? app_test_hook->ms_per_frame : clock && *clock ? atof(clock) : 0.0;
    // opened once; each frame rewrites it from the start (truncated first, as "w" did)
    p->state_fd = state && *state ? open(state, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
}

void probe_close(Probe *p)
{
    if (p->state_fd >= 0) close(p->state_fd);
    p->state_fd = -1;
}

bool probe_in_process(const Probe *p)
{
    (void)p;
    return app_test_hook != NULL;
}

bool probe_fake_clock(const Probe *p) { return p->ms_per_frame > 0.0; }

Uint64 probe_ms(const Probe *p)
{
    return p->ms_per_frame > 0.0 ? (Uint64)p->ms : SDL_GetTicks64();
}

double probe_frame_dt(Probe *p, double real_dt)
{
    p->ms += p->ms_per_frame;
    return p->ms_per_frame > 0.0 ? p->ms_per_frame / 1000.0 : real_dt;
}

void probe_event(Probe *p, const SDL_Event *e)
{
    p->events++;
    p->keyups += e->type == SDL_KEYUP;
}

bool probe_frame_drawn(Probe *p)
{
    return ++p->frames == 1 && p->quit_after_first;
}

bool probe_watched(const Probe *p) { return app_test_hook || p->state_fd >= 0; }

void probe_report(Probe *p, const AppTestFrame *f)
{
    if (app_test_hook) app_test_hook->frame(app_test_hook->ctx, f);
    if (p->state_fd < 0) return; // the Xvfb tests poll it
    char line[256];
    int n = snprintf(line, sizeof line, "%ld %ld %d %s %ld\n", p->frames, p->events, f->busy, f->stage, p->keyups);
    if (n < 0) return;
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    if (ftruncate(p->state_fd, 0) != 0 || pwrite(p->state_fd, line, (size_t)n, 0) != n) {} // (a test sees no change)
}
