"""An architecture's probes on disk (torch-free): one Parquet a probe, written as soon as it is trained.

runs/probes/H<H>_dh<d_h>-<probe key>/seed<s>_T<T>_x<budget>.parquet (memcap.capacity.grid). A probe
that exists is never trained again, so a killed search loses at most the probes in training.
A preset of your own (memcap.scales.shipped_scale) writes its probes below runs/<preset>/probes/ instead (beside its rows, which DVC
does not see: .dvcignore), and reads the shipped presets' probes too, so it trains only what they lack
and never adds a file to the published folder.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memcap import results
from memcap.capacity import grid
from memcap.scales import shipped_scale

# A probe's row: what it is, then what the MLT trainer reports (memcap.training.config.RunResult);
# pack names the probes trained together (wall_time_s is the pack's seconds until this probe was done).
COLUMNS = ["heads", "head_dim", "seed", "dataset_size", "budget", "mem_acc", "mem_loss", "memorized_bits",
           "best_step", "steps_run", "steps_planned", "early_stopped", "wall_time_s", "segments",
           "param_count", "device", "models_in_round", "pack"]


class ProbeStore:
    def __init__(self, runs_dir: str | Path, p: dict, heads: int, head_dim: int, preset: str | None = None):
        """runs_dir: the family's runs/ folder; preset: the rows' preset (None or shipped: the shared folder)."""
        self.p, self.heads, self.head_dim = p, heads, head_dim
        shared = Path(runs_dir) / grid.probe_folder(p, heads, head_dim)
        own = preset is not None and shipped_scale(preset) is None
        self.folder = Path(runs_dir) / preset / grid.probe_folder(p, heads, head_dim) if own else shared
        self.folders = [self.folder, shared] if own else [shared]     # where probes are read, own first

    def path(self, seed: int, T: int, budget: int) -> Path:
        return self.folder / grid.probe_file(seed, T, budget)

    def has(self, seed: int, T: int, budget: int) -> bool:
        return any((f / grid.probe_file(seed, T, budget)).exists() for f in self.folders)

    def table(self) -> pd.DataFrame:
        found: dict[str, Path] = {}
        for folder in reversed(self.folders):                    # one file a probe; the own folder's wins
            found.update({f.name: f for f in folder.glob("seed*_T*_x*.parquet")})
        files = [found[name] for name in sorted(found)]
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


class TunedStore:
    """A tuned preset's probes (`tuned_lr`): one ProbeStore a learning rate (memcap.capacity.grid.
    lr_variants). A probe (seed, T, budget) is decided once any lr memorized it or every lr was
    trained on it, and then reads as its best lr's row (`lr` says which); undecided, it is not yet a probe."""

    def __init__(self, runs_dir: str | Path, p: dict, heads: int, head_dim: int, preset: str | None = None):
        self.p = p
        self.parts = [ProbeStore(runs_dir, v, heads, head_dim, preset) for v in grid.lr_variants(p)]

    def missing(self, seed: int, T: int, budget: int) -> list[int]:
        """The parts (lrs) still to train on this probe: none once one has memorized it."""
        done = [part.has(seed, T, budget) for part in self.parts]
        if any(d and self._passed(part, seed, T, budget) for d, part in zip(done, self.parts)):
            return []
        return [i for i, d in enumerate(done) if not d]

    def _passed(self, part: ProbeStore, seed: int, T: int, budget: int) -> bool:
        t = part.table()
        hit = t[(t.seed == seed) & (t.dataset_size == T) & (t.budget == budget)]
        return bool(len(hit)) and bool(hit.mem_acc.iloc[0] >= self.p["threshold"])

    def has(self, seed: int, T: int, budget: int) -> bool:
        return not self.missing(seed, T, budget)

    def table(self) -> pd.DataFrame:
        parts = [part.table().assign(lr=part.p["training"]["lr"]) for part in self.parts]
        t = pd.concat(parts, ignore_index=True)
        if t.empty:
            return t.reindex(columns=[*COLUMNS, "git_commit", "lr"])
        key = ["seed", "dataset_size", "budget"]
        t = t.assign(passed=t.mem_acc >= self.p["threshold"])
        seen = t.groupby(key).agg(tried=("lr", "size"), any_pass=("passed", "any"))
        best = t.sort_values("mem_acc", ascending=False).drop_duplicates(key).set_index(key)
        decided = seen.any_pass | (seen.tried == len(self.parts))
        return best[decided.reindex(best.index)].reset_index().reindex(columns=[*COLUMNS, "git_commit", "lr"])

    def outcomes(self, seeds: list[int], budget: int = 1) -> dict[int, dict[int, bool]]:
        return ProbeStore.outcomes(self, seeds, budget)


def store(runs_dir: str | Path, p: dict, heads: int, head_dim: int, preset: str | None = None) -> ProbeStore | TunedStore:
    """The probes a row reads: one folder's, or a tuned preset's over its learning rates."""
    return (TunedStore if p.get("tuned_lr") else ProbeStore)(runs_dir, p, heads, head_dim, preset)
