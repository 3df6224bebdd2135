"""A pack: the models of many jobs of one MLT sweep (grid points and seed groups), trained as one.

One GPU job of one grid point (two seeds) is launch-bound: the GPU waits on Python and kernel launches
whatever the model's size (docs/speed.md). A pack stacks the models of many jobs along the models
dimension, so every kernel of a step does the work of all of them. Each model keeps what it would have
alone: its dataset (its seed, its T), its initialisation, its batch order (memcap.training.batches),
its step count S and learning-rate schedule (memcap.stacked_adam), its evaluations and early stop.
Models of different heads, head size or context size are padded to the pack's largest
(MLTAttention.stack): padded parts stay exactly zero, so they change a model's numbers only by the
order of float sums.

Models are ordered by S (one Adam call per distinct S), then as the jobs were given. Which jobs form a
pack is decided by the family that plans them (MLT's packing, torch-free, for Snakemake). `train_jobs`
trains a pack (memcap.training.loop) and returns each job's runs table; `train_point`, one job alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import pandas as pd

from memcap.models.mlt_attention import MLTAttention, param_count
from memcap.runtime import pick_device
from memcap.tasks.mlt_data import MLTData, make_data, make_pack_data
from memcap.training.config import CHECKPOINT_EVERY_S, RunResult, TrainConfig
from memcap.training.loop import train
from memcap.training.schedule import mlt_num_steps
from memcap.training.sizes import shape


@dataclass(frozen=True)
class Job:
    """One run file's training: a grid point (value, T) of a sweep, for the seeds in `settings`."""
    settings: dict   # a sweep's resolved settings (memcap.training.sizes), "seeds" = this job's
    value: int
    T: int

    @property
    def seeds(self) -> list[int]:
        return [int(s) for s in self.settings["seeds"]]

    @property
    def steps(self) -> int:
        s = self.settings
        return mlt_num_steps(self.T, s["min_steps"], s["epochs"], s["batch_size"])


@dataclass
class Pack:
    model: MLTAttention
    data: MLTData
    seeds: list[int]           # one per model
    positions: list[list[int]]  # each job's models (positions in model and data), jobs in the given order


COMMON = ("task", "context", "input_dim", "num_classes", "lr", "batch_size", "epochs", "min_steps",
          "eval_every", "early_stop")


def build(jobs: list[Job], device) -> Pack:
    """The pack of `jobs` (same sweep settings but the varied value, T and seeds)."""
    s = jobs[0].settings
    differ = [k for k in COMMON if any(j.settings[k] != s[k] for j in jobs)]
    if differ:
        raise ValueError(f"a pack's jobs must share {differ} (one sweep's settings)")
    classification = s["task"] == "classification"
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].steps, i))   # one Adam group per S
    models, draws, seeds, positions = [], [], [], [None] * len(jobs)
    for i in order:
        job, shp = jobs[i], shape(jobs[i].settings, jobs[i].value)
        positions[i] = list(range(len(seeds), len(seeds) + len(job.seeds)))
        seeds += job.seeds
        models.append(MLTAttention(job.seeds, input_dim=s["input_dim"], heads=shp["heads"],
                                   context_size=shp["context_size"], head_dim=shp["head_dim"],
                                   out_dim=s["num_classes"] if classification else 1))
        draws += [(seed, job.T, shp["context_size"]) for seed in job.seeds]
    model = models[0] if len(models) == 1 else MLTAttention.stack(models)
    if len(jobs) == 1:   # one job: its data as a job alone draws them
        data = make_data(jobs[0].seeds, dataset_size=jobs[0].T, context_size=draws[0][2], input_dim=s["input_dim"],
                         context=s["context"], task=s["task"], num_classes=s["num_classes"])
    else:                # a pack: a seed's random contexts stored once for all its T (make_pack_data)
        data = make_pack_data(draws, s["input_dim"], s["context"], s["task"], s["num_classes"])
    return Pack(model.to(device), data.to(device), seeds, positions)


