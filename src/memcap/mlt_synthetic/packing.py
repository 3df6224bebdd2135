"""Which training jobs of an MLT sweep train together as one pack (torch-free: Snakemake plans with it).

A pack is one process and one Snakemake job (train.py trains it, memcap.training.pack stacks it); its
outputs are its jobs' run files under their usual names, so a run is the same file whether it trained alone or in a
pack. Packs are planned from the jobs whose run file is missing when the run starts: a run that exists
is never in a pack, so no pack retrains it or, as Snakemake removes a job's outputs before running it,
deletes it. `resources.<scale>.train.pack_models` (models per pack; 0 or 1: one job a grid point, as the
CPU presets) and `pack_mem_mb` (the data of a pack, which a GPU holds whole; a seed's random contexts are stored
once for all its T: memcap.training.sizes.pack_data_bytes) size the packs.

Within a sweep, jobs are taken in order of the varied value (the shape) then T, and a pack closes when it would
exceed either size, or when padding every model to the pack's largest shape would cost more than
PADDING_SLACK times the models' own multiply-adds (MLTAttention.stack pads heads, head size and
context; memcap.models.mlt_work counts them as the model takes its products).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from memcap.mlt_synthetic import grid
from memcap.models import mlt_work
from memcap.training.schedule import mlt_num_steps
from memcap.training.sizes import pack_data_bytes, shape

PADDING_SLACK = 1.5   # a pack may do at most 1.5 times its models' own multiply-adds: larger packs run
                      # more model-steps/s, padded ones more work a model (docs/speed.md: 1.4-2 estimated
                      # alike, 1.5 the least, on an H200's measured step times)


@dataclass(frozen=True)
class PlannedPack:
    sweep: str
    jobs: tuple[tuple[str, int, int, tuple[int, ...]], ...]   # (sweep, value, T, seeds), as grid.jobs
    runs: tuple[str, ...]                                      # their names below runs/ (grid.run_name)

    @property
    def id(self) -> str:
        return pack_id(self.runs)

    @property
    def models(self) -> int:
        return sum(len(j[3]) for j in self.jobs)


def pack_id(runs) -> str:
    """Stable name of a pack: its runs' names hashed (the same runs, the same pack and checkpoint)."""
    return hashlib.sha256("\n".join(runs).encode()).hexdigest()[:10]


def checkpoint_path(runs: list[str]) -> str:
    """Where a training job checkpoints: a job alone beside its run's name (as always), a pack by its id."""
    names = [grid.run_name_of(r) for r in runs]
    if len(names) == 1:
        return f"checkpoints/{grid.FAMILY}/{names[0].removesuffix('.parquet')}.pt"
    return f"checkpoints/{grid.FAMILY}/packs/{pack_id(names)}.pt"


def attention_arg(wildcards, output) -> str:
    """The training command's --attention files (saturation sweeps), for Snakemake's params: a function
    of the outputs, so a job alone and a pack record the same params."""
    files = getattr(output, "attention", None) or []
    files = [files] if isinstance(files, str) else list(files)
    return " --attention " + " ".join(files) if files else ""


def step_work(settings: dict, value: int) -> float:
    """Multiply-adds of one example's forward pass at a grid point's shape, in the products the model
    takes for it (memcap.models.mlt_work): the padding cost model."""
    shp, d = shape(settings, value), settings["input_dim"]
    out = settings["num_classes"] if settings["task"] == "classification" else 1
    return mlt_work.example_work(d, shp["heads"], shp["context_size"], shp["head_dim"] or d, out,
                                 settings["context"] == "random", settings["batch_size"])


