"""One Snakemake run at a time in a project (torch-free; the Snakefile takes it before any job).

Snakemake only refuses a second run whose outputs overlap the first's; memcap's runs also share
checkpoints, logs and the run summary, and DVC records whatever the last one left. The lock is an
flock on a file: the kernel releases it when the process ends, however it ends (kill -9 included), so a
stale lock never blocks the next run.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import IO


_HELD: list[IO] = []   # the open lock file: closing it (or its garbage collection) would release it


def acquire(path: str | os.PathLike) -> IO:
    """Hold the lock for the life of this process, or exit naming the process that holds it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        sys.exit(f"memcap: another Snakemake run is going on in this project ({holder}); wait for it to "
                 f"finish (a dry run with -n works meanwhile). Its lock is {path}, released when it ends.")
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}: {' '.join(sys.argv)[:300]}\n")
    handle.flush()
    _HELD.append(handle)
    return handle
