#!/usr/bin/env python3
"""PyTorch's time for the forward pass bench_core times: the same stages as the
core computes them (x·Wᵀ + b, view/transpose into heads, Q·Kᵀ / √d_k,
masked_fill(mask == 0, -1e9), softmax, attn·V, concat, the output projection),
B=1 L=256 d_model=256 8 heads, causal, float32, no autograd. PyTorch's own
thread settings are kept: on the 2-core machine of the README it runs one
intra-op thread and its BLAS (OpenBLAS) threads the matrix products;
torch.set_num_threads(2) made it ten times slower there.

Protocol on stdin/stdout, so that bench_core can alternate rounds with the core
on a noisy machine: prints "ready <torch version> <BLAS>", then for each line
"N" read, runs N forwards and prints their times in ms on one line. Exits 3
with a line "skip: ..." when torch is not installed (CI machines lack it).
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


def main():
    B, L, C, H = 1, 256, 256, 8
    d = C // H
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

    with torch.no_grad():
        for _ in range(5):
            forward()
        print("ready", torch.__version__.split("+")[0], blas_name(), flush=True)
        for line in sys.stdin:
            n = int(line)
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                forward()
                times.append((time.perf_counter() - t0) * 1e3)
            print(" ".join(f"{t:.4f}" for t in times), flush=True)


if __name__ == "__main__":
    main()
