"""Device choice, seeding and thread settings: the same code on a GPU node and on a laptop CPU."""

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
