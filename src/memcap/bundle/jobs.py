"""Which MLT jobs to train and how, as the rules would (torch-free).

The active preset's jobs (memcap.mlt_synthetic.grid.jobs) of the named sweeps and seeds whose run file
is missing, planned into packs as the rule `mlt_train_pack` plans them (memcap.mlt_synthetic.packing),
each run by the rules' own command (`memcap mlt_synthetic train-pack`, or `train` for a job alone), so
the files land at the names Snakemake expects and a run that exists is never in a pack.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from memcap.mlt_synthetic import grid, packing

MLT = Path("results/mlt_synthetic")


@dataclass(frozen=True)
class Command:
    argv: list[str]
    out: Path        # the last run file it writes: its log is named after it


def parse_specs(specs: list[str]) -> dict[str, set[int] | None]:
    """'SWEEP' (every seed of the preset) or 'SWEEP:2,3' -> {sweep: seeds or None}."""
    out: dict[str, set[int] | None] = {}
    for spec in specs:
        sweep, _, seeds = spec.partition(":")
        out[sweep] = {int(s) for s in seeds.split(",")} if seeds else None
    return out


def select(sweeps: dict, specs: dict[str, set[int] | None], only: list[str] | None = None) -> list[tuple]:
    """The jobs (sweep, value, T, seeds) of the named sweeps and seeds; `only` (SWEEP/VALUE/T) keeps just
    those, in that order."""
    unknown = sorted(set(specs) - set(sweeps))
    if unknown:
        raise SystemExit(f"memcap bundle: no sweep {unknown} in this preset; sweeps: {sorted(sweeps)}")
    jobs = [j for j in grid.jobs(sweeps) if j[0] in specs and (specs[j[0]] is None or set(j[3]) <= specs[j[0]])]
    if only:
        by_id = {"/".join(map(str, j[:3])): j for j in jobs}
        missing = [i for i in only if i not in by_id]
        if missing:
            raise SystemExit(f"--only: no such job in {sorted(specs)}: {missing}; jobs look like {next(iter(by_id), '-')}")
        named = {i.split("/")[0] for i in only}   # a sweep --only does not name trains all its jobs
        jobs = [by_id[i] for i in only] + [j for j in jobs if j[0] not in named]
    return jobs


def missing_runs(sweeps: dict, jobs: list[tuple], root: Path = Path(".")) -> set[str]:
    names = {grid.run_name(sweeps, *j[:3], list(j[3])) for j in jobs}
    return {n for n in names if not (root / MLT / "runs" / n).exists()}


def _memcap(params: str, scale: str | None) -> tuple[list[str], list[str]]:
    return [sys.executable, "-m", "memcap", "mlt_synthetic"], ["--params", params, *(["--scale", scale] if scale else [])]


def pack_command(sweeps: dict, pack: packing.PlannedPack, params: str, scale: str | None, threads: int = 1,
                 cuda_graphs: bool = False) -> Command:
    head, opts = _memcap(params, scale)
    runs = [str(MLT / "runs" / name) for name in pack.runs]
    argv = [*head, "train-pack", *opts, "--threads", str(threads), "--checkpoint",
            str(Path("checkpoints/mlt_synthetic/packs") / f"{pack.id}.pt"), "--runs", *runs]
    if pack.sweep in grid.analysis_sweeps(sweeps):
        argv += ["--attention", *(str(MLT / "attention" / name) for name in pack.runs)]
    return Command(argv + (["--cuda-graphs"] if cuda_graphs else []), Path(runs[-1]))


def job_command(sweeps: dict, job: tuple, params: str, scale: str | None = None, threads: int = 1) -> Command:
    sweep, value, T, seeds = job
    name = grid.run_name(sweeps, sweep, value, T, list(seeds))
    out = MLT / "runs" / name
    head, opts = _memcap(params, scale)
    argv = [*head, "train", *opts, "--threads", str(threads), "--sweep", sweep, "--value", str(value),
            "--dataset-size", str(T), "--settings-key", name.rsplit("-", 1)[1].removesuffix(".parquet"),
            "--checkpoint", str(Path("checkpoints/mlt_synthetic") / name.replace(".parquet", ".pt")), "--out", str(out)]
    if sweep in grid.analysis_sweeps(sweeps):
        argv += ["--attention-out", str(MLT / "attention" / name)]
    return Command(argv, out)


def commands(sweeps: dict, jobs: list[tuple], missing: set[str], pack_models: int, pack_mem_mb: int,
             params: str, scale: str | None, threads: int = 1, cuda_graphs: bool = False,
             in_order: bool = False) -> tuple[list[Command], list[packing.PlannedPack]]:
    """The processes to start, packs first (in the order of their first job when `in_order`), then
    the jobs no pack holds."""
    named = {j[0] for j in jobs}
    packs = packing.plan({k: v for k, v in sweeps.items() if k in named}, missing, pack_models, pack_mem_mb)
    if in_order:
        order = {"/".join(map(str, j[:3])): k for k, j in enumerate(jobs)}
        packs.sort(key=lambda p: min(order.get("/".join(map(str, j[:3])), len(order)) for j in p.jobs))
    in_packs = {name for p in packs for name in p.runs}
    todo = [pack_command(sweeps, p, params, scale, threads, cuda_graphs) for p in packs]
    todo += [job_command(sweeps, j, params, scale, threads) for j in jobs
             if grid.run_name(sweeps, *j[:3], list(j[3])) in missing - in_packs]
    return todo, packs
