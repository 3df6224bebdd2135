"""DPC family: train one curve, aggregate, fit and draw, and the theory table."""

from __future__ import annotations

from memcap.cli import add_params_args, load_params


def register(sub) -> None:
    p = sub.add_parser("dpc-train", help="train every grid point of one DPC curve (all repetitions batched)")
    add_params_args(p)
    p.add_argument("--experiment", required=True)
    p.add_argument("--series", required=True, help="series value (e.g. d), or 'all' for experiments without one")
    p.add_argument("--out", required=True, help="Parquet of the runs (one row per grid point and repetition)")
    p.add_argument("--checkpoint", help="prefix of per-grid-point checkpoints (preemption, requeue)")
    p.set_defaults(func=_train)

    p = sub.add_parser("dpc-aggregate", help="concatenate DPC run Parquets; per-grid-point summary")
    add_params_args(p)
    p.add_argument("--out", required=True, help="aggregate runs Parquet")
    p.add_argument("--summary", required=True, help="per-grid-point mean/sd Parquet")
    p.add_argument("--metrics", required=True, help="JSON metrics for DVC")
    p.add_argument("inputs", nargs="+")
    p.set_defaults(func=_aggregate)

    p = sub.add_parser("dpc-report", help="DPC fits (Parquet + markdown) and figures")
    add_params_args(p)
    p.add_argument("--runs", required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("--fits", required=True, help="Parquet of fitted coefficients")
    p.add_argument("--fits-md", required=True, help="markdown table of the fitted slopes")
    p.add_argument("--figdir", required=True)
    p.set_defaults(func=_report)

    p = sub.add_parser("dpc-theory", help="Prop 3 / Theorem 2 / LS-vs-WLS KL table and figure")
    add_params_args(p)
    p.add_argument("--out", required=True)
    p.add_argument("--figdir", required=True)
    p.set_defaults(func=_theory)


def _train(args) -> None:
    from memcap import results, runtime
    from memcap.dpc import experiments

    params = load_params(args)
    runtime.prepare(args.threads)
    runs = experiments.run_job(params, args.experiment, args.series, checkpoint_prefix=args.checkpoint)
    meta = results.provenance(experiments.settings(params, args.experiment), scale=params["scale"],
                              experiment=args.experiment, series=args.series)
    results.write_parquet(runs, args.out, meta)


def _aggregate(args) -> None:
    from memcap import results
    from memcap.dpc import report

    params = load_params(args)
    runs = results.read_parquet(args.inputs)
    meta = results.provenance(params["dpc"][params["scale"]], scale=params["scale"])
    results.write_parquet(runs, args.out, meta)
    results.write_parquet(report.summarise(runs), args.summary, meta)
    results.write_json(report.metrics(runs), args.metrics)


def _report(args) -> None:
    from memcap import results
    from memcap.dpc import figures, report

    params = load_params(args)
    runs, points = results.read_parquet(args.runs), results.read_parquet(args.summary)
    table = report.fit_table(points)
    meta = results.provenance(params["dpc"][params["scale"]], scale=params["scale"])
    results.write_parquet(table, args.fits, meta)
    results.write_text(report.fits_markdown(table, params["scale"]), args.fits_md)
    figures.draw_all(runs, table, params["scale"], args.figdir)


def _theory(args) -> None:
    from memcap import results
    from memcap.dpc import figures
    from memcap.theory import dpc_kl

    params = load_params(args)
    t = params["dpc"][params["scale"]]["theory"]
    table = dpc_kl.theory_table(t)
    results.write_parquet(table, args.out, results.provenance(t, scale=params["scale"]))
    figures.theory_figure(table, params["scale"], args.figdir)
