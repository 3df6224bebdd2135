"""Train MLT jobs where Snakemake is not installed (a lent GPU machine), as the rule `mlt_train` would.

Lists the active preset's jobs (memcap.mlt_synthetic.grid.jobs), keeps those of the named sweeps whose
run file is missing, and runs each with the rule's own command (`memcap mlt_synthetic train ...
--settings-key`), `--workers` at a time, until every job is done or `--deadline` seconds have passed;
a job still running then is stopped and keeps its checkpoint, from which the pipeline resumes it.
The files land where Snakemake expects them; back on the project machine, `dvc commit` records them.

    python tools/train_jobs.py --sweeps scale_ctx_size_shared scale_head_shared --workers 12 --deadline 400

`--only SWEEP/VALUE/T ...` runs just those jobs, in that order (e.g. the costliest on a GPU, the rest here).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memcap import params as memcap_params
from memcap.mlt_synthetic import grid

MLT = Path("results/mlt_synthetic")


def command(sweeps: dict, job: tuple, params: str) -> tuple[list[str], Path]:
    sweep, value, T, seeds = job
    name = grid.run_name(sweeps, sweep, value, T, list(seeds))
    out = MLT / "runs" / name
    cmd = [sys.executable, "-m", "memcap", "mlt_synthetic", "train", "--params", params, "--threads", "1",
           "--sweep", sweep, "--value", str(value), "--dataset-size", str(T),
           "--settings-key", name.rsplit("-", 1)[1].removesuffix(".parquet"),
           "--checkpoint", str(Path("checkpoints/mlt_synthetic") / name.replace(".parquet", ".pt")), "--out", str(out)]
    if sweep in grid.analysis_sweeps(sweeps):
        cmd += ["--attention-out", str(MLT / "attention" / name)]
    return cmd, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--sweeps", nargs="+", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--only", nargs="+", metavar="SWEEP/VALUE/T", help="just these jobs, in this order")
    ap.add_argument("--deadline", type=float, default=float("inf"), help="seconds; then stop what runs")
    args = ap.parse_args()
    params = memcap_params.load(args.params)
    sweeps = grid.resolve(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY))
    jobs = [j for j in grid.jobs(sweeps) if j[0] in args.sweeps]
    if args.only:
        by_id = {"/".join(map(str, j[:3])): j for j in jobs}
        unknown = [i for i in args.only if i not in by_id]
        if unknown:
            sys.exit(f"--only: no such job in {args.sweeps}: {unknown}; jobs look like {next(iter(by_id))}")
        jobs = [by_id[i] for i in args.only]
    todo = [command(sweeps, j, args.params) for j in jobs]
    todo = [(cmd, out) for cmd, out in todo if not out.exists()]
    start, procs = time.monotonic(), set()
    print(f"{len(todo)} jobs, {args.workers} at a time, deadline {args.deadline:.0f} s", flush=True)

    def run(item) -> str:
        cmd, out = item
        if time.monotonic() - start > args.deadline:
            return f"not started {out}"
        log = Path("logs/train_jobs") / out.relative_to(MLT).with_suffix(".log")
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as fh:
            p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
            procs.add(p)
            try:
                rc = p.wait(timeout=max(1.0, args.deadline - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                p.terminate()
                rc = p.wait()
        t = time.monotonic() - start
        print(f"[{t:6.0f} s] rc={rc} {out}", flush=True)
        return f"rc={rc} {out}"

    with ThreadPoolExecutor(args.workers) as pool:
        done = list(pool.map(run, todo))
    print(f"{sum(d.startswith('rc=0') for d in done)} of {len(todo)} jobs finished in "
          f"{time.monotonic() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
