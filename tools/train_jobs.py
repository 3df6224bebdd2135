"""Train MLT jobs where Snakemake is not installed (a lent GPU machine), as the rules would.

Lists the active preset's jobs (memcap.mlt_synthetic.grid.jobs), keeps those of the named sweeps whose
run file is missing, and runs them with the rules' own commands, `--workers` at a time, until every
job is done or `--deadline` seconds have passed (or the tool gets SIGTERM); a job still running then is
stopped by SIGTERM and keeps its checkpoint, from which the pipeline (or this tool again) resumes it.
With `--pack-models N` (default: the scale's `resources` pack_models) the missing jobs train in packs as the rule
`mlt_train_pack` would (memcap.mlt_synthetic.packing plans them; `memcap mlt_synthetic train-pack`),
else one job a grid point (`memcap mlt_synthetic train ... --settings-key`). The files land where
Snakemake expects them; back on the project machine, `dvc commit` records them.

    python tools/train_jobs.py --sweeps scale_ctx_size_shared scale_head_shared --workers 12 --deadline 400
    python tools/train_jobs.py --params params.yaml --scale paper --sweeps scale_dh_shared --workers 4

`--only SWEEP/VALUE/T ...` runs just those jobs, in that order (a pack where its first job named
comes; e.g. the costliest on a GPU, the rest here); `--seeds 0 1` keeps only the jobs of those seeds.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memcap import params as memcap_params
from memcap.mlt_synthetic import grid, packing

MLT = Path("results/mlt_synthetic")


def memcap_cmd(params: str, scale: str | None) -> list[str]:
    return [sys.executable, "-m", "memcap", "mlt_synthetic"], ["--params", params, *(["--scale", scale] if scale else [])]


def pack_command(sweeps: dict, pack: packing.PlannedPack, params: str, scale: str | None,
                 threads: int = 1) -> tuple[list[str], Path]:
    head, opts = memcap_cmd(params, scale)
    runs = [str(MLT / "runs" / name) for name in pack.runs]
    cmd = [*head, "train-pack", *opts, "--threads", str(threads), "--checkpoint",
           str(Path("checkpoints/mlt_synthetic/packs") / f"{pack.id}.pt"), "--runs", *runs]
    if pack.sweep in grid.analysis_sweeps(sweeps):
        cmd += ["--attention", *(str(MLT / "attention" / name) for name in pack.runs)]
    return cmd, Path(runs[-1])


def command(sweeps: dict, job: tuple, params: str, scale: str | None = None, threads: int = 1) -> tuple[list[str], Path]:
    sweep, value, T, seeds = job
    name = grid.run_name(sweeps, sweep, value, T, list(seeds))
    out = MLT / "runs" / name
    head, opts = memcap_cmd(params, scale)
    cmd = [*head, "train", *opts, "--threads", str(threads),
           "--sweep", sweep, "--value", str(value), "--dataset-size", str(T),
           "--settings-key", name.rsplit("-", 1)[1].removesuffix(".parquet"),
           "--checkpoint", str(Path("checkpoints/mlt_synthetic") / name.replace(".parquet", ".pt")), "--out", str(out)]
    if sweep in grid.analysis_sweeps(sweeps):
        cmd += ["--attention-out", str(MLT / "attention" / name)]
    return cmd, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--scale", help="the preset (one word for all families), else the params file's")
    ap.add_argument("--seeds", nargs="+", type=int, help="only the jobs of these seeds")
    ap.add_argument("--pack-models", type=int, help="models per pack (default: the scale's resources)")
    ap.add_argument("--pack-mem-mb", type=int, help="data per pack in MB (default: the scale's resources)")
    ap.add_argument("--sweeps", nargs="+", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--only", nargs="+", metavar="SWEEP/VALUE/T", help="just these jobs, in this order")
    # One thread a job pays for small models; a big one (H = 50 at n = 32) ran 1.7x faster on two threads
    # than on one on a 2-core machine, so the last job of a run takes `--workers 1 --threads 2`.
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads a process (default 1)")
    ap.add_argument("--deadline", type=float, default=float("inf"), help="seconds; then stop what runs")
    ap.add_argument("--cuda-graphs", action="store_true", help="packs replay their steps from CUDA graphs")
    ap.add_argument("--dry-run", action="store_true", help="print the processes in the order they would start")
    args = ap.parse_args()
    params = memcap_params.load(args.params, {"scale": args.scale} if args.scale else {})
    scale = memcap_params.scale_of(params, grid.FAMILY)
    sweeps = grid.resolve(params[grid.FAMILY], scale)
    jobs = [j for j in grid.jobs(sweeps) if j[0] in args.sweeps and (not args.seeds or set(j[3]) <= set(args.seeds))]
    if args.only:
        by_id = {"/".join(map(str, j[:3])): j for j in jobs}
        unknown = [i for i in args.only if i not in by_id]
        if unknown:
            sys.exit(f"--only: no such job in {args.sweeps}: {unknown}; jobs look like {next(iter(by_id))}")
        jobs = [by_id[i] for i in args.only]
    train = params["resources"].get(scale, params["resources"]["quick"])["train"]
    per_pack = args.pack_models if args.pack_models is not None else train.get("pack_models", 1)
    missing = {grid.run_name(sweeps, *j[:3], list(j[3])) for j in jobs}
    missing = {name for name in missing if not (MLT / "runs" / name).exists()}
    packs = packing.plan({k: v for k, v in sweeps.items() if k in args.sweeps}, missing, per_pack,
                         args.pack_mem_mb or train.get("pack_mem_mb", 60000))
    if args.only:   # packs too run in the order given: the pack of the first job named first
        order = {"/".join(map(str, j[:3])): k for k, j in enumerate(jobs)}
        packs.sort(key=lambda p: min(order["/".join(map(str, j[:3]))] for j in p.jobs))
    in_packs = {name for p in packs for name in p.runs}
    todo = [pack_command(sweeps, p, args.params, args.scale, args.threads) for p in packs]
    if args.cuda_graphs:
        todo = [([*cmd, "--cuda-graphs"], out) for cmd, out in todo]
    todo += [command(sweeps, j, args.params, args.scale, args.threads) for j in jobs
             if grid.run_name(sweeps, *j[:3], list(j[3])) in missing - in_packs]
    if args.dry_run:
        for cmd, _ in todo:
            runs = cmd[cmd.index("--runs") + 1:] if "--runs" in cmd else [cmd[cmd.index("--out") + 1]]
            print(" ".join(str(Path(r).relative_to(MLT / "runs")) for r in runs if r.endswith(".parquet")
                           and not r.startswith(str(MLT / "attention"))), flush=True)
        return
    print(f"{len(todo)} processes ({len(packs)} packs of {sum(p.models for p in packs)} models, "
          f"{len(todo) - len(packs)} single jobs), {args.workers} at a time, deadline {args.deadline:.0f} s", flush=True)
    run_all(todo, args.workers, args.deadline)


def run_all(todo: list[tuple[list[str], Path]], workers: int, deadline: float) -> list[str]:
    """Run the commands `workers` at a time until `deadline` seconds, then SIGTERM what runs (each job saves
    its checkpoint). A SIGTERM to this tool does the same at once: killing only the tool would leave its
    jobs running as orphans, which a rerun would then train twice into the same checkpoint."""
    start, procs, stop = time.monotonic(), set(), threading.Event()

    def on_sigterm(signum, frame) -> None:
        stop.set()
        for p in list(procs):
            p.terminate()

    signal.signal(signal.SIGTERM, on_sigterm)

    def run(item) -> str:
        cmd, out = item
        if stop.is_set() or time.monotonic() - start > deadline:
            print(f"not started {out}", flush=True)
            return f"not started {out}"
        log = Path("logs/train_jobs") / out.relative_to(MLT).with_suffix(".log")
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as fh:   # a resumed job keeps the log of its earlier segments
            p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
            procs.add(p)
            if stop.is_set():   # the signal came while this one was starting
                p.terminate()
            try:
                rc = p.wait(timeout=max(1.0, deadline - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                p.terminate()
                rc = p.wait()
        t = time.monotonic() - start
        print(f"[{t:6.0f} s] rc={rc} {out}", flush=True)
        return f"rc={rc} {out}"

    with ThreadPoolExecutor(workers) as pool:
        done = list(pool.map(run, todo))
    print(f"{sum(d.startswith('rc=0') for d in done)} of {len(todo)} jobs finished in "
          f"{time.monotonic() - start:.0f} s", flush=True)
    return done


if __name__ == "__main__":
    main()
