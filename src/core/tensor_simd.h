// tensor_simd.h — what tensor.c and tensor_gemm.c share (internal to the core): the
// 8-wide vectors the kernels are written with and the clones they are compiled as.
#ifndef ATTNVIZ_TENSOR_SIMD_H
#define ATTNVIZ_TENSOR_SIMD_H

#include <stdbool.h>
#include <string.h>

// A tile row's NR columns are two vectors of 8 (one AVX2 register each): GCC
// splits a 16-wide generic vector badly on AVX2 (every sum went through the
// stack: 47 ms for the L = 256 forward instead of 6).
typedef float Vec8 __attribute__((vector_size(8 * sizeof(float))));
typedef int Vec8i __attribute__((vector_size(8 * sizeof(int))));

// TENSOR_AVX2_AT_MOST (make bench's bench_core_avx2 only): no avx512f clone, so that an
// AVX-512 machine runs and times the avx2 one, the clone of the AVX2-only machines.
// TENSOR_DEFAULT_ONLY (bench_core_default): no clone at all, only the default one's code
// (plain x86-64), which an AVX2 or AVX-512 machine then times natively.
#if defined(__x86_64__) && defined(__has_attribute) && !defined(TENSOR_DEFAULT_ONLY)
#if __has_attribute(target_clones)
#ifdef TENSOR_AVX2_AT_MOST
#define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#endif
#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif

// (macros: a function returning a vector would change the ABI between the clones)
#define load8(dst, p) memcpy(&(dst), (p), sizeof(Vec8))
#define store8(p, v) memcpy((p), &(v), sizeof(Vec8))

// 1 + the last p in [from, kc) where ar[p] is not ±0, or from (8 values compared at once;
// NaN counts as not 0).
static inline __attribute__((always_inline)) int last_nonzero(const float *ar, int from, int kc)
{
    int p = kc;
    for (; p - 8 >= from; p -= 8) {
        Vec8 v;
        load8(v, ar + p - 8);
        const Vec8i nz = v != (Vec8){0};
        unsigned long long q[4];
        memcpy(q, &nz, sizeof q);
        if (q[0] | q[1] | q[2] | q[3]) break;
    }
    for (; p > from; p--)
        if (ar[p - 1] != 0.0f) break;
    return p;
}

#endif
