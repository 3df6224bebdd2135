"""mlt: train one grid point, aggregate the family table, draw the figures, the fits and the summary."""

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

    params = load_params(args)
    runtime.prepare(args.threads)
    sweeps = grid.resolve(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY))
    s = grid.sweep_settings(sweeps, args.sweep)
    # The job's seeds are those its file's key stands for (one seed group of the grid point).
    s = {**s, "seeds": grid.seeds_for_key(s, args.settings_key, args.params)}
    labels = {"family": grid.FAMILY, "sweep": args.sweep, "scale": s["preset"]}
    runs, best, model = train_point(s, args.value, args.dataset_size, params["device"], labels=labels,
                                    checkpoint_path=args.checkpoint,
                                    checkpoint_every_s=s["checkpoint_every_s"],
                                    desc=f"{args.sweep} {s['vary']}={args.value} T={args.dataset_size}")
    meta = results.provenance(grid.point_settings(s, s["seeds"]), scale=s["preset"], sweep=args.sweep,
                              value=args.value, dataset_size=args.dataset_size)
    if args.attention_out:
        att = attention_maxima(model, best, s, args.dataset_size, args.sweep)
        results.write_parquet(att, args.attention_out, meta)
    results.write_parquet(runs, args.out, meta)
    checkpoint.remove(args.checkpoint)


def _aggregate(args) -> None:
    from memcap import results
    from memcap.mlt_synthetic.aggregate import aggregate_runs
    from memcap.mlt_synthetic.grid import FAMILY, resolve

    params = load_params(args)
    sweeps = resolve(params[FAMILY], memcap_params.scale_of(params, FAMILY))
    table, metrics = aggregate_runs(results.read_parquet(args.inputs), {k: s["label"] for k, s in sweeps.items()})
    results.write_parquet(table, args.out, results.provenance(params[FAMILY], inputs=args.inputs,
                                                              scale=memcap_params.scale_of(params, "mlt_synthetic")))
    results.write_json(metrics, args.metrics)


def _figures(args) -> None:
    from memcap import results
    from memcap.mlt_synthetic import figures, grid

    load_params(args)
    runs = results.read_parquet(args.runs)
    fits = figures.fig2a_fits(runs)
    figures.draw(runs, fits, args.figures)
    results.write_parquet(fits, args.fits, results.provenance({"saturation_acc": grid.SATURATION_ACC}))
    results.write_text(figures.summary_markdown(runs, fits), args.summary)
