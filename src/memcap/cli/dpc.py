"""dpc: train one curve (or a pack of them), aggregate the runs, fit and draw, and the KL theory."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, add_settings_key_arg, load_params

HELP = "DPC (Dana et al. 2025): look-up tables memorised by attention-only transformers"


def register(sub) -> None:
    p = sub.add_parser("train", help="train every grid point of one curve (all repetitions batched)")
    add_params_args(p)
    p.add_argument("--experiment", required=True)
    p.add_argument("--series", required=True, help="series value (e.g. d), or 'all' for experiments without one")
    p.add_argument("--out", required=True, help="Parquet of the runs (one row per grid point and repetition)")
    p.add_argument("--checkpoint", help="prefix of per-grid-point checkpoints (preemption, requeue)")
    add_settings_key_arg(p)
    p.set_defaults(func=_train)

    p = sub.add_parser("train-pack", help="train the curves of these files in one job, one after another "
                                          "(the rules' command: one curve a job, or a pack of every missing one)")
    add_params_args(p)
    p.add_argument("--runs", nargs="+", required=True,
                   help="the curves to write: results/dpc/runs/<preset>/<experiment>/<series>-<key>.parquet")
    p.set_defaults(func=_train_pack)

    p = sub.add_parser("aggregate", help="concatenate the run Parquets; per-grid-point summary; DVC metrics")
    add_params_args(p)
    p.add_argument("--runs", required=True, help="Parquet of every run")
    p.add_argument("--summary", required=True, help="Parquet of the per-grid-point mean/sd/min/max")
    p.add_argument("--metrics", required=True, help="JSON metrics for DVC")
    p.add_argument("inputs", nargs="+", help="the training jobs' Parquets")
    p.set_defaults(func=_aggregate)

    p = sub.add_parser("figures", help="fitted slopes (Parquet + markdown) and the accuracy figures")
    add_params_args(p)
    p.add_argument("--runs", required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("--fits", required=True, help="Parquet of the fitted coefficients")
    p.add_argument("--fits-md", required=True, help="markdown table of the fitted slopes")
    p.add_argument("--figures", nargs="+", required=True,
                   help="figure paths; each stem names a figure (figures/dpc/exp1.png, .pdf)")
    p.add_argument("--reference", nargs="*", default=None,
                   help="the authors' CSV files: their means are drawn where our grid point matches theirs")
    p.set_defaults(func=_figures)

    p = sub.add_parser("kl", help="Prop 3 / Theorem 2 / LS-vs-WLS KL table and its figure")
    add_params_args(p)
    p.add_argument("--out", required=True, help="Parquet of the KL table")
    p.add_argument("--figures", nargs="+", required=True, help="paths of the KL figure (.png, .pdf)")
    p.set_defaults(func=_kl)

    p = sub.add_parser("fidelity", help="our means beside the authors' published CSVs (table, markdown, figure)")
    add_params_args(p)
    p.add_argument("--summary", required=True, help="tables/summary.parquet")
    p.add_argument("--reference", nargs="+", default=None,
                   help="the authors' CSV files (default: every file in reference/dpc-published)")
    p.add_argument("--out", required=True, help="tables/fidelity.parquet")
    p.add_argument("--md", required=True, help="tables/fidelity.md")
    p.add_argument("--figures", nargs="+", required=True, help="paths of the figure (.png, .pdf)")
    p.set_defaults(func=_fidelity)


def _preset(params: dict) -> dict:
    from memcap.params import preset

    return preset(params, "dpc")


def _train(args) -> None:
    from memcap import keys, results, runtime
    from memcap.dpc import grid, train

    params = load_params(args)
    runtime.prepare(args.threads)
    s = grid.settings(_preset(params), args.experiment)
    scale = memcap_params.scale_of(params, "dpc")
    keys.check(args.settings_key, scale, s, args.params)
    runs = train.run_job(s, args.experiment, args.series, scale, params.get("device", "auto"),
                         checkpoint_prefix=args.checkpoint)
    meta = results.provenance(s, scale=scale, experiment=args.experiment, series=args.series)
    results.write_parquet(runs, args.out, meta)
    train.clear_checkpoints(args.checkpoint, s)   # only now: a kill before the write loses no point


def _train_pack(args) -> None:
    from memcap import keys, results, runtime
    from memcap.dpc import grid, train

    params = load_params(args)
    runtime.prepare(args.threads)
    scale = memcap_params.scale_of(params, "dpc")
    curves = []
    for run in args.runs:   # every name checked before anything trains
        preset, experiment, label, key = grid.parse_run_name(run)
        if preset != scale:
            raise SystemExit(f"dpc train-pack: {run} belongs to preset {preset!r}, not the active {scale!r}")
        s = grid.settings(_preset(params), experiment)
        keys.check(key, scale, s, args.params)
        curves.append((run, experiment, label, s))
    # Every curve trains before any is written: a finished curve's points wait in its checkpoints, so a
    # pack stopped mid-way (Snakemake then deletes all its outputs) retrains none of them when it reruns.
    trained = [train.run_job(s, experiment, label, scale, params.get("device", "auto"),
                             checkpoint_prefix=grid.checkpoint_prefix(run))
               for run, experiment, label, s in curves]
    for (run, experiment, label, s), runs in zip(curves, trained):
        results.write_parquet(runs, run, results.provenance(s, scale=scale, experiment=experiment, series=label))
        train.clear_checkpoints(grid.checkpoint_prefix(run), s)


def _aggregate(args) -> None:
    from memcap import results
    from memcap.dpc import aggregate

    params = load_params(args)
    runs = results.read_runs(args.inputs)
    meta = results.provenance(_preset(params), scale=memcap_params.scale_of(params, "dpc"), inputs=args.inputs)
    results.write_parquet(runs, args.runs, meta)
    results.write_parquet(aggregate.summarise(runs), args.summary, meta)
    results.write_json(aggregate.metrics(runs), args.metrics)


def _figures(args) -> None:
    from pathlib import Path

    from memcap import results
    from memcap.dpc import aggregate, figures, published

    params = load_params(args)
    runs, points = results.read_parquet(args.runs), results.read_parquet(args.summary)
    table = aggregate.fit_table(points)
    meta = results.provenance(_preset(params), scale=memcap_params.scale_of(params, "dpc"))
    results.write_parquet(table, args.fits, meta)
    results.write_text(aggregate.fits_markdown(table, memcap_params.scale_of(params, "dpc")), args.fits_md)
    authors = published.read(params["dpc"]["paper"], [Path(f) for f in args.reference]) if args.reference else None
    figures.draw(args.figures, runs, table, memcap_params.scale_of(params, "dpc"), authors)


def _kl(args) -> None:
    from memcap import results
    from memcap.dpc import figures, kl

    params = load_params(args)
    t = _preset(params)["theory"]
    table = kl.kl_table(t)
    results.write_parquet(table, args.out, results.provenance(t, scale=memcap_params.scale_of(params, "dpc")))
    figures.kl_figure(table, memcap_params.scale_of(params, "dpc"), args.figures)


def _fidelity(args) -> None:
    from memcap import results
    from pathlib import Path

    from memcap.dpc import fidelity, figures, published
    from memcap.scales import scale_tag

    params = load_params(args)
    scale = memcap_params.scale_of(params, "dpc")
    # the authors' grid is the paper's: their rows are checked against the paper preset at any scale
    files = [Path(f) for f in args.reference] if args.reference else sorted(published.FOLDER.glob("*.csv"))
    authors = published.read(params["dpc"]["paper"], files)
    summary = results.read_parquet(args.summary)
    t = fidelity.table(summary, authors)
    results.write_parquet(t, args.out, results.provenance(
        {"margin": fidelity.MARGIN, "level": fidelity.LEVEL}, scale=scale, inputs=[args.summary],
        reference=sorted(f.name for f in files)))
    results.write_text(fidelity.markdown(t, scale_tag(scale)), args.md)
    figures.fidelity_figure(t, scale, args.figures)
