"""Progress of a training loop: a tqdm bar on a terminal, else one log line per evaluation.

A job's log (logs/...) is a file, not a terminal: a bar there is a stream of '\\r' frames that ends
erased. So in a file each evaluation writes one line (step, loss, accuracy, steps/s, ETA) and the loop
ends with one summary line: a running log says how far the job is, a finished one what it did.
"""

from __future__ import annotations

import sys
import time

from tqdm import tqdm


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    def __init__(self, total: int, initial: int = 0, desc: str = "train", enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        on_terminal = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = tqdm(total=total, initial=initial, desc=desc, mininterval=10, leave=False,
                        file=self.stream) if on_terminal else None
        self.lines = enabled and not on_terminal
        self.total, self.step, self.first, self.desc = total, initial, initial, desc
        self.start = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.step += n
        if self.bar is not None:
            self.bar.update(n)

    def _rate(self) -> float:
        return (self.step - self.first) / max(time.monotonic() - self.start, 1e-9)

    def log(self, **metrics: float) -> None:
        """One line per evaluation in a log file; the bar's postfix on a terminal."""
        if self.bar is not None:
            self.bar.set_postfix({k: f"{v:.4g}" for k, v in metrics.items()}, refresh=False)
        if not self.lines:
            return
        rate = self._rate()
        eta = (self.total - self.step) / rate if rate > 0 else float("nan")
        values = " ".join(f"{k} {v:.4g}" for k, v in metrics.items())
        print(f"{self.desc}: step {self.step}/{self.total} {values} {rate:.1f} steps/s ETA {_clock(eta)}",
              file=self.stream, flush=True)

    def close(self, **summary: float) -> None:
        """The summary line (always, when enabled): steps, wall time, steps/s and the final metrics."""
        if self.bar is not None:
            self.bar.close()
        if self.lines or self.bar is not None:
            values = " ".join(f"{k} {v:.4g}" for k, v in summary.items())
            print(f"{self.desc}: done, {self.step - self.first} steps in {_clock(time.monotonic() - self.start)} "
                  f"({self._rate():.1f} steps/s) {values}".rstrip(), file=self.stream, flush=True)
