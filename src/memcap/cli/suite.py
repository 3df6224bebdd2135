"""suite: a run of some families at a preset (the papers' scale) that outlives a machine.

    memcap suite run --scale dpc=paper --scale theory=paper dpc theory   # train what is left
    memcap suite snapshot                  # DVC-track what is finished (wip/suite) and push it
    memcap suite run                       # later, any machine: restore it, train the rest
    memcap suite run --first scale_head_shared   # those MLT sweeps' jobs before the others
    memcap suite finish                    # every job done: params.yaml's scale, aggregate, dvc.lock

Every job writes one Parquet and checkpoints its grid points, so a kill loses at most the point in
training. `run` and `finish` without --scale continue the run in wip/suite (its suite.yaml).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HELP = "long runs at the papers' scale, resumable on any machine (run | snapshot | finish)"


def register(sub) -> None:
    for name, text in (("run", "restore what earlier runs finished, then train the rest"),
                       ("snapshot", "copy what is finished into wip/suite, DVC-track it, push it (published remote)"),
                       ("finish", "every job done: set params.yaml's scale, aggregate, record in dvc.lock")):
        p = sub.add_parser(name, help=text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("families", nargs="*", metavar="FAMILY", help="default: those of --scale, or of wip/suite")
        p.add_argument("--scale", action="append", default=[], metavar="FAMILY=PRESET",
                       help="the run's preset for a family (default: wip/suite's, else params.yaml's)")
        if name != "snapshot":
            p.add_argument("--cores", default="all", help="Snakemake's --cores (default: all)")
        if name == "run":
            p.add_argument("--first", nargs="+", default=[], metavar="SWEEP",
                           help="MLT sweeps whose jobs train before the others (Snakemake's --prioritize)")
        p.set_defaults(func=globals()[f"_{name}"])


def _plan(args) -> tuple[dict[str, str], list[str]]:
    """The run's scales (every family) and families, from --scale, wip/suite or params.yaml."""
    from memcap import params as memcap_params
    from memcap import suite

    saved = suite.saved_run() or {}
    scales = memcap_params.scales(memcap_params.load("params.yaml"))
    scales.update(saved.get("scale", {}))
    chosen = {}
    for item in args.scale:
        family, _, preset = item.partition("=")
        if family not in memcap_params.FAMILIES or not preset:
            sys.exit(f"memcap suite: --scale {item!r}: expected FAMILY=PRESET with FAMILY one of "
                     f"{list(memcap_params.FAMILIES)}")
        chosen[family] = preset
    scales.update(chosen)
    families = args.families or list(chosen) or saved.get("families") or []
    if not families:
        sys.exit("memcap suite: name the families to run (e.g. `memcap suite run --scale dpc=paper dpc`)")
    memcap_params.validate({**memcap_params.read_yaml("params.yaml"), "scale": scales})   # a preset that exists
    return scales, families


