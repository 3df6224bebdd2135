"""params: validate a params file before anything runs."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, load_params

HELP = "validate params (schema, defaults, cross-field checks)"


def register(sub) -> None:
    p = sub.add_parser("check", help="validate a params file and print the active scale")
    add_params_args(p)
    p.set_defaults(func=_check)


def _check(args) -> None:
    params = load_params(args)
    print(f"params OK (scale={memcap_params.scale_label(params)}, device={params['device']})")
