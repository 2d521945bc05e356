// parallel.h — a small pool of worker threads for the core's large loops.
//
// parallel_for(n, work, fn, ctx) runs fn(ctx, 0), …, fn(ctx, n-1), each exactly
// once, and returns when all have run. Tasks must write disjoint outputs; then
// the result does not depend on how many threads ran them, nor on which task ran
// where. Small jobs (work below PARALLEL_MIN_WORK) run on the caller alone, so the
// small lessons never wake a thread. Calls from inside a task, or from a second
// thread while the pool is busy, also run on the caller: nesting is safe.
#ifndef ATTNVIZ_PARALLEL_H
#define ATTNVIZ_PARALLEL_H

// Roughly the multiply-adds below which waking the pool costs more than it saves.
#define PARALLEL_MIN_WORK (1 << 18)
#define PARALLEL_MAX_THREADS 64

typedef void (*ParallelTask)(void *ctx, int task);

// work: the job's size in multiply-adds (or a comparable count).
void parallel_for(int n, double work, ParallelTask fn, void *ctx);

// Threads used by parallel_for, the caller included: n from 1 to
// PARALLEL_MAX_THREADS, or 0 for the default (ATTNVIZ_THREADS when set, else the
// online CPUs). Not to be called while a parallel_for runs.
void parallel_set_threads(int n);
int parallel_threads(void);

// The smallest job that is shared among threads (default PARALLEL_MIN_WORK);
// 0 shares every job of more than one task (the tests run each lesson so).
void parallel_set_min_work(double work);

// Stops and joins the workers (also registered with atexit once they start).
void parallel_shutdown(void);

#endif
