#define _DEFAULT_SOURCE   // wait4
// bench_core — times the attention core's forward pass (no SDL).
// Prints a table row per case: median and p99 over repeated runs.
//   - the 2×4×4 lesson (must not get slower: no thread is woken for it);
//   - B=1 causal at L=256 (d_model 256, 8 heads) and L=1024 (d_model 1024, 4 heads):
//     the core on one thread and on two, and PyTorch's nn.MultiheadAttention at its
//     best thread setting (tests/bench/torch_forward.py, when python3-torch is
//     installed; every pair of OpenBLAS threads 1/2 × torch.set_num_threads 1/2 is
//     tried first, the winner printed), in alternating rounds so all see the same
//     machine; the ratios PyTorch / core and one thread / two threads per round;
//   - the largest legal lesson (L, d_model at their limits, within the weight budget): its
//     forward time on one thread and on two, and the peak memory of a process that
//     loads and runs it.
// bench_core_avx2 (the same, with tensor.c built without its avx512f clone) times the avx2
// clone against PyTorch on an AVX-512 CPU, natively; elsewhere it says there is nothing to add.
#include <fcntl.h>
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
#include "parallel.h"

// A row with its target, or (goal false) the same median as an info row.
static void row_or_info(bool goal, const char *name, double *t, int n, double target, const char *unit,
                        int lower_is_better)
{
    if (goal) {
        bench_row(name, t, n, target, unit, lower_is_better);
        return;
    }
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    bench_info(name, t[n / 2], unit);
}

