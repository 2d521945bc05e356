// tensor_gemm.c — the core's matrix products (tensor.h: tensor_linear, tensor_matmul,
// tensor_matmul_bt, tensor_matmul_zero_tail): blocked, vectorised, on the thread pool.
#include "tensor.h"

#include "parallel.h"
#include "tensor_simd.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

// Matrix products keep every output's sum in index order (p = 0, 1, ..., K-1),
// exactly like a plain dot product: each output starts at 0.0f and adds the
// products a·b one by one, each product and each sum rounded to float (the core
// is compiled with -ffp-contract=off, so no multiply-add is ever fused). Results
// therefore do not depend on the blocking, on the vector width or on the number
// of threads: every path below gives the in-order dot product bit for bit.
//
// Speed comes from computing a tile of MR rows × NR columns at once: the NR
// columns side by side in vector registers, the MR rows as independent sums (no
// reassociation anywhere). B is packed into panels of NR columns, (KC, NR) each;
// a long K is walked in blocks of KC, the running sums kept in C between blocks.
// The tile kernel is compiled for AVX-512, AVX2 and plain x86-64 and picked at
// load time for the CPU it runs on (target_clones; the same numbers on each).
//
// The page (WebAssembly SIMD128) takes tiles of 4 rows × 8 columns: 8 accumulators of 128
// bits. V8 gives them x86-64's 16 vector registers (one its scratch); the desktop's 6 × 16
// tile is 24 of them, which V8 spills to memory at every step: the 256×256×256 product took
// 1.63 ms with it and 0.90 ms with 4 × 8 in node (6 × 8: 1.35, 3 × 8: 0.98, 2 × 16: 0.96).
#ifdef __wasm_simd128__
#define GEMM_NR 8
#define GEMM_MR 4
#else
#define GEMM_NR 16
#define GEMM_MR 6
#endif
enum { NR = GEMM_NR, MR = GEMM_MR, KC = 256, MC = 96, PANELS = 16 };

typedef struct Gemm {
    float *c;           // (m, n)
    const float *a;     // (m, k)
    const float *b;     // (n, k) when bt, else (k, n)
    const float *bias;  // (n) added to each finished sum, or NULL
    bool bt;
    int m, k, n;
    int group;          // column panels per task (gemm)
    // zero_tail: a tile of MR rows of a whose values from some p on are all ±0 (the
    // softmax of causal scores) stops its sums there. Every later product is then
    // ±0 where b is finite (b_finite_from ≤ p: 0·inf would be NaN), and adding ±0
    // changes no sum: a nonzero s stays s, and a zero s is +0 (the sums start at +0,
    // and in round-to-nearest x + y is −0 only when both are −0), which +0 + ±0 keeps.
    bool zero_tail;
    int b_finite_from;  // b's values for p ≥ this are all finite (zero_tail)
    float *bpack;       // bt: bᵀ packed in panels of NR columns (pack_bt_task), else NULL
    bool wide;          // the 16-wide kernel (AVX-512)
    bool narrow;        // the 4-wide kernel (x86-64 without AVX2: the default clone's CPUs)
} Gemm;

