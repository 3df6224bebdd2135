"""mlt_synthetic: train a grid point or a pack, aggregate, draw the figures, the fits and the summary."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, add_settings_key_arg, load_params

HELP = "MLT synthetic sweeps (Mahdavi et al. Figs 2a/2b/2c/4/5, Fig 3's attention data)"


def register(sub) -> None:
    p = sub.add_parser("train", help="train every seed of one (sweep, value, T) grid point")
    add_params_args(p)
    p.add_argument("--sweep", required=True)
    p.add_argument("--value", type=int, required=True, help="value of the swept quantity")
    p.add_argument("--dataset-size", type=int, required=True, help="T")
    p.add_argument("--out", required=True, help="Parquet of the runs (one row per seed)")
    p.add_argument("--attention-out", help="Parquet of max attention weights (saturation sweeps)")
    p.add_argument("--checkpoint", help="resume from / save to this file (preemption, requeue)")
    add_settings_key_arg(p)
    p.set_defaults(func=_train)

    p = sub.add_parser("train-pack", help="train many jobs of one sweep as one pack (a GPU job); write their run files")
    add_params_args(p)
    p.add_argument("--runs", nargs="+", required=True,
                   help="the jobs' run files (results/mlt_synthetic/runs/<preset>/<sweep>/<value>/T<T>-<key>.parquet)")
    p.add_argument("--attention", nargs="*", default=[], help="their attention files (saturation sweeps), same order")
    p.add_argument("--checkpoint", help="the job's checkpoint (preemption, requeue); default: beside the run's "
                                        "name (one run), or by the pack's id")
    p.add_argument("--finished", default="checkpoints/mlt_synthetic/finished",
                   help="where finished jobs wait until the whole pack is done (a rerun takes them from there)")
    p.add_argument("--cuda-graphs", action="store_true",
                   help="replay each step from CUDA graphs (a GPU; run benchmarks/graph_check.py there first); "
                        "the rows' device says so")
    p.set_defaults(func=_train_pack)

    p = sub.add_parser("aggregate", help="concatenate run Parquets into the family table and its metrics")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the family table (tables/runs.parquet)")
    p.add_argument("--metrics", required=True, help="JSON metrics for DVC")
    p.add_argument("inputs", nargs="+", help="per-grid-point run Parquets")
    p.set_defaults(func=_aggregate)

    p = sub.add_parser("figures", help="Figs 2a/2b/2c/4/5, the Fig 2a fits and the run summary")
    add_params_args(p)
    p.add_argument("--runs", required=True, help="the family table")
    p.add_argument("--figures", nargs="+", required=True,
                   help="figure paths; the stem names the figure (fig2a.png, fig2a.pdf, ...)")
    p.add_argument("--summary", required=True, help="markdown run summary")
    p.add_argument("--fits", required=True, help="Parquet of the Fig 2a / Fig 4 linear fits")
    p.set_defaults(func=_figures)


def _train(args) -> None:
    from memcap import checkpoint, results, runtime
    from memcap.mlt_synthetic import grid
    from memcap.mlt_synthetic.train import attention_maxima, train_point
    from memcap.training.pack import Job

    params = load_params(args)
    runtime.prepare(args.threads)
    sweeps = grid.resolve(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY))
    s = grid.sweep_settings(sweeps, args.sweep)
    # The job's seeds are those its file's key stands for (one seed group of the grid point).
    s = {**s, "seeds": grid.seeds_for_key(s, args.settings_key, args.params)}
    labels = {"family": grid.FAMILY, "sweep": args.sweep, "scale": s["preset"]}
    runs, pack = train_point(s, args.value, args.dataset_size, params["device"], labels=labels,
                                    checkpoint_path=args.checkpoint,
                                    checkpoint_every_s=s["checkpoint_every_s"],
                                    desc=f"{args.sweep} {s['vary']}={args.value} T={args.dataset_size}")
    meta = results.provenance(grid.point_settings(s, s["seeds"]), scale=s["preset"], sweep=args.sweep,
                              value=args.value, dataset_size=args.dataset_size)
    if args.attention_out:
        att = attention_maxima(pack.model, Job(s, args.value, args.dataset_size), pack.positions[0], args.sweep)
        results.write_parquet(att, args.attention_out, meta)
    results.write_parquet(runs, args.out, meta)
    checkpoint.remove(args.checkpoint)


def _train_pack(args) -> None:
    """The pipeline's pack job: every run file is written only when the whole pack is done (a pack
    killed half-way leaves no outputs that look complete); a job finished earlier waits under
    --finished, so a failed or killed pack keeps it and a rerun of the pack does not train it again."""
    import shutil
    from pathlib import Path

    from memcap import checkpoint, results, runtime
    from memcap.errors import ParamsError
    from memcap.mlt_synthetic import grid, packing
    from memcap.mlt_synthetic.train import attention_maxima, train_jobs
    from memcap.training.pack import Job

    params = load_params(args)
    runtime.prepare(args.threads)
    sweeps = grid.resolve(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY))
    if args.attention and len(args.attention) != len(args.runs):
        raise ParamsError(f"--attention: {len(args.attention)} files for {len(args.runs)} runs")
    jobs, sweep = [], None
    for path in args.runs:
        preset, sw, value, T, key = grid.parse_run_path(path)
        if sweep not in (None, sw):
            raise ParamsError(f"a pack trains one sweep's jobs: {path} is of {sw}, not {sweep}")
        sweep, s = sw, grid.sweep_settings(sweeps, sw)
        if s["preset"] != preset:
            raise ParamsError(f"{path}: the active preset takes {sw} from {s['preset']!r}, not {preset!r}")
        jobs.append(Job({**s, "seeds": grid.seeds_for_key(s, key, args.params)}, value, T))
    kept = {i: Path(args.finished) / grid.run_name_of(path) for i, path in enumerate(args.runs)}
    args.checkpoint = args.checkpoint or packing.checkpoint_path(args.runs)
    kept_att = {i: kept[i].with_name(kept[i].stem + ".attention.parquet") for i in kept}
    done = {i for i in kept if kept[i].exists() and (not args.attention or kept_att[i].exists())}
    if done:
        print(f"pack: {len(done)} of {len(jobs)} jobs finished in an earlier attempt ({args.finished})", flush=True)
    labels = {"family": grid.FAMILY, "sweep": sweep, "scale": jobs[0].settings["preset"]}
    models = sum(len(j.seeds) for j in jobs)

    def meta(i: int) -> dict:
        j = jobs[i]
        pack = {"pack": {"runs": len(jobs), "models": models, "checkpoint": args.checkpoint}} if len(jobs) > 1 else {}
        return results.provenance(grid.point_settings(j.settings, j.seeds), scale=j.settings["preset"], sweep=sweep,
                                  value=j.value, dataset_size=j.T, **pack)

    def finished(i: int, table) -> None:   # this job's results wait beside the pack until it is done
        results.write_parquet(table, kept[i], meta(i))

    desc = (f"{sweep} pack of {len(jobs)} jobs ({models} models)" if len(jobs) > 1
            else f"{sweep} {jobs[0].settings['vary']}={jobs[0].value} T={jobs[0].T}")
    pack, tables = train_jobs(jobs, params["device"], labels, args.checkpoint, jobs[0].settings["checkpoint_every_s"],
                              desc=desc, on_job=finished, skip=done, cuda_graphs=args.cuda_graphs)
    for i in range(len(jobs)):
        if args.attention and i not in done:
            results.write_parquet(attention_maxima(pack.model, jobs[i], pack.positions[i], sweep), kept_att[i], meta(i))
    for i, path in enumerate(args.runs):     # the pack is done: every output at once
        if args.attention:
            Path(args.attention[i]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kept_att[i], args.attention[i])
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept[i], path)
    for i in kept:
        checkpoint.remove(kept[i])
        checkpoint.remove(kept_att[i])
    checkpoint.remove(args.checkpoint)
    print(f"pack: wrote {len(args.runs)} run files", flush=True)


def _aggregate(args) -> None:
    from memcap import results
    from memcap.mlt_synthetic.aggregate import aggregate_runs
    from memcap.mlt_synthetic.grid import FAMILY, resolve

    params = load_params(args)
    sweeps = resolve(params[FAMILY], memcap_params.scale_of(params, FAMILY))
    table, metrics = aggregate_runs(results.read_runs(args.inputs), {k: s["label"] for k, s in sweeps.items()})
    results.write_parquet(table, args.out, results.provenance(params[FAMILY], inputs=args.inputs,
                                                              scale=memcap_params.scale_of(params, "mlt_synthetic")))
    results.write_json(metrics, args.metrics)


def _figures(args) -> None:
    from memcap import results
    from memcap.bounds import SATURATION_ACC
    from memcap.mlt_synthetic import figures

    load_params(args)
    runs = results.read_parquet(args.runs)
    fits = figures.fig2a_fits(runs)
    figures.draw(runs, fits, args.figures)
    results.write_parquet(fits, args.fits, results.provenance({"saturation_acc": SATURATION_ACC}))
    results.write_text(figures.summary_markdown(runs, fits), args.summary)
