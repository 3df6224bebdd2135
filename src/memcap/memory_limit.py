"""What a job may use of the machine's memory, and the one-line message when an estimate is above it
(torch-free, imports nothing of memcap but its errors). The estimates are each family's own
(memcap.training.memory for the trainers, memcap.assumptions.sizes for the assumption checks).
"""

from __future__ import annotations

import os
from pathlib import Path

from memcap.errors import ParamsError

TORCH_BYTES = 400 * 2 ** 20   # the interpreter, torch and its allocator's slack


class TooBig(ParamsError):
    """A job whose estimated memory is above the machine's: the key, both numbers and what to change."""


def available_bytes() -> tuple[int, str]:
    """(bytes this job may use, where that number comes from): SLURM's allocation when the job runs
    under it, else the memory the kernel reports available (MemAvailable)."""
    slurm = os.environ.get("SLURM_MEM_PER_NODE")
    if slurm and slurm.isdigit():
        return int(slurm) * 2 ** 20, "its SLURM allocation (--mem)"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024, "this machine's available memory"
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "this machine's free memory"


def gib(n: float) -> str:
    return f"{n / 2 ** 30:,.1f} GB" if n >= 2 ** 30 else f"{n / 2 ** 20:,.0f} MB"


def problem(key: str, parts: dict[str, int], knobs: str, limit: tuple[int, str] | None = None) -> str | None:
    """None when the estimate fits; else one line with the key, the estimate, its parts and the limit."""
    limit_bytes, where = limit or available_bytes()
    need = sum(parts.values())
    if need <= limit_bytes:
        return None
    said = ", ".join(f"{k} {gib(v)}" for k, v in parts.items())
    return (f"{key}: needs about {gib(need)} of memory ({said}), above {where}, {gib(limit_bytes)}; make it "
            f"smaller ({knobs}) or run it where more memory is free")


def check(key: str, parts: dict[str, int], knobs: str) -> None:
    """Stop a job before it allocates anything when its estimate is above what it may use."""
    said = problem(key, parts, knobs)
    if said:
        raise TooBig(f"{said}; nothing was allocated")