// c[i, j0:j0+jn] for rows i0 ≤ i < i0 + rows (rows ≤ MR), over p in [k0, k0 + kc):
// continues the sums stored in c unless first; adds the bias when last. With
// rows == MR (a constant after inlining) every accumulator stays in a register.
// A row's NR columns are NR / width vectors VT: two Vec8 (AVX2's registers; GCC splits a
// 16-wide generic vector badly on AVX2: every sum went through the stack, 47 ms for the
// L = 256 forward instead of 6), or one Vec16 in the AVX-512 kernel (half the instructions:
// a broadcast and a load serve 16 columns). The same products and sums in the same order.
#define GEMM_TILE(NAME, VT, MR)                                                                             \
    static inline __attribute__((always_inline)) void NAME(const Gemm *g, const float *ap, const float *bp, \
                                                           size_t ldb, int i0, const int rows, int j0,      \
                                                           int jn, int kc, bool first, bool last)           \
    {                                                                                                       \
        enum { NV = NR * sizeof(float) / sizeof(VT), VW = sizeof(VT) / sizeof(float) };                     \
        VT acc[MR][NV], b[NV];                                                                              \
        const size_t n = (size_t)g->n;                                                                      \
        for (int r = 0; r < rows && r < MR; r++) {                                                          \
            const float *cr = g->c + (size_t)(i0 + r) * n + j0;                                             \
            if (first) {                                                                                    \
                for (int v = 0; v < NV; v++) acc[r][v] = (VT){0};                                           \
            } else if (jn == NR) {                                                                          \
                for (int v = 0; v < NV; v++) memcpy(&acc[r][v], cr + v * VW, sizeof(VT));                   \
            } else {                                                                                        \
                float t[NR] = {0};                                                                          \
                memcpy(t, cr, (size_t)jn * sizeof(float));                                                  \
                for (int v = 0; v < NV; v++) memcpy(&acc[r][v], t + v * VW, sizeof(VT));                    \
            }                                                                                               \
        }                                                                                                   \
        for (int p = 0; p < kc; p++) {                                                                      \
            for (int v = 0; v < NV; v++) memcpy(&b[v], bp + (size_t)p * ldb + v * VW, sizeof(VT));          \
            for (int r = 0; r < rows && r < MR; r++) {                                                      \
                const float av = ap[(size_t)r * KC + p]; /* one address register: r·KC a displacement */    \
                for (int v = 0; v < NV; v++) acc[r][v] += av * b[v]; /* a product, then a sum */            \
            }                                                                                               \
        }                                                                                                   \
        if (last && g->bias) {                                                                              \
            float t[NR] = {0};                                                                              \
            memcpy(t, g->bias + j0, (size_t)jn * sizeof(float));                                            \
            for (int v = 0; v < NV; v++) memcpy(&b[v], t + v * VW, sizeof(VT));                             \
            for (int r = 0; r < rows && r < MR; r++)                                                        \
                for (int v = 0; v < NV; v++) acc[r][v] += b[v];                                             \
        }                                                                                                   \
        for (int r = 0; r < rows && r < MR; r++) {                                                          \
            float *cr = g->c + (size_t)(i0 + r) * n + j0;                                                   \
            if (jn == NR) {                                                                                 \
                for (int v = 0; v < NV; v++) memcpy(cr + v * VW, &acc[r][v], sizeof(VT));                   \
            } else {                                                                                        \
                float t[NR];                                                                                \
                for (int v = 0; v < NV; v++) memcpy(t + v * VW, &acc[r][v], sizeof(VT));                    \
                memcpy(cr, t, (size_t)jn * sizeof(float));                                                  \
            }                                                                                               \
        }                                                                                                   \
    }

typedef float Vec16 __attribute__((vector_size(16 * sizeof(float))));
typedef float Vec4 __attribute__((vector_size(4 * sizeof(float))));
GEMM_TILE(gemm_tile, Vec8, MR)
#if GEMM_NR == 16
GEMM_TILE(gemm_tile16, Vec16, 2 * MR)
#else // (the page: no 16-wide kernel, wide is never set; the name stands for the 8-wide one)
#define gemm_tile16 gemm_tile
#endif
// x86-64 without AVX2 has 16 registers of 4 floats: an 8-wide vector there is two halves
// GCC built through the stack (the broadcast stored a float at a time, then loaded whole:
// the L = 256 forward took 2.2-3.3 s instead of ~0.1), so its tiles are 3 rows of 4 vectors
// of 4 (12 accumulators and 4 values of B in registers), two for the 6 rows of MR
GEMM_TILE(gemm_tile4, Vec4, MR / 2)

// Rows i0 ≤ i < i0 + rows (rows ≤ MR) with the 4-wide tile: up to two tiles of MR / 2 rows.
static inline __attribute__((always_inline)) void gemm_tile_narrow(const Gemm *g, const float *ap, const float *bp,
                                                                   size_t ldb, int i0, int rows, int j0, int jn,
                                                                   int kc, bool first, bool last)
{
    enum { H = MR / 2 };
    if (rows >= H)
        gemm_tile4(g, ap, bp, ldb, i0, H, j0, jn, kc, first, last);
    else
        gemm_tile4(g, ap, bp, ldb, i0, rows, j0, jn, kc, first, last);
    if (rows == MR)
        gemm_tile4(g, ap + (size_t)H * KC, bp, ldb, i0 + H, H, j0, jn, kc, first, last);
    else if (rows > H)
        gemm_tile4(g, ap + (size_t)H * KC, bp, ldb, i0 + H, rows - H, j0, jn, kc, first, last);
}

