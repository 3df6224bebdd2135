"""bundle: train MLT runs on a machine without Snakemake until a deadline; take the bundle back in.

    memcap bundle train scale_head:2,3 scale_ctx_size --scale paper --deadline 3000 --graph-check --out b.tgz
    memcap bundle take b.tgz            # back in the project: new runs land, existing ones stay
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from memcap.cli import add_params_args, load_params

HELP = "train runs where Snakemake is not installed (until a deadline), and take the bundle back in"


def register(sub) -> None:
    p = sub.add_parser("train", help="train the missing runs of these sweeps (packs as the rules plan them) "
                                     "until a deadline; write one bundle of what finished")
    add_params_args(p)
    p.add_argument("sweeps", nargs="+", metavar="SWEEP[:SEEDS]", help="a sweep, all its seeds, or e.g. scale_head:2,3")
    p.add_argument("--deadline", type=float, default=float("inf"),
                   help="seconds from the start; then every job still training saves its checkpoint and stops")
    p.add_argument("--out", type=Path, default=Path("bundle.tgz"), help="the bundle (default bundle.tgz)")
    p.add_argument("--pack-models", type=int, help="models a pack at most (default: the scale's resources)")
    p.add_argument("--pack-mem-mb", type=int, help="data a pack in MB (default: the scale's resources)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes side by side (default 1: on a GPU they take turns, so fewer, larger packs "
                        "finish more runs by a deadline)")
    p.add_argument("--only", nargs="+", metavar="SWEEP/VALUE/T",
                   help="just these jobs of their sweeps, in this order (a sweep not named trains all its jobs)")
    graphs = p.add_mutually_exclusive_group()
    graphs.add_argument("--graph-check", action="store_true",
                        help="first benchmarks/graph_check.py (~1 min); packs replay CUDA graphs only if it says SAME")
    graphs.add_argument("--cuda-graphs", action="store_true", help="packs replay CUDA graphs (checked earlier on this machine)")
    p.add_argument("--bench", action="store_true",
                   help="first the step profile and benchmarks/train_throughput.py on the GPU (~4 min), into the bundle")
    p.add_argument("--bench-seconds", type=float, default=1.0, help="the benchmark's timing window")
    p.add_argument("--whole", action="store_true", help="bundle every result here, not only this call's")
    p.add_argument("--dry-run", action="store_true", help="print the processes in the order they would start")
    p.set_defaults(func=_train)

    p = sub.add_parser("take", help="copy a bundle's new runs into this project (never over a run that exists)")
    p.add_argument("bundle", type=Path)
    p.add_argument("--root", type=Path, default=Path("."), help="the project (default: here)")
    p.add_argument("--dry-run", action="store_true", help="say what would be copied; copy nothing")
    p.set_defaults(func=_take)


def _run_logged(argv: list[str], log: Path, timeout: float) -> str:
    """A benchmark's output, also kept in the bundle's logs."""
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        out += f"\n(stopped after {timeout:.0f} s)\n"
    log.write_text(out)
    print(out, flush=True)
    return out


def _gpu_busy(log: Path):
    """nvidia-smi's utilization every 10 s, where there is one (the bundle keeps it)."""
    if not shutil.which("nvidia-smi"):
        return None
    log.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,utilization.gpu,memory.used",
                             "--format=csv,noheader", "-l", "10"], stdout=open(log, "w"), stderr=subprocess.STDOUT)


def _train(args) -> None:
    from memcap import params as memcap_params
    from memcap.bundle import archive, jobs, runner
    from memcap.mlt_synthetic import grid

    start, since = time.monotonic(), time.time()
    params = load_params(args)
    scale = memcap_params.scale_of(params, grid.FAMILY)
    sweeps = grid.resolve(params[grid.FAMILY], scale)
    selected = jobs.select(sweeps, jobs.parse_specs(args.sweeps), args.only)
    train = params["resources"].get(scale, params["resources"]["quick"])["train"]
    per_pack = args.pack_models if args.pack_models is not None else train.get("pack_models", 1)
    missing = jobs.missing_runs(sweeps, selected)
    cuda_graphs = args.cuda_graphs
    if args.graph_check and not args.dry_run:
        out = _run_logged([sys.executable, "benchmarks/graph_check.py", "--steps", "300", "--seconds", "3"],
                          runner.LOGS / "graph_check.log", 180)
        cuda_graphs = out.count("SAME bit for bit") == 2
        print(f"graph check: packs step {'from CUDA graphs' if cuda_graphs else 'eagerly'}", flush=True)
    todo, packs = jobs.commands(sweeps, selected, missing, per_pack, args.pack_mem_mb or train.get("pack_mem_mb", 60000),
                                args.params, args.scale, args.threads or 1, cuda_graphs, in_order=bool(args.only))
    if args.dry_run:
        for cmd in todo:
            runs = cmd.argv[cmd.argv.index("--runs") + 1:] if "--runs" in cmd.argv else [cmd.argv[cmd.argv.index("--out") + 1]]
            print(" ".join(str(Path(r).relative_to(jobs.MLT / "runs")) for r in runs
                           if r.endswith(".parquet") and not r.startswith(str(jobs.MLT / "attention"))), flush=True)
        return
    busy = _gpu_busy(runner.LOGS / "gpu_busy.csv")
    if args.bench:
        device = ["--device", "cuda"] if busy else []
        _run_logged([sys.executable, "benchmarks/step_profile.py", *device, "--models", "256", "--n", "32", "--steps", "10"],
                    runner.LOGS / "step_profile.log", 120)
        _run_logged([sys.executable, "benchmarks/train_throughput.py", *device, "--seconds", str(args.bench_seconds),
                     "--project-seconds", "0.25", "--no-reference", *(["--cuda-graphs"] if cuda_graphs else [])],
                    runner.LOGS / "bench.log", 300)
    print(f"{len(todo)} processes ({len(packs)} packs of {sum(p.models for p in packs)} models, "
          f"{len(todo) - len(packs)} single jobs), {args.workers} at a time, "
          f"steps {'from CUDA graphs' if cuda_graphs else 'eager'}", flush=True)
    try:
        runner.run_all(todo, args.workers, args.deadline - (time.monotonic() - start))
    finally:
        if busy:
            busy.terminate()
        members = archive.write(args.out, since=0.0 if args.whole else since)
        runs = sum(1 for m in members if m.endswith(".parquet") and "/attention/" not in m)
        print(f"bundle {args.out}: {len(members)} files ({runs} runs) in {time.monotonic() - start:.0f} s", flush=True)


def _take(args) -> None:
    from memcap import params as memcap_params
    from memcap.bundle import archive
    from memcap.mlt_synthetic import grid

    family = memcap_params.read_yaml(str(args.root / "params.yaml"))[grid.FAMILY]
    analysis = {s for preset in family for s in grid.analysis_sweeps(grid.resolve(family, preset))}
    report = archive.take(args.bundle, args.root, args.dry_run, analysis)
    for what, label in (("new", "would copy" if args.dry_run else "copied"), ("kept", "kept (exists here)"),
                        ("left", "left (a saturation run without its attention file)")):
        for path in report[what]:
            print(f"{label}: {path}")
    print(f"bundle take: {len(report['new'])} new, {len(report['kept'])} kept, {len(report['left'])} left"
          + ("" if args.dry_run or not report["new"] else
             "; then `memcap provenance check` and `dvc commit -f mlt_synthetic` (docs/cluster.md)"))