// Times `reps` batches of `inner` forward passes; returns per-pass seconds in out[].
static void time_forward(const Lesson *ls, int reps, int inner, double *out)
{
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int k = 0; k < inner; k++) {
            Trace tr;
            trace_init(&tr);
            if (!attn_forward(&ls->cfg, ls->w, &ls->in, &tr)) {
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

// One PyTorch process whose OpenBLAS uses blas_threads threads.
static bool torch_start(Torch *t, int blas_threads, char *why, size_t why_len)
{
    int to[2], from[2];
    snprintf(why, why_len, "python3 not found");
    if (pipe(to) != 0 || pipe(from) != 0) return false;
    // close-on-exec: the next PyTorch process must not inherit this one's pipe ends
    // (it would hold its stdin open, and torch_stop's waitpid would never return)
    for (int i = 0; i < 2; i++) fcntl(to[i], F_SETFD, FD_CLOEXEC), fcntl(from[i], F_SETFD, FD_CLOEXEC);
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    t->pid = fork();
    if (t->pid < 0) return false;
    if (t->pid == 0) {
        char env[16];
        snprintf(env, sizeof env, "%d", blas_threads);
        setenv("OPENBLAS_NUM_THREADS", env, 1);
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

// n forward passes of kind ("mha" or "ops") in PyTorch with `threads` intra-op
// threads, at B=1 L C H; their times (ms) into out.
static bool torch_run(Torch *t, const char *kind, int threads, int L, int C, int H, int n, double *out)
{
    fprintf(t->in, "%s %d %d %d %d %d\n", kind, threads, L, C, H, n);
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
// Every length and width at its limit (lessons/README.md) within the weight budget of 2²⁴
// floats: 4 heads of 1024 (H·d = 4096) with a feed-forward of 4096 would be 25 M weights, so
// heads of 512 and a feed-forward of 3072 (14.7 M).

static const char *LARGEST =
    "{\"title\": \"largest\", \"model\": {\"d_model\": 1024, \"n_heads\": 4, \"d_k\": 512, \"d_v\": 512,"
    " \"residual_norm\": true, \"ffn_hidden\": 3072}, \"input\": {\"query\": {\"shape\": [1, 1024, 1024],"
    " \"arange\": [-1, 1, 0.0000019073486328125]}}, \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}";

// The largest lesson's forward at `threads` threads in a child process: its times
// and its peak memory. 0 when measured.
static int largest_child(int threads, double *t, int reps, double *maxrss_mib)
{
    int fd[2];
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(fd[0]);
        parallel_set_threads(threads);
        Lesson ls;
        if (!parse(&ls, "largest", LARGEST)) _exit(1);
        time_forward(&ls, reps, 1, t);
        if (write(fd[1], t, sizeof *t * (size_t)reps) != (ssize_t)(sizeof *t * (size_t)reps)) _exit(1);
        lesson_free(&ls);
        _exit(0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], t, sizeof *t * (size_t)reps);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got != (ssize_t)(sizeof *t * (size_t)reps))
        return 1;
    *maxrss_mib = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

static int bench_largest(void)
{
    enum { REPS = 3 };
    double t1[REPS], t2[REPS], rss1, rss2;
    // one thread, then two (the default here), each in a fresh process
    if (largest_child(1, t1, REPS, &rss1) || largest_child(0, t2, REPS, &rss2)) return 1;
    char label[96];
    snprintf(label, sizeof label, "largest lesson L=1024 C=1024 H=4 d=512 F=3072, 1 thread");
    report(label, t1, REPS, 1.5, "s", 1);
    snprintf(label, sizeof label, "largest lesson, %d threads (default)", parallel_threads());
    report(label, t2, REPS, 1.0, "s", 1);
    bench_info("peak memory (max RSS), largest lesson: load + forward", rss2, "MiB");
    return 0;
}

// ---- the core against nn.MultiheadAttention, alternating -----------------------

// The causal case's lesson: B = 1, L tokens of C values (an arange over [-1, 1]), H heads,
// weights from seed 1 (make bench-web runs the same text in the page: --lesson-json).
static void causal_json(char *json, size_t n, int L, int C, int H)
{
    snprintf(json, n,
             "{\"title\": \"bench\", \"model\": {\"d_model\": %d, \"n_heads\": %d},"
             " \"input\": {\"query\": {\"shape\": [1, %d, %d], \"arange\": [-1, 1, %.17g]}},"
             " \"mask\": \"causal\", \"weights\": {\"init\": {\"seed\": 1}}}",
             C, H, L, C, 2.0 / ((double)L * C));
}

typedef struct Setting {
    int blas, threads; // OPENBLAS_NUM_THREADS, torch.set_num_threads
} Setting;

// One causal case: the core on 1 and on `threads` threads, PyTorch at its best setting.
static void bench_case(int L, int C, int H, int rounds, int per, Torch *py, const bool *have, double target_ms,
                       double target_ratio)
{
    char json[512];
    causal_json(json, sizeof json, L, C, H);
    Lesson ls;
    if (!parse(&ls, "bench", json)) exit(1);
    const int threads = parallel_threads() > 1 ? parallel_threads() : 2;
    // PyTorch's best setting: the lowest median of 9 runs (after 3 warm-ups) of each
    Setting best = {0, 0};
    double best_ms = INFINITY, calib[9];
    for (int b = 1; b <= 2; b++)
        for (int th = 1; th <= 2; th++) {
            if (!have[b - 1]) continue;
            if (!torch_run(&py[b - 1], "mha", th, L, C, H, 9, calib)) continue;
            double m = median(calib, 9);
            printf("|   nn.MultiheadAttention L=%d, OpenBLAS %d × torch %d thread(s): %.2f ms | | | | info |\n", L, b, th, m);
            if (m < best_ms) best_ms = m, best = (Setting){b, th};
        }
    enum { MAXN = 256 };
    static double c1[MAXN], c2[MAXN], pt[MAXN], ops[MAXN], ratio[32], gain[32];
    bool torch_ok = best.blas > 0;
    int n_ops = 0, n_ratio = 0;
    static double after[MAXN];
    int n_after = 0;
    for (int r = 0; r < rounds && r < 32 && (r + 1) * per <= MAXN; r++) {
        // PyTorch's OpenBLAS threads spin (busy-wait) for a while after each call:
        // the core measured at once shares the 2 cores with them (measured once per
        // round as an info row), the rows after a pause of 300 ms
        if (r > 0 && torch_ok) {
            parallel_set_threads(threads);
            time_forward(&ls, per, 1, after + n_after);
            for (int i = 0; i < per; i++) after[n_after + i] *= 1e3;
            n_after += per;
            usleep(300000);
        }
        parallel_set_threads(1);
        time_forward(&ls, per, 1, c1 + r * per);
        parallel_set_threads(threads);
        time_forward(&ls, per, 1, c2 + r * per);
        for (int i = 0; i < per; i++) c1[r * per + i] *= 1e3, c2[r * per + i] *= 1e3;
        double a[64], b2[64], p[64];
        memcpy(a, c1 + r * per, sizeof *a * (size_t)per);
        memcpy(b2, c2 + r * per, sizeof *b2 * (size_t)per);
        gain[r] = median(a, per) / median(b2, per);
        if (torch_ok && !torch_run(&py[best.blas - 1], "mha", best.threads, L, C, H, per, pt + r * per)) {
            printf("| PyTorch stopped answering: its rows are left out | | | | |\n");
            torch_ok = false;
        }
        if (torch_ok) {
            memcpy(p, pt + r * per, sizeof *p * (size_t)per);
            memcpy(b2, c2 + r * per, sizeof *b2 * (size_t)per);
            ratio[n_ratio++] = median(p, per) / median(b2, per);
            if (r == 0 && torch_run(&py[best.blas - 1], "ops", best.threads, L, C, H, per, ops)) n_ops = per;
        }
    }
    char label[192];
    // The targets are for x86-64 with AVX2 or AVX-512 (issues 28 and 43); the default clone
    // (bench_core_default: x86-64 without AVX2, e.g. a Celeron) is measured against none.
    const bool goal = strcmp(tensor_kernels(), "default") != 0;
    snprintf(label, sizeof label, "core forward: B=1 L=%d C=%d H=%d causal, 1 thread%s", L, C, H,
             goal ? "" : " (no target without AVX2)");
    row_or_info(goal, label, c1, rounds * per, target_ms * threads, "ms", 1);
    snprintf(label, sizeof label, "core forward: the same, %d threads (default)", threads);
    row_or_info(goal, label, c2, rounds * per, target_ms, "ms", 1);
    snprintf(label, sizeof label, "gain of %d threads: 1-thread / %d-thread time", threads, threads);
    bench_row(label, gain, rounds, 1.0, "x", 0);
    if (n_ratio > 0) {
        snprintf(label, sizeof label, "nn.MultiheadAttention %s + %s, OpenBLAS %d × torch %d threads (best)",
                 py[best.blas - 1].version, py[best.blas - 1].blas, best.blas, best.threads);
        bench_info(label, median(pt, n_ratio * per), "ms");
        if (n_ops) bench_info("PyTorch op by op, the core's stages (same setting)", median(ops, n_ops), "ms");
        if (n_after) {
            snprintf(label, sizeof label, "core, %d threads, right after a PyTorch call (its threads spin)", threads);
            bench_info(label, median(after, n_after), "ms");
        }
        // the spread: every round's ratio (PyTorch's median / the core's median in that round)
        char rounds_txt[32 * 8] = "";
        for (int r = 0; r < n_ratio; r++)
            snprintf(rounds_txt + strlen(rounds_txt), sizeof rounds_txt - strlen(rounds_txt), "%s%.2f",
                     r ? " " : "", ratio[r]);
        snprintf(label, sizeof label, "ratio nn.MultiheadAttention / core, %s clone, L=%d (%d rounds)",
                 tensor_kernels(), L, n_ratio);
        row_or_info(goal, label, ratio, n_ratio, target_ratio, "x", 0);
        // on a machine others load too, the least disturbed run of each says more than medians
        double pt_min = INFINITY, c2_min = INFINITY;
        for (int i = 0; i < n_ratio * per; i++) pt_min = fmin(pt_min, pt[i]);
        for (int i = 0; i < rounds * per; i++) c2_min = fmin(c2_min, c2[i]);
        snprintf(label, sizeof label, "  the fastest runs' ratio (PyTorch %.2f ms / core %.2f ms)", pt_min, c2_min);
        bench_info(label, pt_min / c2_min, "x");
        printf("|   its rounds, in order: %s (min %.2f, max %.2f) | | | | info |\n", rounds_txt, ratio[0],
               ratio[n_ratio - 1]); // (bench_row sorted ratio: its first and last are the min and max)
    }
    lesson_free(&ls);
}

// The two causal cases against nn.MultiheadAttention: L = 256 (ratio target 1.2) and L = 1024 (1.0).
static void bench_against_torch(void)
{
    Torch py[2];
    bool have[2];
    char why[256] = "";
    for (int b = 0; b < 2; b++) have[b] = torch_start(&py[b], b + 1, why, sizeof why);
    if (!have[0] && !have[1]) printf("| PyTorch: skipped (%s) | | | | |\n", why);
    bench_case(256, 256, 8, 9, 9, py, have, 4.0, 1.2);
    bench_case(1024, 1024, 4, 5, 3, py, have, 110.0, 1.0);
    for (int b = 0; b < 2; b++)
        if (have[b]) torch_stop(&py[b]);
}

// bench_core_avx2 (tensor.c built without its avx512f clone) on a CPU with AVX-512, or
// bench_core_default (built with the default clone only) on a CPU with AVX2: it times that
// clone, the one CPUs without those instructions run. 1 when so, 0 when it would repeat
// bench_core (the CPU would pick that clone itself).
static int clone_forced(const char *clone)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (strcmp(tensor_kernels(), clone) != 0) return 0;
    return strcmp(clone, "avx2") == 0 ? __builtin_cpu_supports("avx512f") : __builtin_cpu_supports("avx2");
#else
    (void)clone;
    return 0;
#endif
}

// make bench-web's native side: `--lesson-json L C H` prints the causal case's lesson
// (`--largest-json` the largest lesson's);
// `--forward L C H N` times N forward passes of it on one thread (ms, one line). 2: not these.
static int bench_web_side(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--largest-json") == 0) {
        printf("%s\n", LARGEST);
        return 0;
    }
    if (argc < 5 || (strcmp(argv[1], "--lesson-json") != 0 && strcmp(argv[1], "--forward") != 0)) return 2;
    const int L = atoi(argv[2]), C = atoi(argv[3]), H = atoi(argv[4]), n = argc > 5 ? atoi(argv[5]) : 0;
    char json[512];
    causal_json(json, sizeof json, L, C, H);
    if (strcmp(argv[1], "--lesson-json") == 0) {
        printf("%s\n", json);
        return 0;
    }
    Lesson ls;
    if (n < 1 || n > 1000 || !parse(&ls, "bench", json)) return 1;
    parallel_set_threads(1);
    double t[1000];
    time_forward(&ls, 3, 1, t); // warm-up: a fresh process maps its stages' memory the first time
    time_forward(&ls, n, 1, t);
    for (int i = 0; i < n; i++) printf(i ? " %.4f" : "%.4f", t[i] * 1e3);
    printf("\n");
    lesson_free(&ls);
    return 0;
}

int main(int argc, char **argv)
{
    const int side = bench_web_side(argc, argv);
    if (side != 2) return side;
    signal(SIGPIPE, SIG_IGN); // a PyTorch child that dies is reported, not fatal
    const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    // bench_core_avx2, bench_core_default: that clone forced, the cases against PyTorch only
    const char *forced = strcmp(self, "bench_core_avx2") == 0      ? "avx2"
                         : strcmp(self, "bench_core_default") == 0 ? "default"
                                                                   : NULL;
    if (forced && !clone_forced(forced)) {
        printf("| core kernels, %s clone forced: this CPU would pick it itself (bench_core's rows are the %s clone's) | | | | info |\n",
               forced, tensor_kernels());
        return 0;
    }
    // which of the core's kernel clones these rows measure (the CPU picks it at load time)
    if (forced) {
        printf("| core kernels: the %s clone, forced on this CPU (built %s) | | | | info |\n", forced,
               strcmp(forced, "avx2") == 0 ? "without the avx512f clone" : "with the default clone only");
        bench_against_torch();
        return 0;
    }
    printf("| core kernels: the %s clone (target_clones avx512f / avx2 / default) | | | | info |\n", tensor_kernels());
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
    lesson_free(&small);

    bench_against_torch();
    return bench_largest();
}