// Rows [i0, i1) (at most MC) × the NR-column panels [p0, p1), one block of KC
// values of k at a time: A's rows copied once per block (each row's kc values at
// KC apart, so the kernel reads a tile's MR rows from one address register plus
// constant offsets, and rows of 4 KiB in a (C = 1024) never fight over L1 sets),
// then each panel of B (packed by gemm when bt, else read in place or packed here)
// and its tiles computed.
// Each thread's copied rows (one for all the clones). The page has one thread, and its core is
// built with bulk memory (web.mk: a row's memcpy one memory.copy, not a call out to JavaScript);
// clang then keeps _Thread_local, which wasm-ld accepts only with atomics: a plain static there.
#if defined(__wasm__) && !defined(__wasm_atomics__)
static float apack[MC * KC];
#else
static _Thread_local float apack[MC * KC];
#endif

static inline __attribute__((always_inline)) void gemm_block_body(const Gemm *g, int i0, int i1, int p0, int p1,
                                                                   const bool wide, const bool narrow)
{
    float pack[KC * NR]; // b[k0:k0+kc, j0:j0+NR] of a last, narrower panel, zero past jn
    int tile_kc[MC / MR]; // the values of p each tile of rows sums in this block
    const size_t n = (size_t)g->n, k = (size_t)g->k;
    for (int k0 = 0; k0 < g->k; k0 += KC) {
        const int kc = g->k - k0 < KC ? g->k - k0 : KC;
        for (int i = i0; i < i1; i += MR) {
            float *t = apack + (size_t)(i - i0) * KC;
            const int rows = i1 - i < MR ? i1 - i : MR;
            int end = 0; // 1 + the last p of the block where a row of the tile is not ±0
            for (int r = 0; r < rows; r++) {
                const float *ar = g->a + (size_t)(i + r) * k + k0;
                memcpy(t + (size_t)r * KC, ar, (size_t)kc * sizeof(float));
                if (g->zero_tail) end = last_nonzero(ar, end, kc);
            }
            if (g->zero_tail) {
                if (end < g->b_finite_from - k0) end = g->b_finite_from - k0 < kc ? g->b_finite_from - k0 : kc;
                tile_kc[(i - i0) / MR] = end;
            } else {
                tile_kc[(i - i0) / MR] = kc;
            }
        }
        const bool first = k0 == 0, last = k0 + kc >= g->k;
        for (int pj = p0; pj < p1; pj++) {
            const int j0 = pj * NR, jn = g->n - j0 < NR ? g->n - j0 : NR;
            const float *bp = pack;
            size_t ldb = NR;
            if (g->bpack) { // bᵀ's panel, packed once for every task (gemm)
                bp = g->bpack + ((size_t)pj * k + (size_t)k0) * NR;
            } else if (jn == NR) { // b's rows are the panel's rows already
                bp = g->b + (size_t)k0 * n + j0;
                ldb = n;
            } else {
                for (int p = 0; p < kc; p++) {
                    float *row = pack + (size_t)p * NR;
                    memcpy(row, g->b + (size_t)(k0 + p) * n + j0, (size_t)jn * sizeof(float));
                    for (int jj = jn; jj < NR; jj++) row[jj] = 0.0f;
                }
            }
            int i = i0;
            if (wide)
                for (; i + 2 * MR <= i1; i += 2 * MR) {
                    const int t = (i - i0) / MR, tk = tile_kc[t] > tile_kc[t + 1] ? tile_kc[t] : tile_kc[t + 1];
                    gemm_tile16(g, apack + (size_t)(i - i0) * KC, bp, ldb, i, 2 * MR, j0, jn, tk, first, last);
                }
            for (; i + MR <= i1; i += MR) {
                const float *ap = apack + (size_t)(i - i0) * KC;
                if (wide)
                    gemm_tile16(g, ap, bp, ldb, i, MR, j0, jn, tile_kc[(i - i0) / MR], first, last);
                else if (narrow)
                    gemm_tile_narrow(g, ap, bp, ldb, i, MR, j0, jn, tile_kc[(i - i0) / MR], first, last);
                else
                    gemm_tile(g, ap, bp, ldb, i, MR, j0, jn, tile_kc[(i - i0) / MR], first, last);
            }
            if (i < i1) {
                const float *ap = apack + (size_t)(i - i0) * KC;
                if (wide)
                    gemm_tile16(g, ap, bp, ldb, i, i1 - i, j0, jn, tile_kc[(i - i0) / MR], first, last);
                else if (narrow)
                    gemm_tile_narrow(g, ap, bp, ldb, i, i1 - i, j0, jn, tile_kc[(i - i0) / MR], first, last);
                else
                    gemm_tile(g, ap, bp, ldb, i, i1 - i, j0, jn, tile_kc[(i - i0) / MR], first, last);
            }
        }
    }
}