def plan(sweeps: dict[str, dict], missing: set[str], pack_models: int, pack_mem_mb: int) -> list[PlannedPack]:
    """The packs of the jobs whose run names (grid.run_name) are in `missing`; none when
    pack_models <= 1 (one job a grid point) or a sweep's jobs would each be alone."""
    if pack_models <= 1:
        return []
    packs = []
    for sweep, s in sweeps.items():
        todo = [j for j in grid.jobs({sweep: s}) if grid.run_name(sweeps, *j[:3], list(j[3])) in missing]
        todo.sort(key=lambda j: (j[1], j[2], j[3]))   # the varied value (the shape), then T, then seeds
        current: list = []

        def close():
            if len(current) > 1:
                packs.append(PlannedPack(sweep, tuple(current),
                                         tuple(grid.run_name(sweeps, *j[:3], list(j[3])) for j in current)))
            current.clear()

        for job in todo:
            trial = current + [job]
            models = sum(len(j[3]) for j in trial)
            top = max(j[1] for j in trial)   # the sweep varies one quantity: pad to its largest
            steps = [mlt_num_steps(j[2], s["min_steps"], s["epochs"], s["batch_size"]) * len(j[3]) for j in trial]
            own = sum(st * step_work(s, j[1]) for st, j in zip(steps, trial))
            padded = sum(st * step_work(s, top) for st in steps)
            mem = _data_mb(s, trial, top)
            if current and (models > pack_models or mem > pack_mem_mb or padded > PADDING_SLACK * own):
                close()
            current.append(job)
        close()
    return packs


def write_plan(packs: list[PlannedPack], folder: str | Path) -> Path:
    """The plan as JSON named by its content (as the resolved params): a SLURM job's Snakemake reads
    this very plan instead of planning again from files that other jobs may have written since."""
    text = json.dumps([{"sweep": p.sweep, "jobs": [list(j[:3]) + [list(j[3])] for j in p.jobs], "runs": list(p.runs)}
                       for p in packs], sort_keys=True)
    path = Path(folder) / f"packs-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def read_plan(path: str | Path) -> list[PlannedPack]:
    return [PlannedPack(p["sweep"], tuple((j[0], j[1], j[2], tuple(j[3])) for j in p["jobs"]), tuple(p["runs"]))
            for p in json.loads(Path(path).read_text())]


def pack_mem_mb(settings: dict, pack: PlannedPack, class_mem_mb: int) -> int:
    """Host memory of a pack's job: its class's, or its data (padded to the pack's shape) with half
    again for torch's buffers and 1 GB for the interpreter, torch and the models, when that is more."""
    data = _data_mb(settings, pack.jobs, max(j[1] for j in pack.jobs))
    return max(class_mem_mb, int(1.5 * data) + 1024 + 64 * pack.models)


def _data_mb(settings: dict, jobs, top: int) -> float:
    """MB of these jobs' data with every model at the pack's largest shape (`top`: the varied value)."""
    return pack_data_bytes(settings, [(j[1], j[2], seed) for j in jobs for seed in j[3]], top) / 2 ** 20


PLAN_VARIABLE = "MEMCAP_PACK_PLAN"


def packs_of_run(sweeps: dict[str, dict], runs_root: str, attention_root: str, pack_models: int,
                 pack_mem_mb: int, main_process: bool, folder: str = ".snakemake/memcap") -> list[PlannedPack]:
    """The packs of this Snakemake run. The process that schedules plans them from the runs missing
    now (a saturation sweep's run also needs its attention file) and names the plan in the environment;
    a SLURM job's own Snakemake, started with that environment, reads the same plan."""
    if not main_process and os.environ.get(PLAN_VARIABLE):
        return read_plan(os.environ[PLAN_VARIABLE])
    analysis = set(grid.analysis_sweeps(sweeps))
    missing = set()
    for job in grid.jobs(sweeps):
        name = grid.run_name(sweeps, *job[:3], list(job[3]))
        if not Path(runs_root, name).exists() or (job[0] in analysis and not Path(attention_root, name).exists()):
            missing.add(name)
    packs = plan(sweeps, missing, pack_models, pack_mem_mb)
    os.environ[PLAN_VARIABLE] = str(write_plan(packs, folder))
    return packs
