// parallel.c — the core's worker pool (see parallel.h).
//
// The caller of parallel_for works too: with T threads there are T-1 workers.
// They start at the first job large enough to need them, wait on a condition
// variable between jobs, and take tasks from one atomic counter, so a slow
// thread (the machine is shared) never holds the others back.
#include "parallel.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;  // guards everything below but `next`
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;  // a new job, or quit
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;  // the last worker finished the job
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; // held by the thread running a job

static pthread_t workers[PARALLEL_MAX_THREADS];
static int n_workers;      // running
static int configured;     // parallel_set_threads (0 = default)
static bool quit, atexit_done;
static unsigned long generation; // one per job
static int active;         // workers still on the current job
static double min_work = PARALLEL_MIN_WORK;

static ParallelTask job_fn;
static void *job_ctx;
static int job_n;
static atomic_int next;    // the next task to take

#if defined(__wasm__) && !defined(__wasm_atomics__) // the page: one thread (tensor_gemm.c's apack says why)
static bool inside; // this thread is running tasks of a job
#else
static _Thread_local bool inside; // this thread is running tasks of a job
#endif

static void take_tasks(void)
{
    inside = true;
    for (int t; (t = atomic_fetch_add(&next, 1)) < job_n;) job_fn(job_ctx, t);
    inside = false;
}

// arg: the generation when it was started (a job posted before the worker first
// takes the lock is still its to join).
static void *worker_main(void *arg)
{
    unsigned long seen = (unsigned long)(uintptr_t)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!quit && generation == seen) pthread_cond_wait(&wake, &mu);
        if (quit) break;
        seen = generation;
        pthread_mutex_unlock(&mu);
        take_tasks();
        pthread_mutex_lock(&mu);
        if (--active == 0) pthread_cond_signal(&idle);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

static int default_threads(void)
{
    const char *env = getenv("ATTNVIZ_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 1) return v > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : (int)v;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) return 1;
    return cpus > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : (int)cpus;
}

// The thread count, and the smallest job to share (read under the lock).
static int threads_and_min_work(double *min)
{
    pthread_mutex_lock(&mu);
    if (configured == 0) configured = default_threads();
    int n = configured;
    if (min) *min = min_work;
    pthread_mutex_unlock(&mu);
    return n;
}

int parallel_threads(void) { return threads_and_min_work(NULL); }

void parallel_shutdown(void)
{
    pthread_mutex_lock(&busy); // no job is running
    pthread_mutex_lock(&mu);
    quit = true;
    pthread_cond_broadcast(&wake);
    int n = n_workers;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++) pthread_join(workers[i], NULL);
    pthread_mutex_lock(&mu);
    n_workers = 0;
    quit = false;
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
}

void parallel_set_min_work(double work)
{
    pthread_mutex_lock(&mu);
    min_work = work < 0 ? 0 : work;
    pthread_mutex_unlock(&mu);
}

void parallel_set_threads(int n)
{
    if (n < 0) n = 0;
    if (n > PARALLEL_MAX_THREADS) n = PARALLEL_MAX_THREADS;
    parallel_shutdown(); // workers start again, as many as wanted, at the next job
    pthread_mutex_lock(&mu);
    configured = n == 0 ? default_threads() : n;
    pthread_mutex_unlock(&mu);
}

// At exit: join the idle workers (clean for valgrind and LeakSanitizer); a job
// still running on another thread keeps its workers, which end with the process.
static void shutdown_at_exit(void)
{
    if (pthread_mutex_trylock(&busy) != 0) return;
    pthread_mutex_unlock(&busy);
    parallel_shutdown();
}

// fork(): a child has only the thread that forked, so it starts with no workers
// (they start again at its first large job). No job runs across a fork: the
// forking thread takes `busy` first (so a task must not fork).
static void before_fork(void)
{
    pthread_mutex_lock(&busy);
    pthread_mutex_lock(&mu);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
}

static void after_fork_child(void)
{
    n_workers = 0;
    active = 0;
    quit = false;
    pthread_mutex_init(&mu, NULL);
    pthread_mutex_init(&busy, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&idle, NULL);
}

// Starts the missing workers (called with `busy` held). Workers block every
// signal: a signal meant for the process (SIGINT mid-export) reaches a thread
// of the application, never one of these.
static void start_workers(int want)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_mutex_lock(&mu);
    while (n_workers < want && pthread_create(&workers[n_workers], NULL, worker_main, (void *)(uintptr_t)generation) == 0)
        n_workers++;
    bool first = !atexit_done;
    atexit_done = true;
    pthread_mutex_unlock(&mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (first) {
        atexit(shutdown_at_exit);
        pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    }
}

static void run_serial(int n, ParallelTask fn, void *ctx)
{
    for (int t = 0; t < n; t++) fn(ctx, t);
}

void parallel_for(int n, double work, ParallelTask fn, void *ctx)
{
    if (n <= 0) return;
    double min = 0;
    const int threads = n > 1 && !inside ? threads_and_min_work(&min) : 1;
    if (threads < 2 || work < min || pthread_mutex_trylock(&busy) != 0) {
        run_serial(n, fn, ctx);
        return;
    }
    int want = threads - 1;
    if (want > n - 1) want = n - 1; // no more workers than tasks to share
    if (n_workers < want) start_workers(want);
    pthread_mutex_lock(&mu);
    if (n_workers == 0) { // could start none: the caller does it all
        pthread_mutex_unlock(&mu);
        pthread_mutex_unlock(&busy);
        run_serial(n, fn, ctx);
        return;
    }
    job_fn = fn, job_ctx = ctx, job_n = n;
    atomic_store(&next, 0);
    active = n_workers;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&mu);

    take_tasks();

    pthread_mutex_lock(&mu);
    while (active > 0) pthread_cond_wait(&idle, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
}
