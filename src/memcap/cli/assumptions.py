"""Assumption-check family: train the digits ViT, run one track's checks, draw Tables 1/3 and Fig 1."""

from __future__ import annotations

from memcap.cli import add_params_args, load_params


def register(sub) -> None:
    p = sub.add_parser("assumptions-digits-vit", help="train the small ViT on sklearn digits")
    add_params_args(p)
    p.add_argument("--out", required=True, help="checkpoint (.pt) with its test accuracy")
    p.add_argument("--metrics", required=True, help="JSON: train/test accuracy, wall time")
    p.set_defaults(func=_digits_vit)

    p = sub.add_parser("assumptions-track", help="rank, Kruskal, GP and Asm 3 checks of one track")
    add_params_args(p)
    p.add_argument("--track", required=True, choices=["photos", "digits", "gpt2", "bert"])
    p.add_argument("--digits-vit", help="the trained digits ViT checkpoint (track digits)")
    p.add_argument("--out", required=True, help="Parquet: one row per (model, layer, check)")
    p.add_argument("--curves", required=True, help="Parquet: Fig 1's fraction vs k (may be empty)")
    p.set_defaults(func=_track)

    p = sub.add_parser("assumptions-report", help="Table 1, Table 3 (md + LaTeX) and Fig 1")
    add_params_args(p)
    p.add_argument("--checks", nargs="+", required=True)
    p.add_argument("--curves", nargs="+", required=True)
    p.add_argument("--out", required=True, help="the family Parquet of every check")
    p.add_argument("--tabledir", required=True)
    p.add_argument("--figdir", required=True)
    p.set_defaults(func=_report)


def _digits_vit(args) -> None:
    from memcap import config, results, runtime
    from memcap.assumptions import digits_vit
    from memcap.assumptions.family import FAMILY

    params = load_params(args)
    runtime.prepare(args.threads)
    settings = config.preset(params, FAMILY)["vision"]["digits"]
    model, metrics = digits_vit.train_digits_vit(settings, runtime.pick_device(params["device"]))
    digits_vit.save(model, metrics, args.out)
    results.write_json({**metrics, "provenance": results.provenance(settings, scale=params["scale"])},
                       args.metrics)


def _track(args) -> None:
    from memcap import config, results, runtime
    from memcap.assumptions import tracks
    from memcap.assumptions.family import FAMILY

    params = load_params(args)
    runtime.prepare(args.threads)
    preset = config.preset(params, FAMILY)
    device = runtime.pick_device(params["device"])
    if args.track in ("photos", "digits"):
        checks, curves, meta = tracks.run_vision(preset, args.track, device, args.digits_vit)
        section = preset["vision"][args.track]
    else:
        checks, curves, meta = tracks.run_text(preset, args.track, device)
        section = preset["text"][args.track]
    common = {k: preset[k] for k in ("seed", "threshold", "trials")}
    prov = results.provenance({**common, args.track: section}, scale=params["scale"], track=args.track,
                              device=str(device), **meta)
    results.write_parquet(curves, args.curves, prov)
    results.write_parquet(checks, args.out, prov)


def _report(args) -> None:
    from memcap import config, results
    from memcap.assumptions import report
    from memcap.assumptions.family import FAMILY

    params = load_params(args)
    checks = results.read_parquet(args.checks)
    curves = results.read_parquet(args.curves)
    results.write_parquet(checks, args.out, results.provenance(config.preset(params, FAMILY),
                                                               scale=params["scale"], inputs=args.checks))
    report.write_tables(checks, args.tabledir)
    report.draw_fig1(curves, args.figdir)
