"""theory: MLT theory made executable: CONSTRUCT, GD vs construction, rank(Z) bounds, Fig 3."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, load_params

HELP = "MLT theory: CONSTRUCT grid, GD vs construction vs bound, rank(Z) bounds, Fig 3"


def register(sub) -> None:
    p = sub.add_parser("construct", help="(a) CONSTRUCT over the grid: rank, cond, c, residual")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the construct table (Parquet)")
    p.set_defaults(func=_construct)

    p = sub.add_parser("gd", help="(b) gradient descent (MLT trainer) vs construction vs bound")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the gd table (Parquet)")
    p.add_argument("--ranks-out", required=True, help="rank(Z) of the trained weights (Prop 2), Parquet")
    p.add_argument("--checkpoint", help="prefix of per-case files: finished cases survive a kill or requeue")
    p.set_defaults(func=_gd)

    p = sub.add_parser("bounds", help="(c) rank(Z) under random/constructed weights vs Props 2, 5")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the rank_bounds table (Parquet)")
    p.set_defaults(func=_bounds)

    p = sub.add_parser("saturation", help="Fig 3's table from the MLT family's attention Parquets")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the saturation table (Parquet)")
    p.add_argument("--attention", nargs="*", default=[],
                   help="attention Parquets of the MLT sweeps with analysis: true")
    p.set_defaults(func=_saturation)

    p = sub.add_parser("summary", help="the family's markdown summary from its tables")
    add_params_args(p)
    _table_args(p)
    p.add_argument("--saturation", required=True)
    p.add_argument("--out", required=True, help="summary.md")
    p.set_defaults(func=_summary)

    p = sub.add_parser("figures", help="construct, capacity, rank_bounds and Fig 3 (PNG/PDF)")
    add_params_args(p)
    _table_args(p)
    p.add_argument("--attention", nargs="*", default=[], help="the MLT attention Parquets (Fig 3)")
    p.add_argument("--attention-runs", nargs="*", default=[],
                   help="the run Parquets of those jobs (Fig 3 shows their train accuracy beside App. H's)")
    p.add_argument("--figures", nargs="+", required=True,
                   help="output paths; the file stem names the figure (construct, capacity, rank_bounds, fig3)")
    p.set_defaults(func=_figures)


def _table_args(p) -> None:
    for name in ("construct", "gd", "rank-bounds", "trained-ranks"):
        p.add_argument(f"--{name}", required=True, help=f"the {name.replace('-', '_')} table (Parquet)")


def _setup(args):
    from memcap import params as memcap_params
    from memcap import runtime
    from memcap.theory.grid import FAMILY

    params = load_params(args)
    runtime.prepare(args.threads)
    return params, memcap_params.preset(params, FAMILY)


def _write(df, path, params, preset, **extra):
    from memcap import results
    from memcap.theory.grid import FAMILY

    # Provenance: the scale and the family's active preset (what every number here depends on).
    results.write_parquet(df, path, results.provenance({"scale": memcap_params.scale_of(params, "theory"), FAMILY: preset}, **extra))


def _construct(args) -> None:
    from memcap.theory import exp_construct

    params, preset = _setup(args)
    _write(exp_construct.run(preset), args.out, params, preset, experiment="construct")


def _gd(args) -> None:
    from memcap.runtime import pick_device, seed_everything
    from memcap.theory import exp_gd

    params, preset = _setup(args)
    seed_everything(0)
    runs, ranks = exp_gd.run(preset, pick_device(params.get("device", "auto")), checkpoint_prefix=args.checkpoint)
    _write(runs, args.out, params, preset, experiment="gradient_descent")
    _write(ranks, args.ranks_out, params, preset, experiment="trained_ranks")
    exp_gd.clear_checkpoints(args.checkpoint, preset)   # only now: a kill before the writes loses no case


def _bounds(args) -> None:
    from memcap.theory import exp_bounds

    params, preset = _setup(args)
    _write(exp_bounds.run(preset), args.out, params, preset, experiment="rank_bounds")


def _attention_scale(paths) -> str:
    """The scale the MLT attention Parquets were trained at (their provenance), not theory's own: under
    the published scales theory is at paper scale while the MLT sweeps behind Fig 3 are quick."""
    from memcap import results

    scales = {results.read_provenance(p).get("scale") for p in paths}
    if len(scales) != 1 or None in scales:
        raise SystemExit(f"theory: the MLT attention Parquets name no single scale in their provenance: {scales}")
    return scales.pop()


def _attention_label(params: dict, att) -> str:
    """Fig 3's label: what its MLT saturation sweeps' settings are (memcap.mlt_synthetic.grid.resolve),
    e.g. "paper settings, 2 of the paper's 6 seeds", not theory's own scale."""
    from memcap import params as memcap_params
    from memcap.mlt_synthetic import grid

    sweeps = grid.resolve(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY))
    return "; ".join(sorted({sweeps[s]["label"] for s in att["sweep"].unique() if s in sweeps})) or "unlabeled"


def _saturation(args) -> None:
    from memcap import results
    from memcap.theory import aggregate

    params, preset = _setup(args)
    att = results.read_parquet(args.attention)
    if att.empty:
        raise SystemExit("theory saturation: no attention Parquets given (no MLT sweep with analysis: true)")
    table = aggregate.saturation_table(att, preset["saturation"]["threshold"], _attention_scale(args.attention),
                                       _attention_label(params, att))
    _write(table, args.out, params, preset, experiment="saturation", inputs=list(args.attention))


def _read_tables(args) -> dict:
    from memcap import results

    return {"construct": results.read_parquet(args.construct), "gd": results.read_parquet(args.gd),
            "rank_bounds": results.read_parquet(args.rank_bounds),
            "trained_ranks": results.read_parquet(args.trained_ranks)}


def _summary(args) -> None:
    import pandas as pd

    from memcap import results
    from memcap.theory import aggregate

    params = load_params(args)
    t = _read_tables(args)
    bounds = pd.concat([t["rank_bounds"], t["trained_ranks"]], ignore_index=True)
    text = aggregate.summary_markdown(t["construct"], t["gd"], bounds, results.read_parquet(args.saturation),
                                      aggregate.scale_label(memcap_params.scale_of(params, "theory")))
    results.write_text(text, args.out)


def _figures(args) -> None:
    from memcap import params as memcap_params
    from memcap import results
    from memcap.theory import figures
    from memcap.theory.aggregate import scale_label
    from memcap.theory.grid import FAMILY

    params = load_params(args)
    preset = memcap_params.preset(params, FAMILY)
    tables = _read_tables(args)
    tables["attention"] = results.read_parquet(args.attention)
    if args.attention_runs:
        from memcap.theory.saturation import train_accuracy

        tables["attention_accuracy"] = train_accuracy(results.read_parquet(args.attention_runs))
    for name, paths in results.by_stem(args.figures).items():
        if name == "fig3" and tables["attention"].empty:
            raise SystemExit("theory figures: fig3 needs --attention Parquets (an MLT sweep with analysis: true)")
        label = (_attention_label(params, tables["attention"]) if name == "fig3"
                 else scale_label(memcap_params.scale_of(params, "theory")))
        fig = figures.draw(name, tables, preset["saturation"], label)
        results.save_figure(fig, paths)
