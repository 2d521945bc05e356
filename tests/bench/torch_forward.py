#!/usr/bin/env python3
"""PyTorch's times for bench_core: the anchor, torch.nn.MultiheadAttention, and the
op-by-op forward with the same stages as the core (x·Wᵀ + b, view/transpose into
heads, Q·Kᵀ / √d_k, masked_fill(mask == 0, -1e9), softmax, attn·V, concat, the output
projection). float32, B = 1, causal, no autograd.

The anchor is what a user who wants attention numbers calls:
    m = nn.MultiheadAttention(C, H, batch_first=True)
    m(x, x, x, attn_mask=causal)        # x = randn(1, L, C), causal a bool (L, L) mask
under torch.no_grad(), with its defaults (need_weights=True: it also returns the
head-averaged weights).

Threads: OpenBLAS reads OPENBLAS_NUM_THREADS once, when it is loaded, so bench_core
starts one process of this script per BLAS thread count; torch.set_num_threads (the
intra-op threads) is set per request. bench_core tries every pair and keeps the best.

Protocol on stdin/stdout, so that bench_core can alternate rounds with the core on a
noisy machine: prints "ready <torch version> <BLAS>", then for each line
"KIND T L C H N" (KIND mha or ops, T intra-op threads) runs N forwards (after 3
warm-ups the first time a KIND/T/shape is asked for) and prints their times in ms on
one line. Exits 3 with a line "skip: ..." when torch is not installed (CI machines
lack it).
"""
import os
import sys
import time

try:
    import torch
except ImportError:
    print("skip: python3-torch is not installed", flush=True)
    sys.exit(3)


def blas_name():
    """The BLAS library torch's process has loaded (Debian's libblas.so.3 is an alternative)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower()}
    except OSError:
        return "unknown-BLAS"
    for path in libs:
        real = os.path.realpath(path)
        if "openblas" in real:
            return "OpenBLAS"
        if "blis" in real:
            return "BLIS"
        if "mkl" in real:
            return "MKL"
    return "reference-BLAS" if libs else "no-BLAS"


def make_mha(L, C, H):
    torch.manual_seed(1)
    m = torch.nn.MultiheadAttention(C, H, batch_first=True).eval()
    x = torch.randn(1, L, C)
    causal = torch.ones(L, L, dtype=torch.bool).triu(1)  # True: not allowed to attend
    return lambda: m(x, x, x, attn_mask=causal)


def make_ops(L, C, H):
    B, d = 1, C // H
    g = torch.Generator().manual_seed(1)
    x = torch.linspace(-1, 1, B * L * C).reshape(B, L, C)
    bound = 1 / C ** 0.5
    wq, wk, wv, wo = [(torch.rand(C, C, generator=g) * 2 - 1) * bound for _ in range(4)]
    bq, bk, bv, bo = [(torch.rand(C, generator=g) * 2 - 1) * bound for _ in range(4)]
    mask = torch.tril(torch.ones(L, L))
    scale = d ** 0.5
    F = torch.nn.functional

    def forward():
        q, k, v = F.linear(x, wq, bq), F.linear(x, wk, bk), F.linear(x, wv, bv)
        qh = q.view(B, L, H, d).transpose(1, 2).contiguous()
        kh = k.view(B, L, H, d).transpose(1, 2).contiguous()
        vh = v.view(B, L, H, d).transpose(1, 2).contiguous()
        scores = qh @ kh.transpose(-2, -1) / scale
        masked = scores.masked_fill(mask == 0, -1e9)
        attn = torch.softmax(masked, dim=-1)
        head_out = attn @ vh
        concat = head_out.transpose(1, 2).contiguous().view(B, L, C)
        return F.linear(concat, wo, bo)

    return forward


def main():
    made = {}
    print("ready", torch.__version__.split("+")[0], blas_name(), flush=True)
    with torch.no_grad():
        for line in sys.stdin:
            kind, threads, L, C, H, n = line.split()
            threads, L, C, H, n = int(threads), int(L), int(C), int(H), int(n)
            torch.set_num_threads(threads)
            key = (kind, threads, L, C, H)
            if key not in made:
                made[key] = (make_mha if kind == "mha" else make_ops)(L, C, H)
                for _ in range(3):
                    made[key]()
            forward = made[key]
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                forward()
                times.append((time.perf_counter() - t0) * 1e3)
            print(" ".join(f"{t:.4f}" for t in times), flush=True)


if __name__ == "__main__":
    main()
