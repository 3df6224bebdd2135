"""Device choice, seeding, thread and allocator settings: the same code on a GPU node and on a laptop CPU."""

import ctypes
import ctypes.util
import os
import random

import numpy as np
import torch


def gpus_given() -> dict[str, str]:
    """The variables by which a scheduler handed this job GPUs (empty: none was given): device lists
    (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS, SLURM_STEP_GPUS; "0" is the first GPU) and SLURM's count."""
    env = os.environ
    given = {k: env[k] for k in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS")
             if env.get(k, "").strip() not in ("", "-1", "NoDevFiles")}
    count = env.get("SLURM_GPUS_ON_NODE", "").strip()
    if count.isdigit() and int(count) > 0:
        given["SLURM_GPUS_ON_NODE"] = count
    return given


def why_no_cuda() -> str:
    """Why torch cannot use a GPU here: a CPU-only build, or a CUDA build that sees no device."""
    if torch.version.cuda is None:
        return (f"this torch ({torch.__version__}) is a CPU-only build (torch.version.cuda is None); install "
                f"the CUDA build of the same version on the GPU nodes (README, 'Running on a SLURM cluster')")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    return (f"torch {torch.__version__} is built for CUDA {torch.version.cuda} but sees no device "
            f"(CUDA_VISIBLE_DEVICES={visible!r}; check the driver with nvidia-smi)")


def pick_device(requested: str = "auto", log: bool = True) -> torch.device:
    """'auto' takes the GPU when one is visible, else the CPU; 'cpu'/'cuda' force one. A job that was
    given a GPU (CUDA_VISIBLE_DEVICES, SLURM's GPU variables) but cannot use it stops with the reason
    instead of training on the CPU under a GPU job's time limit. The choice is logged."""
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device={requested!r} was requested but no CUDA device is usable: {why_no_cuda()}")
    if requested == "auto" and not torch.cuda.is_available() and gpus_given():
        raise RuntimeError(f"this job was given a GPU ({gpus_given()}) but cannot use it: {why_no_cuda()}; "
                           f"set device: cpu in params.yaml to train on the CPU on purpose")
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if requested == "auto" else requested)
    if log:
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"{torch.get_num_threads()} CPU threads"
        print(f"device: {device} ({name}; requested {requested!r})", flush=True)
    return device


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
    """Same params, same numbers: deterministic kernels where torch offers them, and full fp32 on a
    GPU (Ampere and later would otherwise round matmuls and cuDNN convolutions, e.g. the ViT patch
    embedding, to TF32's 10-bit mantissa: a rank check near its threshold could flip)."""
    # Not torch.use_deterministic_algorithms: it also sets torch.compile's (inductor's) flag, and
    # importing that config imports torch._dynamo, ~1 s of every job's start-up (and its exit hook
    # another 0.2 s). memcap compiles nothing; a trainer that does must set
    # torch._inductor.config.deterministic itself.
    torch._C._set_deterministic_algorithms(True, warn_only=True)
    torch.set_float32_matmul_precision("highest")   # fp32 matmuls stay fp32 (no TF32)
    torch.backends.cudnn.allow_tf32 = False          # cuDNN's default is TF32 for convolutions
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


def flush_denormals() -> bool:
    """Treat float32 values below 1.2e-38 (denormals) as zero on the CPU, as GPUs' fast paths do.

    As a model trains, some of its gradients and Adam moments become that small, and every product
    with a denormal operand takes the CPU's slow microcode path: a capacity probe at H = 40 fell from
    ~100 to ~21 steps/s by step 30,000 (docs/speed.md). Flushing them changes a result only as float
    rounding does. Returns False where the CPU cannot (nothing changed)."""
    return torch.set_flush_denormal(True)


def prepare(threads: int | None) -> None:
    """Set-up of every job's process: no denormals (first: threads started later inherit the mode), its
    cores, deterministic kernels, buffer reuse."""
    flush_denormals()
    set_threads(threads)
    enable_determinism()
    keep_freed_memory()