def _config(scales: dict[str, str]) -> str:
    """A Snakemake --configfile with the run's scales: the jobs run exactly these presets."""
    import yaml

    path = Path(".snakemake/memcap/suite-config.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"scale": scales}))
    return str(path)


def _sh(*cmd: str, capture: bool = False) -> str:
    out = subprocess.run(cmd, check=True, text=True, capture_output=capture)
    return out.stdout if capture else ""


def forget_metadata(paths: list[Path]) -> None:
    """Snakemake forgets what it recorded of these files (a replaced file is not the one it made)."""
    cleanup = subprocess.run(["snakemake", "--cleanup-metadata", *map(str, paths), "all"],
                             text=True, capture_output=True)
    # a file dvc pull restored has no metadata: nothing to forget (Snakemake fails, saying so)
    if cleanup.returncode and "metadata was not present" not in cleanup.stderr + cleanup.stdout:
        sys.exit(f"memcap suite: snakemake --cleanup-metadata failed:\n{cleanup.stderr}{cleanup.stdout}")


def _restore() -> None:
    from memcap import suite

    if not Path(f"{suite.WIP}.dvc").exists():
        return
    _sh("dvc", "pull", "--quiet", f"{suite.WIP}.dvc")
    try:
        copied, kept, replaced = suite.restore()
    except ValueError as err:
        sys.exit(f"memcap suite: {err}")
    if replaced:   # Snakemake must not take a replaced file for the one it made
        print(f"replaced {len(replaced)} results not at the run's scale")
        forget_metadata(replaced)
    print(f"{suite.WIP}: {copied + kept} finished results and checkpoints of the run; restored {copied}, "
          f"kept {kept} already here")


def _run(args) -> None:
    from memcap import suite

    _restore()
    scales, families = _plan(args)
    config = _config(scales)
    one_thread = [f"{rule}=1" for f in families for rule in suite.TRAIN_RULES.get(f, [])]
    first = suite.first_runs(scales, args.first) if args.first else []
    prioritize = ["--prioritize", *first] if first else []
    # a killed run leaves Snakemake's lock behind; only this command runs here
    if any(Path(".snakemake/locks").glob("*")):     # (a Snakemake start of its own only when there is one)
        _sh("snakemake", "--unlock", "--configfile", config, "--quiet", "all", capture=True)
    subprocess.run(["snakemake", "--cores", args.cores, "--set-threads", *one_thread, "--configfile", config,
                    "--keep-going", "--rerun-incomplete", *prioritize, "--", *families], check=True)


def _snapshot(args) -> None:
    from memcap import suite

    scales, families = _plan(args)
    counts = suite.snapshot(scales, families)
    print(f"{counts['results']} finished results and {counts['checkpoints']} checkpoints of "
          + ", ".join(f"{f} at {scales[f]}" for f in families))
    parquets = [str(p) for p in suite.WIP.rglob("*.parquet")]
    if parquets:   # published results name the code that made them
        _sh(sys.executable, "-m", "memcap", "provenance", "check", "--quiet", *parquets)
    _sh("dvc", "add", "--quiet", str(suite.WIP))
    _sh("dvc", "push", "--quiet", "--remote", "published", f"{suite.WIP}.dvc")
    print(f"tracked by {suite.WIP}.dvc and pushed to the published remote: commit {suite.WIP}.dvc")


def _finish(args) -> None:
    from memcap import suite

    _restore()
    scales, families = _plan(args)
    config = _config(scales)
    # refuse while any training job is left: finish only aggregates what the runs produced
    rules = [r for f in families for r in suite.TRAIN_RULES.get(f, [])]
    dry = _sh("snakemake", "-n", "--configfile", config, "--quiet", "rules", "--", *families, capture=True)
    left = sorted({line.strip() for line in dry.splitlines() if re.match(rf"^({'|'.join(rules)})\s", line)})
    if left:
        sys.exit("memcap suite: not finished; training jobs left (rule, count):\n  " + "\n  ".join(left)
                 + f"\n  continue with: memcap suite run {' '.join(families)}")
    scale = suite.set_scale(scales, families)
    print(f"params.yaml: scale: {scale}")
    # `dvc repro` would delete theory's (non-persist) tables and retrain its GD cases: Snakemake
    # aggregates the finished runs and `dvc commit` records exactly what it made
    _sh("snakemake", "--cores", args.cores, "--quiet", "rules", "--", *families)
    _sh("dvc", "repro", "--quiet", "params")
    _sh("dvc", "commit", "--force", "--quiet", *families)
    # stages that read the new results (theory's Fig 3 reads MLT's attention files): only their jobs
    # that read them rerun
    later = suite.downstream(families)
    if later:
        _sh("snakemake", "--cores", args.cores, "--quiet", "rules", "--", *later)
        _sh("dvc", "commit", "--force", "--quiet", *later)
    print(f"recorded {' '.join(families + later)} in dvc.lock; next: dvc repro (the report), make publish, then "
          f"commit params.yaml, dvc.lock and published/ (and remove {suite.WIP}.dvc)")
