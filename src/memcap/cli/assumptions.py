"""assumptions: train the digits ViT, run one track's checks, write Tables 1/3 and draw Fig 1."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, load_params

HELP = "MLT assumption checks: digits ViT, one track's rank/Kruskal checks, Tables 1 and 3, Fig 1"


def register(sub) -> None:
    from memcap.assumptions.grid import TRACKS

    p = sub.add_parser("digits-vit", help="train the small ViT on sklearn digits")
    add_params_args(p)
    p.add_argument("--out", required=True, help="checkpoint (.pt) with its test accuracy")
    p.add_argument("--metrics", required=True, help="JSON: train/test accuracy, wall time (DVC metrics)")
    p.set_defaults(func=_digits_vit)

    p = sub.add_parser("track", help="rank, Kruskal, GP and Asm 3 checks of one track")
    add_params_args(p)
    p.add_argument("--track", required=True, choices=list(TRACKS))
    p.add_argument("--digits-vit", help="the trained digits ViT checkpoint (track digits)")
    p.add_argument("--out", required=True, help="Parquet: one row per (model, layer, check)")
    p.add_argument("--curves", required=True, help="Parquet: Fig 1's fraction vs k (may be empty)")
    p.set_defaults(func=_track)

    p = sub.add_parser("aggregate", help="the family Parquet of every check; Tables 1 and 3 (md + LaTeX)")
    add_params_args(p)
    p.add_argument("--out", required=True, help="the family Parquet of every check")
    p.add_argument("--tables", nargs="+", required=True,
                   help="output paths; stem and suffix name the table (table1.md, table3.tex, ...)")
    p.add_argument("--checks", nargs="+", required=True, help="the tracks' checks Parquets")
    p.set_defaults(func=_aggregate)

    p = sub.add_parser("figures", help="Fig 1 (PNG/PDF) from the tracks' curve Parquets")
    add_params_args(p)
    p.add_argument("--figures", nargs="+", required=True, help="output paths; the file stem names the figure (fig1)")
    p.add_argument("--curves", nargs="+", required=True, help="the tracks' curves Parquets")
    p.set_defaults(func=_figures)


def _setup(args):
    from memcap import params as memcap_params
    from memcap import runtime
    from memcap.assumptions.grid import FAMILY

    params = load_params(args)
    runtime.prepare(args.threads)
    return params, memcap_params.preset(params, FAMILY)


def _digits_vit(args) -> None:
    from memcap import results, runtime
    from memcap.assumptions import digits_vit

    params, preset = _setup(args)
    settings = preset["vision"]["digits"]
    model, metrics = digits_vit.train_digits_vit(settings, runtime.pick_device(params["device"]))
    digits_vit.save(model, metrics, args.out)
    results.write_json({**metrics, "provenance": results.provenance(settings, scale=memcap_params.scale_of(params, "assumptions"))},
                       args.metrics)


def _track(args) -> None:
    from memcap import results, runtime
    from memcap.assumptions import sizes, tracks
    from memcap.assumptions.grid import VISION_TRACKS
    from memcap.memory_limit import TooBig

    params, preset = _setup(args)
    said = sizes.problem(f"assumptions track {args.track}", preset, args.track)
    if said:                             # before any model is loaded
        raise TooBig(f"{said}; nothing was loaded")
    device = runtime.pick_device(params["device"])
    if args.track in VISION_TRACKS:
        checks, curves, meta = tracks.run_vision(preset, args.track, device, args.digits_vit)
        section = preset["vision"][args.track]
    else:
        checks, curves, meta = tracks.run_text(preset, args.track, device)
        section = preset["text"][args.track]
    common = {k: preset[k] for k in ("seed", "threshold", "trials")}
    prov = results.provenance({**common, args.track: section}, scale=memcap_params.scale_of(params, "assumptions"), track=args.track,
                              device=str(device), **meta)
    results.write_parquet(curves, args.curves, prov)
    results.write_parquet(checks, args.out, prov)


def _aggregate(args) -> None:
    from pathlib import Path

    from memcap import params as memcap_params
    from memcap import results
    from memcap.assumptions import aggregate
    from memcap.assumptions.grid import FAMILY

    params = load_params(args)
    checks = results.read_parquet(args.checks)
    results.write_parquet(checks, args.out, results.provenance(memcap_params.preset(params, FAMILY),
                                                               scale=memcap_params.scale_of(params, "assumptions"), inputs=args.checks))
    for path in map(Path, args.tables):
        results.write_text(aggregate.render(path.stem, path.suffix.lstrip("."), checks), path)


def _figures(args) -> None:
    from memcap import results
    from memcap.assumptions import figures

    curves = results.read_parquet(args.curves)
    for name, paths in results.by_stem(args.figures).items():
        results.save_figure(figures.draw(name, curves), paths)
