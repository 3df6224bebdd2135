"""Device choice, seeding, thread and allocator settings: the same code on a GPU node and on a laptop CPU."""

import ctypes
import ctypes.util
import os
import random

import numpy as np
import torch


def pick_device(requested: str = "auto") -> torch.device:
    """'auto' takes the GPU when one is visible, else the CPU; 'cpu'/'cuda' force one."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device={requested!r} was requested but no CUDA device is visible")
    return torch.device(requested)


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch globally (the original code's `_seed_all`)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def set_threads(threads: int | None) -> None:
    """Respect the scheduler's core count (Snakemake `threads`, SLURM `--cpus-per-task`)."""
    n = threads or int(os.environ.get("SLURM_CPUS_PER_TASK", 0)) or None
    if n:
        torch.set_num_threads(n)


def enable_determinism() -> None:
    """Same params, same numbers: deterministic kernels where torch offers them."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    if torch.cuda.is_available():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def keep_freed_memory() -> bool:
    """Make glibc reuse freed CPU buffers instead of returning them to the OS.

    Training allocates the same few-MB activations every step; by default glibc maps each one afresh
    and the kernel zero-fills every page on first touch (540k page faults for 100 steps of the
    DPC Exp 5 MLP arm, a quarter of its time). Buffers up to 32 MB (glibc's maximum) then come from
    the heap, and the heap is never trimmed. Returns False where libc is not glibc (nothing changed).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
    return all(mallopt(opt, value) == 1 for opt, value in
               ((M_MMAP_THRESHOLD, 32 * 2**20), (M_TRIM_THRESHOLD, 2**31 - 1), (M_TOP_PAD, 64 * 2**20)))


def prepare(threads: int | None) -> None:
    """Set-up of every job's process: its cores, deterministic kernels, buffer reuse."""
    set_threads(threads)
    enable_determinism()
    keep_freed_memory()
