"""capacity: search one architecture's capacity, then gather the table and draw its figure."""

from __future__ import annotations

from memcap.cli import add_params_args, add_settings_key_arg, load_params

HELP = "capacity by search: the largest T every seed of an MLT architecture memorizes"


def register(sub) -> None:
    p = sub.add_parser("search", help="bracketing search over T for one (H, d_h) architecture")
    add_params_args(p)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--head-dim", type=int, required=True)
    p.add_argument("--out", required=True, help="Parquet with the architecture's one row")
    add_settings_key_arg(p)
    p.set_defaults(func=_search)

    p = sub.add_parser("aggregate", help="the capacity table (both bounds) and the capacity figure")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the family table (tables/capacity.parquet)")
    p.add_argument("--figures", nargs="+", required=True, help="figure paths (capacity.png, capacity.pdf)")
    p.add_argument("--runs", nargs="+", required=True, help="per-architecture search Parquets")
    p.set_defaults(func=_aggregate)


def _search(args) -> None:
    from memcap import params as memcap_params
    from memcap import keys, results, runtime
    from memcap.capacity.grid import FAMILY, search_settings
    from memcap.capacity.search import search_architecture

    params = load_params(args)
    runtime.prepare(args.threads)
    p = memcap_params.preset(params, FAMILY)
    keys.check(args.settings_key, memcap_params.scale_of(params, FAMILY), search_settings(p, args.heads, args.head_dim),
               args.params)
    row = search_architecture(p, args.heads, args.head_dim, memcap_params.scale_of(params, "capacity"), params["device"], progress=True)
    results.write_parquet(row, args.out, results.provenance(p, scale=memcap_params.scale_of(params, "capacity"), heads=args.heads,
                                                            head_dim=args.head_dim))
    print(row.drop(columns="trace").to_string(index=False))


def _aggregate(args) -> None:
    from memcap import params as memcap_params
    from memcap import results
    from memcap.capacity import aggregate, figures
    from memcap.capacity.grid import FAMILY

    params = load_params(args)
    p = memcap_params.preset(params, FAMILY)
    cap = aggregate.table(results.read_parquet(args.runs))
    results.write_parquet(cap, args.out, results.provenance(p, scale=memcap_params.scale_of(params, "capacity"),
                                                            inputs=args.runs))
    figures.draw(cap, p, args.figures)
