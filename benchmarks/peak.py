"""The machine's own peak for the benchmarks' "% of sgemm": a float32 matmul on torch's threads or the GPU."""

from __future__ import annotations

import time

import torch


def sgemm_gflops(seconds: float, device: str = "cpu") -> float:
    """float32 matmul GFLOP/s: 1024^3 on the CPU's threads, 8192^3 on a GPU (TF32 off: true float32,
    as memcap trains)."""
    size = 8192 if device != "cpu" else 1024
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    a @ b
    sync(device)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        n += 1
        sync(device) if n % 4 == 0 else None
    sync(device)
    return 2 * size ** 3 * n / (time.perf_counter() - start) / 1e9


def sync(device) -> None:
    """Wait for the GPU's queued work (timings of asynchronous kernels); nothing on the CPU."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
