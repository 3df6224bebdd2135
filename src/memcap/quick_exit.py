"""End a process without the interpreter's last garbage collection.

At exit Python collects every object the process ever made: after importing torch, pandas or Snakemake
that is ~0.3 CPU-s (a fifth of a short job, and of every Snakemake start: SLURM starts two per job). The
OS frees the memory anyway. Frozen objects are skipped by that collection only: atexit handlers (logging,
torch) still run and objects still close when their last reference goes; every output is written and
closed by the code that makes it (memcap.results), never left for the collector.
"""

from __future__ import annotations

import atexit
import gc


def skip_final_collection() -> None:
    """Freeze every object alive at exit, so that the collection at shutdown does not walk them."""
    atexit.register(gc.freeze)
