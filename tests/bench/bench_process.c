#define _DEFAULT_SOURCE   // wait4
// bench_process — whole-process figures, measured from outside:
//   start-up: process start to the first frame shown in a window (the app quits
//   right after it with ATTNVIZ_QUIT_AFTER_FIRST_FRAME=1), and its peak memory;
//   export throughput of `--export --animate` at 1280×720 for the default lesson,
//   in each format (PNG ≥ 200, SVG and PDF ≥ 50, GIF and MP4 ≥ 60 frames/s);
//   a teacher's waits: the largest shipped lesson (the largest file in lessons/) opened to
//   its first frame (≤ 300 ms; started alternately with the default lesson), and a
//   1920×1080 MP4 of the classic lesson with every stage held 2 s (≤ 10 s).
// Needs a display for the start-up part (make bench runs it under xvfb-run).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"

// Runs argv with env additions; returns wall seconds (-1 on failure) and peak RSS in KiB.
static double run(char *const argv[], const char *env_name, const char *env_value, long *maxrss_kb)
{
    fflush(stdout); // the child must not write this process's buffered rows again
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (env_name) setenv(env_name, env_value, 1);
        freopen("/dev/null", "w", stdout);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    double dt = bench_now() - t0;
    *maxrss_kb = ru.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_process: %s exited with status %d\n", argv[0],
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return dt;
}

int main(int argc, char **argv)
{
    char *bin = argc > 1 ? argv[1] : "build/attnviz";
    char *lesson = "lessons/arange-2x4x4.json";
    enum { STARTS = 21, EXPORTS = 3 };
    double t[STARTS];
    long rss = 0, peak = 0;
    int rc = 0;

    char big[600];
    if (!bench_largest_lesson(big, sizeof big)) return 1;
    if (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY")) {
        char *args[] = {bin, "--size", "1280x720", lesson, NULL}, *args_big[] = {bin, "--size", "1280x720", big, NULL};
        double tb[STARTS];
        long peak_big = 0;
        for (int i = 0; i < STARTS; i++) { // the default lesson and the largest, alternately
            t[i] = run(args, "ATTNVIZ_QUIT_AFTER_FIRST_FRAME", "1", &rss) * 1e3;
            if (t[i] < 0) return 1;
            if (rss > peak) peak = rss;
            tb[i] = run(args_big, "ATTNVIZ_QUIT_AFTER_FIRST_FRAME", "1", &rss) * 1e3;
            if (tb[i] < 0) return 1;
            if (rss > peak_big) peak_big = rss;
        }
        bench_row("start-up: process start to first frame", t, STARTS, 100, "ms", 1);
        bench_info("peak memory (max RSS), window + default lesson", (double)peak / 1024.0, "MiB");
        char name[700];
        snprintf(name, sizeof name, "start-up, the largest shipped lesson (%s) to its first frame", big + 8);
        bench_row(name, tb, STARTS, 300, "ms", 1);
        bench_info("peak memory (max RSS), window + the largest shipped lesson", (double)peak_big / 1024.0, "MiB");
    } else {
        printf("| start-up: skipped (no DISPLAY; make bench runs it under xvfb-run) | | | | |\n");
    }

    char dir[] = "/tmp/attnviz-bench-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char out[64];
    snprintf(out, sizeof out, "%s/frames", dir);
    // every format of --export --animate: PNG frames, SVG frames, one PDF
    static const struct { char *format; double target; } fmts[] = {
        {"png", 200}, {"svg", 50}, {"pdf", 50}, {"gif", 60}, {"mp4", 60}};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        char *args[] = {bin, "--export", out, "--format", fmts[k].format, "--animate", "--size", "1280x720", lesson, NULL};
        double fps[EXPORTS];
        for (int i = 0; i < EXPORTS; i++) {
            char cmd[160];
            snprintf(cmd, sizeof cmd, "rm -rf %s", out);
            if (system(cmd) != 0) return 1;
            double s = run(args, NULL, NULL, &rss);
            if (s < 0) return 1;
            // the frames written, as frames.json lists them
            snprintf(cmd, sizeof cmd, "grep -c '\"file\"' %s/frames.json", out);
            FILE *p = popen(cmd, "r");
            int frames = 0;
            if (!p || fscanf(p, "%d", &frames) != 1) rc = 1;
            if (p) pclose(p);
            fps[i] = frames / s;
        }
        char name[96];
        snprintf(name, sizeof name, "export --animate --format %s 1280x720, arange", fmts[k].format);
        bench_row(name, fps, EXPORTS, fmts[k].target, "fr/s", 0);
    }
    // a teacher's video: 1920×1080 MP4 of the classic lesson, each settled stage held 2 s
    {
        char *args[] = {bin, "--export", out, "--format", "mp4", "--animate", "--hold", "2", "--size", "1920x1080",
                        lesson, NULL};
        double secs[EXPORTS];
        for (int i = 0; i < EXPORTS; i++) {
            char cmd[160];
            snprintf(cmd, sizeof cmd, "rm -rf %s", out);
            if (system(cmd) != 0) return 1;
            if ((secs[i] = run(args, NULL, NULL, &rss)) < 0) return 1;
        }
        bench_row("export 1920x1080 MP4 --animate --hold 2, arange (whole video)", secs, EXPORTS, 10, "s", 1);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