// The 8-wide kernel, one clone per CPU (target_clones); the 16-wide one for AVX-512 CPUs
// (unless TENSOR_AVX2_AT_MOST), compiled for AVX-512 only and picked by gemm.
KERNEL_CLONES static void gemm_block(const Gemm *g, int i0, int i1, int p0, int p1)
{
    gemm_block_body(g, i0, i1, p0, p1, false, false);
}

// The 4-wide kernel, for x86-64 CPUs without AVX2 (the ones the default clone is for; compiled
// for plain x86-64), picked by gemm.
#if defined(__x86_64__)
#define GEMM_NARROW 1
static void gemm_block_narrow(const Gemm *g, int i0, int i1, int p0, int p1)
{
    gemm_block_body(g, i0, i1, p0, p1, false, true);
}
#endif

#if defined(__x86_64__) && !defined(TENSOR_AVX2_AT_MOST) && !defined(TENSOR_DEFAULT_ONLY) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define GEMM_WIDE 1
__attribute__((target("avx512f"))) static void gemm_block_wide(const Gemm *g, int i0, int i1, int p0, int p1)
{
    gemm_block_body(g, i0, i1, p0, p1, true, false);
}
#endif
#endif

// r[0..7] (8 rows of 8) transposed in place: r[q][i] becomes the old r[i][q].
static inline __attribute__((always_inline)) void transpose8(Vec8 *r)
{
    Vec8 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; h++) {
            u[i + h * 2] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            u[i + h * 2 + 1] = __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int q = 0; q < 4; q++) {
        r[q] = __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[q + 4] = __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

// Panels [t·PANELS, (t+1)·PANELS) of bᵀ (b is (n, k)): panel pj holds bᵀ[0:k, pj·NR : pj·NR + NR]
// p-major, zero past n. Packed once per product, not once per task (L = 256: 3 times fewer
// copies), 8 × 8 values at a time (a transposition in registers; 16 values of a row, one
// cache line, read together).
KERNEL_CLONES static void pack_bt(const Gemm *g, int t)
{
    const int panels = (g->n + NR - 1) / NR, p1 = (t + 1) * PANELS < panels ? (t + 1) * PANELS : panels;
    const size_t k = (size_t)g->k;
    for (int pj = t * PANELS; pj < p1; pj++) {
        float *dst = g->bpack + (size_t)pj * k * NR;
        const float *b = g->b + (size_t)pj * NR * k;
        const int jn = g->n - pj * NR < NR ? g->n - pj * NR : NR;
        size_t p = 0;
        for (; p + 16 <= k; p += 16)
            for (int half = 0; half < NR; half += 8)
                for (size_t sub = p; sub < p + 16; sub += 8) {
                    Vec8 r[8];
                    for (int q = 0; q < 8; q++)
                        if (half + q < jn)
                            load8(r[q], b + (size_t)(half + q) * k + sub);
                        else
                            r[q] = (Vec8){0};
                    transpose8(r);
                    for (int q = 0; q < 8; q++) store8(dst + (sub + (size_t)q) * NR + half, r[q]);
                }
        for (; p < k; p++)
            for (int jj = 0; jj < NR; jj++) dst[p * NR + (size_t)jj] = jj < jn ? b[(size_t)jj * k + p] : 0.0f;
    }
}

static void pack_bt_task(void *ctx, int t) { pack_bt(ctx, t); }

// Task t: the rows of chunk t / groups (MC rows each), the panels of group t % groups.
static void gemm_task(void *ctx, int t)
{
    const Gemm *g = ctx;
    const int panels = (g->n + NR - 1) / NR, groups = (panels + g->group - 1) / g->group;
    const int i0 = t / groups * MC, i1 = i0 + MC < g->m ? i0 + MC : g->m;
    const int p0 = t % groups * g->group, p1 = p0 + g->group < panels ? p0 + g->group : panels;
#ifdef GEMM_WIDE
    if (g->wide) {
        gemm_block_wide(g, i0, i1, p0, p1);
        return;
    }
#endif
#ifdef GEMM_NARROW
    if (g->narrow) {
        gemm_block_narrow(g, i0, i1, p0, p1);
        return;
    }
#endif
    gemm_block(g, i0, i1, p0, p1);
}

// The plain loops, for products too small to pay for packing: the same sums.
static void gemm_naive(const Gemm *g)
{
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            const float *ai = g->a + (size_t)i * g->k;
            float s = 0.0f;
            if (g->bt) {
                const float *bj = g->b + (size_t)j * g->k;
                for (int p = 0; p < g->k; p++) s += ai[p] * bj[p];
            } else {
                for (int p = 0; p < g->k; p++) s += ai[p] * g->b[(size_t)p * g->n + j];
            }
            if (g->bias) s += g->bias[j];
            g->c[(size_t)i * g->n + j] = s;
        }
}

