"""An architecture's probes on disk (torch-free): one Parquet a probe, written as soon as it is trained.

runs/probes/H<H>_dh<d_h>-<probe key>/seed<s>_T<T>_x<budget>.parquet (memcap.capacity.grid). A probe
that exists is never trained again, so a killed search loses at most the probes in training.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memcap import results
from memcap.capacity import grid

# A probe's row: what it is, then what the MLT trainer reports (memcap.training.config.RunResult);
# pack names the probes trained together (wall_time_s is the pack's seconds until this probe was done).
COLUMNS = ["heads", "head_dim", "seed", "dataset_size", "budget", "mem_acc", "mem_loss", "memorized_bits",
           "best_step", "steps_run", "steps_planned", "early_stopped", "wall_time_s", "segments",
           "param_count", "device", "models_in_round", "pack"]


class ProbeStore:
    def __init__(self, runs_dir: str | Path, p: dict, heads: int, head_dim: int):
        self.p, self.heads, self.head_dim = p, heads, head_dim
        self.folder = Path(runs_dir) / grid.probe_folder(p, heads, head_dim)

    def path(self, seed: int, T: int, budget: int) -> Path:
        return self.folder / grid.probe_file(seed, T, budget)

    def has(self, seed: int, T: int, budget: int) -> bool:
        return self.path(seed, T, budget).exists()

    def table(self) -> pd.DataFrame:
        files = sorted(self.folder.glob("seed*_T*_x*.parquet"))
        if not files:
            return pd.DataFrame(columns=COLUMNS)
        return results.read_runs(files).reindex(columns=[*COLUMNS, "git_commit"])

    def outcomes(self, seeds: list[int], budget: int = 1) -> dict[int, dict[int, bool]]:
        """{seed: {T: passed}} of the probes at this budget (passed: accuracy >= the threshold)."""
        t = self.table()
        out: dict[int, dict[int, bool]] = {int(s): {} for s in seeds}
        for row in t[t.budget == budget].itertuples():
            if int(row.seed) in out:
                out[int(row.seed)][int(row.dataset_size)] = bool(row.mem_acc >= self.p["threshold"])
        return out

    def write(self, row: dict, meta: dict) -> Path:
        """One probe's file (atomic: a killed write leaves nothing half-written)."""
        df = pd.DataFrame([row]).reindex(columns=COLUMNS)
        return results.write_parquet(df, self.path(row["seed"], row["dataset_size"], row["budget"]), meta)
