"""capacity: search architectures' capacities in rounds, then gather the table and draw its figure."""

from __future__ import annotations

from pathlib import Path

from memcap.cli import add_params_args, load_params

HELP = "capacity by search: T50, the dataset size half the trained models memorize, per architecture"


def register(sub) -> None:
    p = sub.add_parser("search", help="search the capacity of the architectures of these rows (one job: "
                                      "one architecture on a CPU, or all of them as packs on a GPU)")
    add_params_args(p)
    p.add_argument("--runs", nargs="+", required=True,
                   help="the rows to write: results/capacity/runs/<preset>/H<H>_dh<d_h>-<key>.parquet")
    p.add_argument("--probes-per-round", type=int, default=1,
                   help="probes a seed a round (1: bisection, the fewest core-hours on a CPU; 0: as many as fill "
                        "a round's pack of 12 models, for a GPU; k: the bracket split in k + 1)")
    p.add_argument("--cuda-graphs", action="store_true",
                   help="replay each step from CUDA graphs (a GPU; run benchmarks/graph_check.py there first)")
    p.add_argument("--checkpoint", help="the round's checkpoint (default: checkpoints/capacity/<first row's name>)")
    p.set_defaults(func=_search)

    p = sub.add_parser("rows", help="the rows of the active capacity preset (a composite: each member's), "
                                    "as `search --runs` takes them; where Snakemake is not installed")
    add_params_args(p)
    p.add_argument("--missing", action="store_true", help="only the rows not written yet")
    p.set_defaults(func=_rows)

    p = sub.add_parser("aggregate", help="the capacity table (bounds, bits, laws), its probes and the figure")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the family table (tables/capacity.parquet)")
    p.add_argument("--markdown", required=True, help="the table as markdown (tables/capacity.md)")
    p.add_argument("--csv", required=True, help="the table as CSV (tables/capacity.csv), the report's download")
    p.add_argument("--laws", required=True, help="the fitted laws (tables/laws.parquet)")
    p.add_argument("--probes", required=True, help="every probe of these rows (tables/probes.parquet)")
    p.add_argument("--figures", nargs="+", required=True, help="figure paths (capacity.png, capacity.pdf)")
    p.add_argument("--runs", nargs="+", required=True, help="per-architecture rows")
    p.add_argument("--mlt-runs", help="the MLT family's runs table (its runs of a row's shape join the row's "
                                      "curve of memorized bits against T)")
    p.set_defaults(func=_aggregate)


def _rows(args) -> None:
    from memcap import params as memcap_params
    from memcap.capacity import grid, settings

    params = load_params(args)
    section = params[grid.FAMILY]
    for name in settings.members(section, memcap_params.scale_of(params, grid.FAMILY)):
        for H, dh in grid.architectures(section[name]):
            run = f"results/{grid.FAMILY}/runs/{grid.run_name(name, section[name], H, dh)}"
            if not (args.missing and Path(run).exists()):
                print(run)


def _search(args) -> None:
    import pandas as pd

    from memcap import keys, results, runtime
    from memcap import params as memcap_params
    from memcap.capacity import aggregate, grid, rounds, settings, summary
    from memcap.capacity.store import store

    params = load_params(args)
    runtime.prepare(args.threads)
    # the rows' preset is their folder (runs/<preset>/): the active one, or one its composite names
    names = {aggregate.preset_of(r) for r in args.runs}
    if len(names) != 1:
        raise SystemExit(f"capacity search: the rows belong to presets {sorted(names)}; one job searches one preset")
    scale = names.pop()
    if scale not in settings.members(params[grid.FAMILY], memcap_params.scale_of(params, grid.FAMILY)):
        raise SystemExit(f"capacity search: {scale!r} is not the active capacity preset nor one of its settings")
    p = params[grid.FAMILY][scale]
    archs = [grid.parse_run_name(r) for r in args.runs]
    for run, (H, dh) in zip(args.runs, archs):   # each row's name stands for the settings read
        keys.check(Path(run).stem.rsplit("-", 1)[1], scale, grid.search_settings(p, H, dh), args.params)
    runs_dir = Path(args.runs[0]).parent.parent
    checkpoint = args.checkpoint or f"checkpoints/{grid.FAMILY}/{Path(args.runs[0]).parent.name}/{Path(args.runs[0]).stem}"
    device = runtime.pick_device(params["device"])
    trained = rounds.run(archs, p, runs_dir, device, checkpoint, k=args.probes_per_round or None,
                         checkpoint_every_s=p.get("checkpoint_every_s", 300.0), preset=scale,
                         cuda_graphs=args.cuda_graphs)
    print(f"{trained} rounds trained here")
    for run, (H, dh) in zip(args.runs, archs):
        row = summary.row(p, H, dh, store(runs_dir, p, H, dh, scale).table(), scale, args.probes_per_round)
        results.write_parquet(pd.DataFrame([row]), run, results.provenance(p, scale=scale, heads=H, head_dim=dh))
        print({k: row[k] for k in ("heads", "head_dim", "seeds", "search_end", "capacity", "capacity_ci_low",
                                   "capacity_ci_high", "budget_limited")})


def _aggregate(args) -> None:
    from memcap import params as memcap_params
    from memcap import results
    from memcap.capacity import aggregate, figures, grid, settings, words

    params = load_params(args)
    scale = memcap_params.scale_of(params, grid.FAMILY)
    section = params[grid.FAMILY]
    p = {name: section[name] for name in settings.members(section, scale)}
    probes = aggregate.probes(args.runs, section)
    rows = results.read_parquet(args.runs)
    rows["scale"] = [aggregate.preset_of(r) for r in args.runs]   # one row a file, in order
    # read where it is at hand (DVC builds it first: the capacity stage lists it); absent, the rows say so
    mlt_runs = results.read_parquet([args.mlt_runs]) if args.mlt_runs and Path(args.mlt_runs).exists() else None
    cap = aggregate.table(rows, probes, section, mlt_runs)
    laws = aggregate.laws(cap, section)
    meta = results.provenance(p, scale=scale, inputs=args.runs)
    results.write_parquet(cap, args.out, meta)
    results.write_parquet(laws, args.laws, meta)
    results.write_parquet(probes, args.probes, meta)
    results.write_text(words.markdown(cap, laws, scale), args.markdown)
    results.write_text(cap.to_csv(index=False), args.csv)
    figures.draw(cap, laws, section, args.figures, probes, mlt_runs)
