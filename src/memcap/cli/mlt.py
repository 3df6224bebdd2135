"""MLT synthetic family: train one grid point, aggregate, draw figures and the summary table."""

from __future__ import annotations

from memcap.cli import add_params_args, load_params


def register(sub) -> None:
    p = sub.add_parser("mlt-train", help="train every seed of one (sweep, value, T) grid point")
    add_params_args(p)
    p.add_argument("--sweep", required=True)
    p.add_argument("--value", type=int, required=True, help="value of the swept quantity")
    p.add_argument("--dataset-size", type=int, required=True, help="T")
    p.add_argument("--out", required=True, help="Parquet of the runs (one row per seed)")
    p.add_argument("--analysis-out", help="Parquet of max attention weights (saturation sweeps)")
    p.add_argument("--checkpoint", help="resume from / save to this file (preemption, requeue)")
    p.set_defaults(func=_train)

    p = sub.add_parser("mlt-aggregate", help="concatenate run Parquets into the family table")
    add_params_args(p)
    p.add_argument("--out", required=True)
    p.add_argument("--metrics", required=True, help="JSON metrics for DVC")
    p.add_argument("inputs", nargs="+")
    p.set_defaults(func=_aggregate)

    p = sub.add_parser("mlt-figures", help="Figs 2a/2b/2c/4/5 and the run-summary table")
    add_params_args(p)
    p.add_argument("--runs", required=True, help="the aggregate Parquet")
    p.add_argument("--figdir", required=True)
    p.add_argument("--table", required=True, help="markdown run summary")
    p.add_argument("--fits", required=True, help="Parquet of the Fig 2a linear fits")
    p.set_defaults(func=_figures)


def _train(args) -> None:
    from memcap import checkpoint, mlt_sweeps, results, runtime

    params = load_params(args)
    runtime.prepare(args.threads)
    runs, best, model = mlt_sweeps.run_grid_point(params, args.sweep, args.value, args.dataset_size,
                                                  checkpoint_path=args.checkpoint)
    meta = results.provenance(mlt_sweeps.sweep_settings(params, args.sweep), scale=params["scale"],
                              sweep=args.sweep, value=args.value, dataset_size=args.dataset_size)
    if args.analysis_out:
        att = mlt_sweeps.attention_maxima(model, best, params, args.sweep, args.value, args.dataset_size)
        results.write_parquet(att, args.analysis_out, meta)
    results.write_parquet(runs, args.out, meta)
    checkpoint.remove(args.checkpoint)


def _aggregate(args) -> None:
    from memcap import mlt_sweeps, results
    from memcap.mlt_report import aggregate_runs

    params = load_params(args)
    table, metrics = aggregate_runs(results.read_parquet(args.inputs))
    results.write_parquet(table, args.out, results.provenance(params[mlt_sweeps.FAMILY], scale=params["scale"]))
    results.write_json(metrics, args.metrics)


def _figures(args) -> None:
    from memcap import results
    from memcap.mlt_report import draw_all

    load_params(args)
    draw_all(results.read_parquet(args.runs), args.figdir, args.table, args.fits)
