"""`python -m memcap <family> <command>`: the entry points the Snakemake rules call.

Each family has a module here with a one-line HELP and `register(subparsers)`. Every command takes
`--params FILE`: the rules pass the resolved params the Snakemake DAG was built from (params.yaml plus
any --configfile/--config overrides, written by the Snakefile), never params.yaml behind its back.

params.py         validate a params file
mlt_synthetic.py  MLT: train a grid point or a pack, aggregate, draw
theory.py         CONSTRUCT, GD vs construction, rank bounds, Fig 3
dpc.py            DPC: train a curve, aggregate, fit and draw, the KL theory
assumptions.py    the digits ViT, one track's checks, Tables 1/3, Fig 1
capacity.py       the capacity search in rounds, its table and figure
report.py         the scorecard, bits per parameter, the HTML page
provenance.py     can every result be traced to a commit's code?
suite.py          a long run that outlives a machine (run, snapshot, finish)
bundle.py         train on a machine without Snakemake; take the bundle back
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import shlex
import sys
from pathlib import Path

from memcap import params as memcap_params
from memcap import results
from memcap.errors import TrainingFailed
from memcap.provenance import pin as pin_code   # not `provenance`: the name of the CLI submodule
from memcap.quick_exit import skip_final_collection

# One module per family, in the order of the pipeline; each adds its commands.
FAMILIES = ("params", "mlt_synthetic", "theory", "dpc", "assumptions", "capacity", "report", "provenance", "suite",
            "bundle")


def add_params_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default=os.environ.get("MEMCAP_PARAMS", "params.yaml"),
                   help="params file (default: $MEMCAP_PARAMS, which Snakemake sets to the resolved config "
                        "of its DAG for every job; else params.yaml)")
    p.add_argument("--scale", help="override the file's scale (a preset name: quick, paper or your own)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="override the file's device")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: all/SLURM's)")


def add_settings_key_arg(p: argparse.ArgumentParser) -> None:
    """Training commands: the key in the output's name (memcap.keys), checked against the params read."""
    p.add_argument("--settings-key", help="the key in the output's name: the job refuses to run when its "
                                          "params stand for other settings (optional: a check when a job is run by hand)")


def load_params(args: argparse.Namespace) -> dict:
    overrides = {k: getattr(args, k) for k in ("scale", "device") if getattr(args, k, None)}
    return memcap_params.load(args.params, overrides)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memcap", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    families = parser.add_subparsers(dest="family", required=True, metavar="FAMILY")
    listing = []
    for name in FAMILIES:
        module = importlib.import_module(f"memcap.cli.{name}")
        fam = families.add_parser(name, help=module.HELP, description=module.HELP)
        commands = fam.add_subparsers(dest="command", required=True, metavar="COMMAND")
        module.register(commands)
        listing.append(f"  {name:<12} {module.HELP}")
        listing += [f"    {name} {c.dest:<22} {c.help}" for c in commands._choices_actions]
    parser.epilog = "commands by family:\n" + "\n".join(listing)
    return parser


def rerun_command(args: argparse.Namespace, argv: list[str]) -> str | None:
    """The command that reruns this job exactly: its arguments with the params file it read made
    explicit (Snakemake passes it through $MEMCAP_PARAMS, which a pasted command would not have)."""
    if not hasattr(args, "params"):
        return None
    given = any(a == "--params" or a.startswith("--params=") for a in argv)
    return shlex.join(["memcap", *argv, *([] if given else ["--params", str(Path(args.params).resolve())])])


def main(argv: list[str] | None = None) -> None:
    skip_final_collection()   # every job ends ~0.3 CPU-s sooner (memcap.quick_exit)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    rerun = rerun_command(args, argv)
    if rerun and os.environ.get("MEMCAP_PARAMS"):   # a Snakemake job: first in its log, what it read and
        # how to run it again by hand (the environment that names the params file does not paste)
        print(f"memcap: params {Path(args.params).resolve()}\nmemcap: rerun this job with: {rerun}", file=sys.stderr,
              flush=True)
    pin_code()   # the code this job runs, before it runs (results and checkpoints name it)
    try:
        args.func(args)
    except (memcap_params.ParamsError, TrainingFailed, results.UnreadableResult) as e:
        print(f"memcap: {e}", file=sys.stderr)
        sys.exit(2)
    except results.DiskFull as e:
        print(f"memcap: {e.strerror}", file=sys.stderr)
        sys.exit(2)
