"""Training checkpoints for preemption and requeue: atomic save, resume only if the run matches.

A checkpoint stores whatever state dict the trainer hands it plus a fingerprint of the run's
config; a checkpoint from a different config is ignored (and replaced), never silently resumed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from memcap.provenance import pin
from memcap.results import atomic_path


_FRAME = "__memcap_dataframe__"


def fingerprint(config: dict[str, Any]) -> str:
    """The run's config and the code that trains it (the committed src/ and workflow/ trees and any
    uncommitted code difference: memcap.provenance): a checkpoint made by other code is not resumed, so
    a result never mixes two versions of the trainer (the job then starts afresh); a commit that
    changes only docs or results keeps it."""
    state = pin()
    code = {"trees": state.get("code_trees", state["commit"]), "diff": state["code_diff_sha256"]}
    return hashlib.sha256(json.dumps({**config, "code": code}, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _plain(obj: Any) -> Any:
    """What torch.load(weights_only=True) reads back: tensors, Python numbers, strings, containers.
    A DataFrame (a finished point's rows) is stored as its columns' lists; numpy values as Python's."""
    if isinstance(obj, pd.DataFrame):
        return {_FRAME: {k: _plain(v) for k, v in obj.to_dict("list").items()}}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_plain(v) for v in obj)
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(obj)
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _restore(obj: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_FRAME}:
            return pd.DataFrame(obj[_FRAME])
        return {k: _restore(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore(v) for v in obj]
    return obj


def save(path: str | os.PathLike, state: dict[str, Any], config: dict[str, Any]) -> None:
    # through a Python file: a full disk then raises OSError ENOSPC (DiskFull), not torch's RuntimeError
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        torch.save({"fingerprint": fingerprint(config), "state": _plain(state)}, f)


def load(path: str | os.PathLike | None, config: dict[str, Any]) -> dict[str, Any] | None:
    """The saved state if `path` holds a checkpoint of this very config, else None."""
    if not path or not Path(path).exists():
        return None
    # weights_only: tensors, numbers, strings and containers only; a checkpoint file never runs code
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:   # truncated, or not ours: start afresh (and overwrite it) rather than fail
        print(f"checkpoint {path} cannot be read ({type(err).__name__}); training starts afresh", flush=True)
        return None
    if blob.get("fingerprint") != fingerprint(config):
        print(f"checkpoint {path} is of other settings or other code; training starts afresh", flush=True)
        return None
    return _restore(blob["state"])


def remove(path: str | os.PathLike | None) -> None:
    if path and Path(path).exists():
        Path(path).unlink()


class TrainingClock:
    """A job's training time over all its segments: what the checkpoint it resumed from had counted,
    plus this segment's. Its `state()` goes into every checkpoint, so a kill-and-requeue loses no time."""

    def __init__(self, saved: dict[str, Any] | None):
        self.before = float(saved.get("train_seconds", 0.0)) if saved else 0.0
        self.segments = int(saved.get("segments", 1)) + 1 if saved else 1
        self.start = time.perf_counter()

    def seconds(self) -> float:
        return self.before + time.perf_counter() - self.start

    def state(self) -> dict[str, Any]:
        return {"train_seconds": self.seconds(), "segments": self.segments}


class StopRequest:
    """SIGTERM (SLURM's preemption or time limit, `kill`, a runner's deadline) asks the trainer to save
    a checkpoint and exit, instead of losing everything since the last timed save. Use as a context
    manager around the training loop; `requested` turns true on the signal. Outside the main thread
    (where signals cannot be caught) it never does, and the timed checkpoints remain."""

    EXIT_CODE = 143   # 128 + SIGTERM, what a job killed by the signal reports

    def __init__(self):
        self.requested, self._before = False, None

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._before = signal.signal(signal.SIGTERM, self._on_signal)
        return self

    def _on_signal(self, signum, frame) -> None:
        self.requested = True

    def __exit__(self, *exc) -> None:
        import signal

        if self._before is not None:
            signal.signal(signal.SIGTERM, self._before)
