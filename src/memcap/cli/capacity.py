"""capacity: search architectures' capacities in rounds, then gather the table and draw its figure."""

from __future__ import annotations

from pathlib import Path

from memcap.cli import add_params_args, load_params

HELP = "capacity by search: the largest T an MLT architecture memorizes, per seed, and T* over seeds"


def register(sub) -> None:
    p = sub.add_parser("search", help="search the capacity of the architectures of these rows (one job: "
                                      "one architecture on a CPU, or all of them as packs on a GPU)")
    add_params_args(p)
    p.add_argument("--runs", nargs="+", required=True,
                   help="the rows to write: results/capacity/runs/<preset>/H<H>_dh<d_h>-<key>.parquet")
    p.add_argument("--probes-per-round", type=int, default=1,
                   help="probes a seed a round (1: bisection; k: the bracket split in k + 1)")
    p.add_argument("--checkpoint", help="the round's checkpoint (default: checkpoints/capacity/<first row's name>)")
    p.set_defaults(func=_search)

    p = sub.add_parser("aggregate", help="the capacity table (bounds, bits, laws), its probes and the figure")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the family table (tables/capacity.parquet)")
    p.add_argument("--markdown", required=True, help="the table as markdown (tables/capacity.md)")
    p.add_argument("--laws", required=True, help="the fitted laws (tables/laws.parquet)")
    p.add_argument("--probes", required=True, help="every probe of these rows (tables/probes.parquet)")
    p.add_argument("--figures", nargs="+", required=True, help="figure paths (capacity.png, capacity.pdf)")
    p.add_argument("--runs", nargs="+", required=True, help="per-architecture rows")
    p.set_defaults(func=_aggregate)


def _search(args) -> None:
    import pandas as pd

    from memcap import keys, results, runtime
    from memcap import params as memcap_params
    from memcap.capacity import grid, rounds, summary
    from memcap.capacity.store import ProbeStore

    params = load_params(args)
    runtime.prepare(args.threads)
    scale = memcap_params.scale_of(params, grid.FAMILY)
    p = memcap_params.preset(params, grid.FAMILY)
    archs = [grid.parse_run_name(r) for r in args.runs]
    for run, (H, dh) in zip(args.runs, archs):   # each row's name stands for the settings read
        keys.check(Path(run).stem.rsplit("-", 1)[1], scale, grid.search_settings(p, H, dh), args.params)
    runs_dir = Path(args.runs[0]).parent.parent
    checkpoint = args.checkpoint or f"checkpoints/{grid.FAMILY}/{Path(args.runs[0]).parent.name}/{Path(args.runs[0]).stem}"
    device = runtime.pick_device(params["device"])
    trained = rounds.run(archs, p, runs_dir, device, checkpoint, k=args.probes_per_round,
                         checkpoint_every_s=p.get("checkpoint_every_s", 300.0), preset=scale)
    print(f"{trained} rounds trained here")
    for run, (H, dh) in zip(args.runs, archs):
        row = summary.row(p, H, dh, ProbeStore(runs_dir, p, H, dh, scale).table(), scale, args.probes_per_round)
        results.write_parquet(pd.DataFrame([row]), run, results.provenance(p, scale=scale, heads=H, head_dim=dh))
        print({k: row[k] for k in ("heads", "head_dim", "status", "capacity", "capacity_min", "budget_limited")})


def _aggregate(args) -> None:
    from memcap import params as memcap_params
    from memcap import results
    from memcap.capacity import aggregate, figures, grid

    params = load_params(args)
    p = memcap_params.preset(params, grid.FAMILY)
    scale = memcap_params.scale_of(params, grid.FAMILY)
    probes = aggregate.probes(args.runs, p).assign(scale=scale)
    cap = aggregate.table(results.read_parquet(args.runs), probes)
    laws = aggregate.laws(cap, p)
    meta = results.provenance(p, scale=scale, inputs=args.runs)
    results.write_parquet(cap, args.out, meta)
    results.write_parquet(laws, args.laws, meta)
    results.write_parquet(probes, args.probes, meta)
    results.write_text(aggregate.markdown(cap, laws, scale), args.markdown)
    figures.draw(cap, laws, p, args.figures)
