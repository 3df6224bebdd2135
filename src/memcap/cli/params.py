"""params: validate a params file before anything runs."""

from __future__ import annotations

from memcap import params as memcap_params
from memcap.cli import add_params_args, load_params

HELP = "validate params (schema, defaults, cross-field checks)"


def register(sub) -> None:
    p = sub.add_parser("check", help="validate a params file and print the active scale")
    add_params_args(p)
    p.add_argument("--stamp", help="on success, write this file (DVC's first stage: its content never "
                                   "changes, so a valid params change reruns only the stages it touches)")
    p.set_defaults(func=_check)


def _check(args) -> None:
    params = load_params(args)
    problem = None if args.scale else memcap_params.dvc_scale_problem(params["scale"])
    if problem:
        raise memcap_params.ParamsError(f"invalid params:\n  {problem}")
    if args.stamp:
        from memcap.results import write_text

        write_text("params.yaml passed `memcap params check` (schema and cross-field checks)\n", args.stamp)
    print(f"params OK (scale={memcap_params.scale_label(params)}, device={params['device']})")
    for line in memcap_params.slow_jobs(params):
        print(f"note: {line}")
