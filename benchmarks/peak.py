"""The machine's own peak for the benchmarks' "% of sgemm": a 1024^3 float32 matmul on torch's threads."""

from __future__ import annotations

import time

import torch


def sgemm_gflops(seconds: float) -> float:
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        n += 1
    return 2 * 1024 ** 3 * n / (time.perf_counter() - start) / 1e9
