"""Run commands N at a time until a deadline, then stop them with SIGTERM: each trainer saves its
checkpoint and exits, so the next call (or the pipeline) resumes it. A SIGTERM to the runner does the
same at once: killing only the runner would leave its jobs training as orphans, which a rerun would
then train twice into the same checkpoint."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memcap.bundle.jobs import MLT, Command

LOGS = Path("logs/bundle")


def log_path(out: Path) -> Path:
    return LOGS / out.relative_to(MLT).with_suffix(".log")


def run_all(todo: list[Command], workers: int, deadline: float) -> list[str]:
    """Each command's outcome, in order: 'rc=N <out>' or 'not started <out>'."""
    start, procs, stop = time.monotonic(), set(), threading.Event()

    def on_sigterm(signum, frame) -> None:
        stop.set()
        for p in list(procs):
            p.terminate()

    before = signal.signal(signal.SIGTERM, on_sigterm)

    def run(cmd: Command) -> str:
        if stop.is_set() or time.monotonic() - start > deadline:
            print(f"not started {cmd.out}", flush=True)
            return f"not started {cmd.out}"
        log = log_path(cmd.out)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as fh:   # a resumed job keeps the log of its earlier segments
            p = subprocess.Popen(cmd.argv, stdout=fh, stderr=subprocess.STDOUT)
            procs.add(p)
            if stop.is_set():        # the signal came while this one was starting
                p.terminate()
            try:
                rc = p.wait(timeout=max(1.0, deadline - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                p.terminate()
                rc = p.wait()
        print(f"[{time.monotonic() - start:6.0f} s] rc={rc} {cmd.out}", flush=True)
        return f"rc={rc} {cmd.out}"

    try:
        with ThreadPoolExecutor(max(1, workers)) as pool:
            done = list(pool.map(run, todo))
    finally:
        signal.signal(signal.SIGTERM, before)
    print(f"{sum(d.startswith('rc=0') for d in done)} of {len(todo)} processes finished in "
          f"{time.monotonic() - start:.0f} s", flush=True)
    return done
