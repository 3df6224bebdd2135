"""MLT theory family: CONSTRUCT grid, GD vs construction, rank(Z) bounds, Fig 3, figures and table."""

from __future__ import annotations

from memcap.cli import add_params_args, load_params


def register(sub) -> None:
    p = sub.add_parser("theory-construct", help="(a) CONSTRUCT over the grid: rank, cond, c, residual")
    add_params_args(p)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_construct)

    p = sub.add_parser("theory-gd", help="(b) gradient descent (spine trainer) vs construction vs bound")
    add_params_args(p)
    p.add_argument("--out", required=True)
    p.add_argument("--ranks-out", required=True, help="rank(Z) of the trained weights (Prop 2)")
    p.set_defaults(func=_gd)

    p = sub.add_parser("theory-bounds", help="(c) rank(Z) under random/constructed weights vs Props 2, 5")
    add_params_args(p)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_bounds)

    p = sub.add_parser("theory-saturation", help="Fig 3 and its summary from the spine's attention Parquets")
    add_params_args(p)
    p.add_argument("--out", required=True, help="summary Parquet")
    p.add_argument("--figure", required=True, help="figure path without extension (PNG and PDF)")
    p.add_argument("inputs", nargs="*")
    p.set_defaults(func=_saturation)

    p = sub.add_parser("theory-figures", help="construct / capacity / rank-bound figures and summary.md")
    add_params_args(p)
    for name in ("construct", "gd", "bounds", "trained-ranks", "saturation"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--figdir", required=True)
    p.add_argument("--table", required=True)
    p.set_defaults(func=_figures)


def scale_label(params: dict) -> str:
    if params["scale"] == "quick":
        return "quick preset: a stand-in with smaller d, n, H, T and steps than the paper"
    return "paper preset"


def _setup(args):
    from memcap import runtime

    params = load_params(args)
    runtime.prepare(args.threads)
    return params


def _write(df, path, params, **extra):
    from memcap import results
    from memcap.theory.mlt_experiments import settings_for

    results.write_parquet(df, path, results.provenance(settings_for(params), **extra))


def _construct(args) -> None:
    from memcap.theory.mlt_experiments import construct_grid

    params = _setup(args)
    _write(construct_grid(params), args.out, params, experiment="construct")


def _gd(args) -> None:
    from memcap.runtime import seed_everything
    from memcap.theory.mlt_experiments import gradient_descent

    params = _setup(args)
    seed_everything(0)
    runs, ranks = gradient_descent(params)
    _write(runs, args.out, params, experiment="gradient_descent")
    _write(ranks, args.ranks_out, params, experiment="trained_ranks")


def _bounds(args) -> None:
    from memcap.theory.mlt_experiments import rank_bounds

    params = _setup(args)
    _write(rank_bounds(params), args.out, params, experiment="rank_bounds")


def _saturation(args) -> None:
    import pandas as pd

    from memcap import results
    from memcap.theory import saturation
    from memcap.theory.mlt_experiments import preset

    params = _setup(args)
    p = preset(params)["saturation"]
    att = results.read_parquet(args.inputs)
    if att.empty:
        raise SystemExit("theory-saturation: no attention Parquets given (no sweep with analysis: true)")
    table = saturation.summary(att, p["threshold"])
    table.insert(0, "scale", params["scale"])
    table["stand_in"] = params["scale"] == "quick"
    saturation.draw_fig3(att, p["threshold"], p["examples_shown"], args.figure, scale_label(params))
    _write(pd.DataFrame(table), args.out, params, experiment="saturation", inputs=list(args.inputs))


def _figures(args) -> None:
    import pandas as pd

    from memcap import results
    from memcap.theory import mlt_figures as MF

    params = load_params(args)
    label = scale_label(params)
    con, gd, sat = (results.read_parquet(p) for p in (args.construct, args.gd, args.saturation))
    bounds = pd.concat([results.read_parquet(args.bounds), results.read_parquet(args.trained_ranks)],
                       ignore_index=True)
    MF.draw_construct(con, f"{args.figdir}/theory_construct", label)
    MF.draw_capacity(gd, f"{args.figdir}/theory_capacity", label)
    MF.draw_rank_bounds(bounds, f"{args.figdir}/theory_rank_bounds", label)
    results.write_text(MF.summary_markdown(con, gd, bounds, sat, label), args.table)