def job_rows(job: Job, results: dict, positions: list[int], pack_models: int, device,
             labels: dict | None = None) -> pd.DataFrame:
    """The run file's table of one job: a row per seed (the columns MLT's aggregate reads).
    wall_time_s is the job's: training seconds until its last model finished (in a pack, the pack's
    seconds until then); models_in_job counts the models trained together."""
    s, shp = job.settings, shape(job.settings, job.value)
    classification = s["task"] == "classification"
    out_dim = s["num_classes"] if classification else 1
    wall = max(results[p].wall_time_s for p in positions)
    rows = []
    for seed, p in zip(job.seeds, positions):
        rows.append({
            **(labels or {}), "vary": s["vary"], "x": job.value,
            "task": s["task"], "context": s["context"], "dataset_size": job.T,
            "heads": shp["heads"], "context_size": shp["context_size"],
            "head_dim": shp["head_dim"] or s["input_dim"], "input_dim": s["input_dim"],
            "num_classes": out_dim, "seed": seed,
            **{**asdict(results[p]), "wall_time_s": wall},
            "param_count": param_count(s["input_dim"], shp["heads"], shp["head_dim"] or s["input_dim"], out_dim),
            "lr": s["lr"], "batch_size": s["batch_size"],
            "min_steps": s["min_steps"], "device": str(device), "models_in_job": pack_models,
        })
    return pd.DataFrame(rows)


def train_jobs(jobs: list[Job], device="auto", labels: dict | None = None, checkpoint_path: str | None = None,
               checkpoint_every_s: float = CHECKPOINT_EVERY_S, progress: bool = True, desc: str = "pack",
               on_job: Callable[[int, pd.DataFrame], None] | None = None, skip: set[int] = frozenset(),
               cuda_graphs: bool = False):
    """Train the jobs of one sweep as one pack; return (pack, {job index: its runs table}). `on_job(i,
    table)` hears of each job as soon as all its models are done; jobs in `skip` (finished elsewhere)
    are not trained. labels: columns put first in every row. cuda_graphs:
    see train; every row's device then reads e.g. "cuda+graphs"."""
    device = pick_device(device) if isinstance(device, str) else device
    pack = build(jobs, device)
    s = jobs[0].settings
    # How often to checkpoint changes no result: it is an argument, not part of the settings.
    cfg = TrainConfig.of(s, checkpoint_every_s=checkpoint_every_s)
    results: dict[int, RunResult] = {}
    tables: dict[int, pd.DataFrame] = {}

    def job_done(new: dict[int, RunResult]) -> None:
        results.update(new)
        for i, pos in enumerate(pack.positions):
            if i not in tables and i not in skip and all(p in results for p in pos):
                tables[i] = job_rows(jobs[i], results, pos, len(pack.seeds),
                                     f"{device}+graphs" if cuda_graphs else device, labels)
                if on_job:
                    on_job(i, tables[i])

    skipped = {p for i in skip for p in pack.positions[i]}
    final, _ = train(pack.model, pack.data, pack.seeds, cfg, s["task"] == "classification", checkpoint_path,
                     progress, desc, on_finish=job_done, skip=skipped, cuda_graphs=cuda_graphs)
    job_done({p: r for p, r in enumerate(final) if r is not None})   # those finished before a resume
    return pack, tables


def train_point(settings: dict, value: int, dataset_size: int, device="auto", labels: dict | None = None,
                checkpoint_path: str | None = None, checkpoint_every_s: float = CHECKPOINT_EVERY_S, progress: bool = True,
                desc: str | None = None):
    """Train every seed of one grid point (a pack of one job); return (runs DataFrame, pack).

    settings: a sweep's resolved settings (memcap.training.sizes; MLT's grid.sweep_settings);
    value replaces the swept quantity; device: 'auto' | 'cpu' | 'cuda' or a torch.device; labels:
    columns put first in every row (the family CLI passes family, sweep and scale).
    """
    pack, tables = train_jobs([Job(settings, value, dataset_size)], device, labels, checkpoint_path,
                              checkpoint_every_s, progress, desc or f"{settings['vary']}={value} T={dataset_size}")
    return tables[0], pack
