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
pack is decided by the family that plans them (MLT's packing, torch-free, for Snakemake); the family
trains it with memcap.training.loop.train and writes each job's results.
"""

from __future__ import annotations

from dataclasses import dataclass

from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import MLTData, make_data, make_pack_data
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
