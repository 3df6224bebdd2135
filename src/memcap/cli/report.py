"""report: the claims scorecard, bits per parameter and the HTML page, from the families' tables."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, load_params

HELP = "the reproduction report: claims scorecard, bits per parameter, one HTML page (reads tables only)"


def _named(values: list[str]) -> dict[str, str]:
    """NAME=PATH pairs."""
    out = {}
    for v in values or []:
        name, _, path = v.partition("=")
        if not path:
            raise SystemExit(f"memcap: expected NAME=PATH, got {v!r}")
        out[name] = path
    return out


def register(sub) -> None:
    p = sub.add_parser("scorecard", help="one row per paper claim: statistic, test, verdict, scale")
    add_params_args(p)
    p.add_argument("--input", action="append", default=[], metavar="NAME=PATH",
                   help="a family table; names: mlt_runs theory_construct theory_rank_bounds theory_saturation "
                        "assumption_checks dpc_runs dpc_summary dpc_theory capacity")
    p.add_argument("--out", required=True, help="tables/scorecard.parquet")
    p.add_argument("--md", required=True, help="tables/scorecard.md")
    p.add_argument("--metrics", help="verdict counts per kind and per paper, JSON (for `dvc metrics`)")
    p.add_argument("--plot-data", help="claim_id, statistic, ci_low, ci_high, verdict, CSV (for `dvc plots`)")
    p.set_defaults(func=_scorecard)

    p = sub.add_parser("provenance", help="per family, the commits and package versions its results came from")
    add_params_args(p)
    p.add_argument("--input", action="append", default=[], metavar="NAME=PATH", help="as for scorecard")
    p.add_argument("--out", required=True, help="tables/provenance.parquet")
    p.add_argument("--md", required=True, help="tables/provenance.md")
    p.set_defaults(func=_provenance)

    p = sub.add_parser("how-made", help="how each result was made: seeds, jobs, device, hours, packs, commits")
    add_params_args(p)
    p.add_argument("--mlt-runs")
    p.add_argument("--dpc-runs")
    p.add_argument("--capacity-probes")
    p.add_argument("--out", required=True, help="tables/how_made.parquet")
    p.add_argument("--md", required=True, help="tables/how_made.md")
    p.set_defaults(func=_how_made)

    p = sub.add_parser("bits", help="bits per parameter of both families' trained models + its figure")
    add_params_args(p)
    p.add_argument("--mlt-runs")
    p.add_argument("--dpc-runs")
    p.add_argument("--out", required=True, help="tables/bits.parquet")
    p.add_argument("--md", required=True, help="tables/bits.md")
    p.add_argument("--figures", nargs="+", required=True, help="figure paths (bits.png, bits.pdf)")
    p.set_defaults(func=_bits)

    p = sub.add_parser("html", help="the self-contained HTML report (figures inlined)")
    add_params_args(p)
    p.add_argument("--scorecard", required=True)
    p.add_argument("--bits-md", required=True)
    p.add_argument("--capacity", help="the capacity family's table")
    p.add_argument("--capacity-laws", help="the capacity family's fitted laws")
    p.add_argument("--table", action="append", default=[], metavar="NAME=PATH", help="markdown table to include")
    p.add_argument("--figures", nargs="*", default=[], help="PNG figures (figures/<family>/<name>.png), in page order")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_html)


def _meta(params, **extra):
    from memcap import results

    return results.provenance({"scale": memcap_params.scale_label(params)}, **extra)


def _scorecard(args) -> None:
    from pathlib import Path

    from memcap import results
    from memcap.report import claims

    params = load_params(args)
    paths = _named(args.input)
    # A table that was not produced (a run outside Snakemake) makes its claims "not run at this scale".
    tables = {name: results.read_parquet(path) if Path(path).exists() else None for name, path in paths.items()}
    card = claims.scorecard(tables, memcap_params.scales(params))
    results.write_parquet(card, args.out, _meta(params, tables=paths,
                                                 inputs=[p for p in paths.values() if Path(p).exists()]))
    results.write_text(claims.markdown(card), args.md)
    if args.metrics:
        results.write_text(claims.metrics_json(card), args.metrics)
    if args.plot_data:
        results.write_text(claims.plot_data(card).to_csv(index=False), args.plot_data)
    for r in card.itertuples():
        print(f"{r.claim_id}: {r.verdict} ({claims.interval(r) or 'no statistic'})")


def _provenance(args) -> None:
    from pathlib import Path

    from memcap import provenance, results
    from memcap.report import claims, provenance_table

    params = load_params(args)
    named = {k: v for k, v in _named(args.input).items() if Path(v).exists()}
    df = provenance_table.table(named, claims.INPUT_FAMILY, provenance.read_notes())
    results.write_parquet(df, args.out, _meta(params, inputs=list(named.values())))
    results.write_text(provenance_table.markdown(df), args.md)


def _how_made(args) -> None:
    from memcap import results
    from memcap.report import how_made

    params = load_params(args)
    read = {k: results.read_parquet(v) if v else None for k, v in
            (("mlt", args.mlt_runs), ("dpc", args.dpc_runs), ("capacity", args.capacity_probes))}
    t = how_made.table(read["mlt"], read["dpc"], read["capacity"])
    inputs = [v for v in (args.mlt_runs, args.dpc_runs, args.capacity_probes) if v]
    results.write_parquet(t, args.out, _meta(params, inputs=inputs))
    results.write_text(how_made.markdown(t), args.md)


def _bits(args) -> None:
    from memcap import results
    from memcap.report import bits, figures

    params = load_params(args)
    mlt = results.read_parquet(args.mlt_runs) if args.mlt_runs else None
    dpc = results.read_parquet(args.dpc_runs) if args.dpc_runs else None
    table = bits.bits_table(mlt, dpc)
    notes = bits.skipped(mlt, dpc)
    results.write_parquet(table, args.out, _meta(params, skipped=notes, references=bits.REFERENCES))
    results.write_text(bits.markdown(table, notes), args.md)
    figures.draw(table, args.figures)


def _html(args) -> None:
    from pathlib import Path

    from memcap import results
    from memcap.report import html

    params = load_params(args)
    card = results.read_parquet(args.scorecard)
    cap = results.read_parquet(args.capacity) if args.capacity else None
    laws = results.read_parquet(args.capacity_laws) if args.capacity_laws else None
    tables = {name: Path(p).read_text() for name, p in _named(args.table).items()}
    page = html.build(card, Path(args.bits_md).read_text(), cap, [Path(f) for f in args.figures], tables,
                      memcap_params.scale_label(params), laws,
                      memcap_params.scales(params)["capacity"])
    results.write_text(page, args.out)
