"""One MLT job, or a pack of a sweep's jobs, trained through memcap.training: each job's runs table (a row
per seed, the columns the family's aggregate reads) and Fig 3's attention maxima of a saturation job."""

from __future__ import annotations

from dataclasses import asdict
from typing import Callable

import pandas as pd
import torch

from memcap.models.mlt_attention import MLTAttention, param_count
from memcap.runtime import pick_device
from memcap.tasks.mlt_data import make_data, stack
from memcap.training import memory
from memcap.training.config import CHECKPOINT_EVERY_S, RunResult, TrainConfig
from memcap.training.loop import train
from memcap.training.pack import Job, build
from memcap.training.sizes import shape


def job_rows(job: Job, results: dict, positions: list[int], pack_models: int, device,
             labels: dict | None = None) -> pd.DataFrame:
    """The run file's table of one job: a row per seed (memcap.mlt_synthetic.aggregate.RUN_COLUMNS).
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
    check_memory(jobs)
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


def check_memory(jobs: list[Job]) -> None:
    """Stop before anything is allocated when the pack's estimated memory is above the machine's."""
    parts: dict[str, int] = {}
    for job in jobs:
        one = memory.mlt_point_bytes(job.settings, job.value, job.T, job.seeds)
        parts = {k: max(parts.get(k, 0), v) if k == "torch" else parts.get(k, 0) + v for k, v in one.items()}
    s = jobs[0].settings
    memory.check(f"{s['vary']}={jobs[0].value} T={jobs[0].T}" + (f" (+{len(jobs) - 1} jobs)" if len(jobs) > 1 else ""),
                 parts)


def train_point(settings: dict, value: int, dataset_size: int, device="auto", labels: dict | None = None,
                checkpoint_path: str | None = None, checkpoint_every_s: float = CHECKPOINT_EVERY_S, progress: bool = True,
                desc: str | None = None):
    """Train every seed of one grid point (a pack of one job); return (runs DataFrame, pack).

    settings: resolved sweep settings (grid.sweep_settings, or any dict with the same keys);
    value replaces the swept quantity; device: 'auto' | 'cpu' | 'cuda' or a torch.device; labels:
    columns put first in every row (the family CLI passes family, sweep and scale).
    """
    pack, tables = train_jobs([Job(settings, value, dataset_size)], device, labels, checkpoint_path,
                              checkpoint_every_s, progress, desc or f"{settings['vary']}={value} T={dataset_size}")
    return tables[0], pack


@torch.no_grad()
def attention_maxima(model: MLTAttention, job: Job, positions: list[int], sweep: str) -> pd.DataFrame:
    """Max attention weight per (seed, example, head) of one job's models, as `model` holds them (the
    trainer leaves each model's best checkpoint there): Fig 3's raw data."""
    s, H = job.settings, shape(job.settings, job.value)["heads"]
    own = model.select(positions)
    data = make_data(job.seeds, dataset_size=job.T, context_size=shape(s, job.value)["context_size"],
                     input_dim=s["input_dim"], context=s["context"], task=s["task"], num_classes=s["num_classes"])
    data = stack([data], model.context_size).to(model.pe.device)   # as the pack padded its context
    T = job.T
    idx = torch.arange(T, device=model.pe.device).expand(len(job.seeds), -1)
    q, c, _ = data.batch(idx)
    alpha = own.attention(q, c).amax(-1)[..., :H].cpu()            # (M, T, H): the job's own heads
    M = len(job.seeds)
    return pd.DataFrame({
        "sweep": sweep, "heads": H, "dataset_size": T,
        "seed": torch.tensor(job.seeds).repeat_interleave(T * H).numpy(),
        "example": torch.arange(T).repeat_interleave(H).repeat(M).numpy(),
        "head": torch.arange(H).repeat(M * T).numpy(),
        "max_attention": alpha.reshape(-1).numpy(),
    })
