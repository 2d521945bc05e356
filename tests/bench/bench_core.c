#define _DEFAULT_SOURCE   // wait4
// bench_core — times the attention core's forward pass (no SDL).
// Prints a table row per case: median and p99 over repeated runs.
//   - the 2×4×4 lesson (must not get slower: no thread is woken for it);
//   - B=1 L=256 C=256 H=8 causal, and PyTorch's time for the same forward
//     (tests/bench/torch_forward.py, when python3-torch is installed), in
//     alternating rounds so both see the same machine, and the ratio;
//   - the largest legal lesson (every limit of lessons/README.md at once): its
//     forward time and the peak memory of a process that loads and runs it.
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attention.h"
#include "bench_common.h"
#include "lesson.h"

// Times `reps` batches of `inner` forward passes; returns per-pass seconds in out[].
static void time_forward(const Lesson *ls, int reps, int inner, double *out)
{
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int k = 0; k < inner; k++) {
            Trace tr;
            trace_init(&tr);
            if (!attn_forward(&ls->cfg, &ls->w, &ls->in, &tr)) {
                fprintf(stderr, "bench_core: out of memory\n");
                exit(1);
            }
            trace_free(&tr);
        }
        out[r] = (bench_now() - t0) / inner;
    }
}

static void report(const char *name, double *t, int reps, double target, const char *unit,
                   double unit_scale)
{
    for (int i = 0; i < reps; i++) t[i] *= unit_scale;
    char label[96];
    snprintf(label, sizeof label, "core forward: %s", name);
    bench_row(label, t, reps, target, unit, 1);
}

static bool parse(Lesson *ls, const char *name, const char *json)
{
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(ls, name, json, strlen(json), err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return false;
    }
    return true;
}

// ---- PyTorch, as a child process answering "N" with N times -----------------

typedef struct Torch {
    pid_t pid;
    FILE *in, *out; // to its stdin, from its stdout
    char version[32], blas[32];
} Torch;

static bool torch_start(Torch *t, char *why, size_t why_len)
{
    int to[2], from[2];
    snprintf(why, why_len, "python3 not found");
    if (pipe(to) != 0 || pipe(from) != 0) return false;
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    t->pid = fork();
    if (t->pid < 0) return false;
    if (t->pid == 0) {
        dup2(to[0], 0), dup2(from[1], 1);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        execlp(py, py, "tests/bench/torch_forward.py", (char *)NULL);
        printf("skip: cannot run %s\n", py);
        _exit(127);
    }
    close(to[0]), close(from[1]);
    t->in = fdopen(to[1], "w"), t->out = fdopen(from[0], "r");
    char line[256] = "";
    if (!t->in || !t->out || !fgets(line, sizeof line, t->out) ||
        sscanf(line, "ready %31s %31s", t->version, t->blas) != 2) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(why, why_len, "%s", line[0] ? line : "torch_forward.py gave no answer");
        if (t->in) fclose(t->in);
        if (t->out) fclose(t->out);
        waitpid(t->pid, NULL, 0);
        return false;
    }
    return true;
}

// n forward passes in PyTorch; their times (ms) into out.
static bool torch_run(Torch *t, int n, double *out)
{
    fprintf(t->in, "%d\n", n);
    fflush(t->in);
    for (int i = 0; i < n; i++)
        if (fscanf(t->out, "%lf", &out[i]) != 1) return false;
    return true;
}

static void torch_stop(Torch *t)
{
    fclose(t->in);
    fclose(t->out);
    waitpid(t->pid, NULL, 0);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, bench_cmp);
    return x[n / 2];
}

// ---- the largest legal lesson, in a child: its time and its peak memory -----

static const char *LARGEST =
    "{\"title\": \"largest\", \"model\": {\"d_model\": 1024, \"n_heads\": 4, \"d_k\": 1024, \"d_v\": 1024,"
    " \"residual_norm\": true, \"ffn_hidden\": 4096}, \"input\": {\"query\": {\"shape\": [1, 1024, 1024],"
    " \"arange\": [-1, 1, 0.0000019073486328125]}}, \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}";

static int bench_largest(void)
{
    enum { REPS = 3 };
    int fd[2];
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(fd[0]);
        Lesson ls;
        if (!parse(&ls, "largest", LARGEST)) _exit(1);
        double t[REPS];
        time_forward(&ls, REPS, 1, t);
        if (write(fd[1], t, sizeof t) != (ssize_t)sizeof t) _exit(1);
        lesson_free(&ls);
        _exit(0);
    }
    close(fd[1]);
    double t[REPS];
    ssize_t got = read(fd[0], t, sizeof t);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got != (ssize_t)sizeof t)
        return 1;
    report("largest lesson, L=1024 C=1024 H=4 d=1024 F=4096", t, REPS, 1.0, "s", 1);
    bench_info("peak memory (max RSS), largest lesson: load + forward", (double)ru.ru_maxrss / 1024.0, "MiB");
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); // a PyTorch child that dies is reported, not fatal
    Lesson small;
    char err[LESSON_ERR_MAX];
    if (!lesson_load(&small, "lessons/arange-2x4x4.json", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    enum { REPS = 201 };
    double t[REPS];
    time_forward(&small, REPS, 2000, t);
    report("arange 2x4x4 (B=2 L=4 C=4 H=2)", t, REPS, 2.0, "us", 1e6);

    const char *big_json = "{\"title\": \"bench\", \"model\": {\"d_model\": 256, \"n_heads\": 8},"
                           " \"input\": {\"query\": {\"shape\": [1, 256, 256], \"arange\": [-1, 1, 0.000030517578125]}},"
                           " \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}";
    Lesson big;
    if (!parse(&big, "bench-big", big_json)) return 1;
    // Rounds alternate the core and PyTorch (when present): the machine's load
    // changes from second to second, so each round's ratio compares like with like.
    enum { ROUNDS = 9, PER = 9 };
    static double core[ROUNDS * PER], torch[ROUNDS * PER], ratio[ROUNDS];
    Torch py;
    char why[256];
    bool have_torch = torch_start(&py, why, sizeof why);
    for (int r = 0; r < ROUNDS; r++) {
        time_forward(&big, PER, 1, core + r * PER);
        for (int i = 0; i < PER; i++) core[r * PER + i] *= 1e3;
        if (have_torch && !torch_run(&py, PER, torch + r * PER)) {
            snprintf(why, sizeof why, "torch_forward.py stopped answering");
            torch_stop(&py);
            have_torch = false;
        }
        if (have_torch) {
            double c[PER], p[PER];
            memcpy(c, core + r * PER, sizeof c);
            memcpy(p, torch + r * PER, sizeof p);
            ratio[r] = median(p, PER) / median(c, PER);
        }
    }
    bench_row("core forward: B=1 L=256 C=256 H=8, causal", core, ROUNDS * PER, 7.0, "ms", 1);
    if (have_torch) {
        torch_stop(&py);
        char label[96];
        snprintf(label, sizeof label, "PyTorch %s + %s, the same forward", py.version, py.blas);
        bench_info(label, median(torch, ROUNDS * PER), "ms");
        // per round: PyTorch's median / the core's median
        bench_row("ratio PyTorch / core (>= 1: core no slower)", ratio, ROUNDS, 1.0, "x", 0);
    } else {
        printf("| PyTorch: skipped (%s) | | | | |\n", why);
    }
    lesson_free(&small);
    lesson_free(&big);
    return bench_largest();
}
