"""Commands shared by every family."""

from __future__ import annotations

from memcap import config


def register(sub) -> None:
    from memcap.cli import add_params_args

    p = sub.add_parser("check-params", help="validate params.yaml and print the active scale")
    add_params_args(p)
    p.set_defaults(func=_check)


def _check(args) -> None:
    from memcap.cli import load_params

    params = load_params(args)
    print(f"params OK (scale={params['scale']}, device={params['device']})")
