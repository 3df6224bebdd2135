"""A pack: the models of many jobs of one MLT sweep (grid points and seed groups), trained as one.

One GPU job of one grid point (two seeds) is launch-bound: the GPU waits on Python and kernel launches
whatever the model's size (docs/speed.md). A pack stacks the models of many jobs along the models
dimension, so every kernel of a step does the work of all of them. Each model keeps what it would have
alone: its dataset (its seed, its T), its initialisation, its batch order (memcap.mlt_synthetic.batches),
its step count S and learning-rate schedule (memcap.stacked_adam), its evaluations and early stop.
Models of different heads, head size or context size are padded to the pack's largest
(MLTAttention.stack): padded parts stay exactly zero, so they change a model's numbers only by the
order of float sums.

Models are ordered by S (one Adam call per distinct S), then as the jobs were given. Which jobs form a
pack is decided elsewhere (memcap.mlt_synthetic.packing, torch-free, for Snakemake).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd
import torch

from memcap.mlt_synthetic.grid import shape
from memcap.mlt_synthetic.schedule import mlt_num_steps
from memcap.models.mlt_attention import MLTAttention, param_count
from memcap.tasks.mlt_data import MLTData, make_data, make_pack_data, stack


@dataclass(frozen=True)
class Job:
    """One run file's training: a grid point (value, T) of a sweep, for the seeds in `settings`."""
    settings: dict   # resolved sweep settings (memcap.mlt_synthetic.grid), "seeds" = this job's
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
