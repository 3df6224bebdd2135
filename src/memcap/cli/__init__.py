"""`python -m memcap <command>`: the entry points the Snakemake rules call.

Each family has a module in this package with `register(subparsers)`; its commands take
`--params params.yaml` (validated before anything runs) and `--scale/--device` overrides that the
rules pass from Snakemake's config, so `snakemake --config scale=paper` reaches every job.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from memcap import config

# One module per family; each adds its subcommands.
FAMILY_CLIS = ["memcap.cli.common", "memcap.cli.mlt", "memcap.cli.theory", "memcap.cli.dpc", "memcap.cli.assumptions",
              "memcap.cli.report"]


def add_params_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    p.add_argument("--scale", choices=["quick", "paper"], help="override params.yaml's scale")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="override params.yaml's device")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: all/SLURM's)")


def load_params(args: argparse.Namespace) -> dict:
    overrides = {k: getattr(args, k) for k in ("scale", "device") if getattr(args, k, None)}
    return config.load(args.params, overrides)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memcap", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in FAMILY_CLIS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except config.ParamsError as e:
        print(f"memcap: {e}", file=sys.stderr)
        sys.exit(2)