static void gemm(const Gemm *g)
{
    const double work = (double)g->m * g->n * g->k;
    if (work < 4096) {
        gemm_naive(g);
        return;
    }
    // PANELS panels per task (A packed once for them), fewer when that would leave
    // under 8 tasks to share among the threads (L = 256: 3 chunks of rows)
    const int panels = (g->n + NR - 1) / NR, chunks = (g->m + MC - 1) / MC;
    Gemm job = *g;
    job.group = PANELS;
#ifdef GEMM_WIDE
    __builtin_cpu_init();
    job.wide = __builtin_cpu_supports("avx512f");
#endif
#ifdef GEMM_NARROW // where tensor_kernels() says "default"
#ifdef TENSOR_DEFAULT_ONLY
    job.narrow = true;
#else
    __builtin_cpu_init();
    job.narrow = !__builtin_cpu_supports("avx2");
#endif
#endif
    if (job.zero_tail) { // b's rows from b_finite_from on hold only finite values
        job.b_finite_from = 0;
        for (int p = g->k - 1; p >= 0 && job.b_finite_from == 0; p--)
            for (int j = 0; j < g->n; j++)
                if (!isfinite(g->bt ? g->b[(size_t)j * g->k + (size_t)p] : g->b[(size_t)p * g->n + (size_t)j])) {
                    job.b_finite_from = p + 1;
                    break;
                }
    }
    while (job.group > 2 && chunks * ((panels + job.group - 1) / job.group) < 8) job.group /= 2;
    const int groups = (panels + job.group - 1) / job.group;
    Tensor packed = {0};
    if (g->bt) {
        const int shape[2] = {panels * NR, g->k};
        if (!tensor_init_raw(&packed, 2, shape)) { // out of memory: the plain loops need none
            gemm_naive(g);
            return;
        }
        job.bpack = packed.data;
        parallel_for((panels + PANELS - 1) / PANELS, (double)panels * NR * g->k, pack_bt_task, &job);
    }
    parallel_for(groups * chunks, work, gemm_task, &job);
    tensor_free(&packed);
}

void tensor_matmul_bt(float *c, const float *a, const float *b, int m, int k, int n)
{
    Gemm g = {c, a, b, NULL, true, m, k, n, 0, false, 0, NULL, false, false};
    gemm(&g);
}

void tensor_matmul(float *c, const float *a, const float *b, int m, int k, int n)
{
    Gemm g = {c, a, b, NULL, false, m, k, n, 0, false, 0, NULL, false, false};
    gemm(&g);
}

void tensor_matmul_zero_tail(float *c, const float *a, const float *b, int m, int k, int n)
{
    Gemm g = {c, a, b, NULL, false, m, k, n, 0, true, 0, NULL, false, false};
    gemm(&g);
}

void tensor_linear(float *y, const float *x, const float *w, const float *b, int n, int in, int out)
{
    Gemm g = {y, x, w, b, true, n, in, out, 0, false, 0, NULL, false, false};
    gemm(&g);
}
